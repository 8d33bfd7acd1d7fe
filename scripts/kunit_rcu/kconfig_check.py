# SPDX-License-Identifier: GPL-2.0
"""CFG-1 on built .config files: RCU's specialist options behind RCU_EXPERT, ours behind KUNIT.

The specialist options are the entries of kernel/rcu/Kconfig* in the
pristine tree whose prompt needs RCU_EXPERT, directly or through another
such option (RCU_BOOST_DELAY through RCU_BOOST).  They are read from the
pristine text, so a patch that drops a gate is caught rather than learnt.
On a build's .config RCU_EXPERT must be n, and then each of them must
have no visible prompt (no "# CONFIG_X is not set" line, not listed by
"make listnewconfig") and its default value ("make olddefconfig" on the
.config without its line gives back the same line).  An option whose
pristine dependency opens it without RCU_EXPERT in that config
(RCU_NOCB_CPU under NO_HZ_FULL) is exempt, with a note.  The project's
options (the config entries the series adds to Kconfig files) must leave
no line at all, not even "is not set", once "make olddefconfig" runs on
the .config without KUNIT and without their lines: no prompt, no value
unless KUNIT.  The make runs use a temporary O= dir, never the tree.
"""

import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from . import kbuild, locks
from .common import load_tooling_result
from .common import (UserError, build_dir, git, load_config, log, read_config, results_dir,
		     tree_dir)
from .common import _SET, _UNSET
from .common import run as run_cmd

NAME = 'kconfig_check'
COVERS = ('CFG-1',)
# Written into results/<arch>-<config>/ for each checked build; the matrix reads -default's.
RESULT_FILE = 'kconfig-check.json'
EXPERT = 'RCU_EXPERT'
RCU_KCONFIGS = ('kernel/rcu/Kconfig', 'kernel/rcu/Kconfig.debug')
# The tag of the prepared tree's pristine Debian source (prepare.py).
PRISTINE = 'pristine'

# make <target> on a .config text -> (make's output, the .config it leaves).
Kconfig = Callable[[str, str], Tuple[str, str]]


# --- Kconfig text ---------------------------------------------------------

@dataclass
class Entry:
	"""One definition of a config symbol: has it a prompt, and when is that prompt visible."""
	name: str
	prompt: bool = False
	conds: List[str] = field(default_factory=list)  # ANDed: depends on, prompt if, enclosing if/menu

	def cond(self) -> str:
		return _join(self.conds, '&&') or 'y'


def _join(exprs: Sequence[str], op: str) -> str:
	"""exprs joined by op, each parenthesised when there are several."""
	if len(exprs) == 1:
		return exprs[0]
	return f' {op} '.join(f'({e})' for e in exprs)


_ENTRY = re.compile(r'^(?:menu)?config\s+(\w+)$')
_STRING = r'"(?:[^"\\]|\\.)*"|\'[^\']*\''
_PROMPT = re.compile(rf'^(?:bool|tristate|int|hex|string|prompt)\s+({_STRING})(?:\s+if\s+(.+))?$')
_DEPENDS = re.compile(r'^depends\s+on\s+(.+)$')
_HELP = re.compile(r'^(?:help|---help---)$')


def _strip_comment(line: str) -> str:
	"""line without a trailing # comment (a # inside quotes stays)."""
	quote = ''
	for i, ch in enumerate(line):
		if quote:
			if ch == quote:
				quote = ''
		elif ch in '"\'':
			quote = ch
		elif ch == '#':
			return line[:i]
	return line


def _indent(line: str) -> int:
	return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def parse_kconfig(text: str) -> Dict[str, List[Entry]]:
	"""symbol -> its definitions in one Kconfig file's text (sourced files are not followed)."""
	entries: Dict[str, List[Entry]] = {}
	frames: List[List[str]] = []  # conditions of the enclosing if / menu / choice blocks
	current: Optional[List[str]] = None  # where a "depends on" line goes
	entry: Optional[Entry] = None
	help_at: Optional[int] = None  # indentation of the help keyword while in help text
	help_indent: Optional[int] = None
	lines = text.replace('\\\n', ' ').splitlines()
	for raw in lines:
		if help_at is not None:
			if not raw.strip():
				continue
			if help_indent is None and _indent(raw) > help_at:
				help_indent = _indent(raw)
			if help_indent is not None and _indent(raw) >= help_indent:
				continue
			help_at = help_indent = None
		line = _strip_comment(raw).strip()
		if not line:
			continue
		word = line.split()[0]
		m = _ENTRY.match(line)
		if m:
			entry = Entry(m.group(1), conds=[c for f in frames for c in f])
			entries.setdefault(entry.name, []).append(entry)
			current = entry.conds
		elif word in ('if', 'menu', 'choice'):
			frames.append([line[3:].strip()] if word == 'if' else [])
			entry, current = None, frames[-1]
		elif word in ('endif', 'endmenu', 'endchoice'):
			if frames:
				frames.pop()
			entry = current = None
		elif word in ('comment', 'source', 'mainmenu', 'rsource', 'osource', 'orsource'):
			entry = current = None
		elif _HELP.match(line):
			help_at = _indent(raw)
		elif _DEPENDS.match(line) and current is not None:
			current.append(_DEPENDS.match(line).group(1).strip())
		elif entry is not None:
			p = _PROMPT.match(line)
			if p:
				entry.prompt = True
				if p.group(2):
					entry.conds.append(p.group(2).strip())
	return entries


def merge(*tables: Dict[str, List[Entry]]) -> Dict[str, List[Entry]]:
	out: Dict[str, List[Entry]] = {}
	for table in tables:
		for name, defs in table.items():
			out.setdefault(name, []).extend(defs)
	return out


def visibility(defs: Sequence[Entry]) -> str:
	"""When any prompt of the symbol is visible (its prompted definitions, ORed)."""
	return _join([d.cond() for d in defs if d.prompt], '||') or 'n'


def expert_gated(entries: Dict[str, List[Entry]], expert: str = EXPERT) -> Dict[str, str]:
	"""Prompted symbols whose prompt needs expert, directly or through another such symbol.

	symbol -> what gates it in its own condition: expert, or the gated
	symbol it depends on (RCU_BOOST_DELAY -> RCU_BOOST).
	"""
	gated: Dict[str, str] = {}
	changed = True
	while changed:
		changed = False
		for name, defs in sorted(entries.items()):
			if name in gated or name == expert or not any(d.prompt for d in defs):
				continue
			names = symbols(parse_expr(visibility(defs)))
			via = expert if expert in names else next(
				(s for s in sorted(names) if s in gated), None)
			if via:
				gated[name] = via
				changed = True
	return gated


def added_configs(diff: str) -> List[str]:
	"""The config symbols a unified diff of Kconfig files adds (not those it only moves)."""
	added = re.findall(r'^\+[ \t]*(?:menu)?config[ \t]+(\w+)[ \t]*$', diff, re.M)
	removed = set(re.findall(r'^-[ \t]*(?:menu)?config[ \t]+(\w+)[ \t]*$', diff, re.M))
	return sorted(set(added) - removed)


# --- Kconfig expressions ------------------------------------------------

_TOKEN = re.compile(rf'\s*(&&|\|\||!=|<=|>=|[!()=<>]|{_STRING}|[\w.-]+)')
_NUMBER = re.compile(r'^(-?\d+|0[xX][0-9a-fA-F]+)$')


def _tokens(text: str) -> List[str]:
	out, pos = [], 0
	text = text.rstrip()
	while pos < len(text):
		m = _TOKEN.match(text, pos)
		if not m:
			raise ValueError(f'cannot read Kconfig expression "{text}" at "{text[pos:]}"')
		out.append(m.group(1))
		pos = m.end()
	return out


def parse_expr(text: str) -> tuple:
	"""A Kconfig expression as a tree: ('sym', name), ('str', text), ('not', e),
	('and', a, b), ('or', a, b), ('cmp', op, a, b)."""
	toks = _tokens(text)
	pos = 0

	def peek() -> str:
		return toks[pos] if pos < len(toks) else ''

	def take() -> str:
		nonlocal pos
		pos += 1
		return toks[pos - 1]

	def disjunction() -> tuple:
		e = conjunction()
		while peek() == '||':
			take()
			e = ('or', e, conjunction())
		return e

	def conjunction() -> tuple:
		e = unary()
		while peek() == '&&':
			take()
			e = ('and', e, unary())
		return e

	def unary() -> tuple:
		if peek() == '!':
			take()
			return ('not', unary())
		if peek() == '(':
			take()
			e = disjunction()
			if peek() != ')':
				raise ValueError(f'unbalanced parentheses in "{text}"')
			take()
			return e
		left = atom()
		if peek() in ('=', '!=', '<', '<=', '>', '>='):
			op = take()
			return ('cmp', op, left, atom())
		return left

	def atom() -> tuple:
		if peek() in ('', '&&', '||', ')', '(', '!'):
			raise ValueError(f'cannot read Kconfig expression "{text}"')
		tok = take()
		if tok[0] in '"\'':
			return ('str', tok[1:-1])
		return ('sym', tok)

	tree = disjunction()
	if pos != len(toks):
		raise ValueError(f'cannot read Kconfig expression "{text}" at "{" ".join(toks[pos:])}"')
	return tree


def symbols(expr: tuple) -> Set[str]:
	if expr[0] == 'sym':
		return {expr[1]}
	if expr[0] == 'str':
		return set()
	return set().union(*(symbols(e) for e in expr[1:] if isinstance(e, tuple)))


_TRI = {'y': 2, 'm': 1}


def _string(expr: tuple, values: Dict[str, str]) -> str:
	if expr[0] == 'str':
		return expr[1]
	name = expr[1]
	if name in values:
		return values[name]
	return name if name in ('y', 'm', 'n') or _NUMBER.match(name) else 'n'


def evaluate(expr: tuple, values: Dict[str, str]) -> int:
	"""expr's tristate (0 n, 1 m, 2 y) with a .config's values (read_config); absent is n."""
	kind = expr[0]
	if kind == 'not':
		return 2 - evaluate(expr[1], values)
	if kind == 'and':
		return min(evaluate(expr[1], values), evaluate(expr[2], values))
	if kind == 'or':
		return max(evaluate(expr[1], values), evaluate(expr[2], values))
	if kind == 'cmp':
		op, a, b = expr[1], _string(expr[2], values), _string(expr[3], values)
		if _NUMBER.match(a) and _NUMBER.match(b):
			x, y = int(a, 0), int(b, 0)
		elif op in ('=', '!='):
			x, y = (0, 0) if a == b else (0, 1)
		else:
			x, y = a, b
		result = {'=': x == y, '!=': x != y, '<': x < y, '<=': x <= y,
			  '>': x > y, '>=': x >= y}[op]
		return 2 if result else 0
	return _TRI.get(_string(expr, values), 0)


# --- .config files ------------------------------------------------------

def without(text: str, names: Iterable[str]) -> str:
	"""A .config text without the lines of names (set or "is not set")."""
	drop = set(names)
	kept = []
	for line in text.splitlines():
		m = _SET.match(line.strip()) or _UNSET.match(line.strip())
		if not (m and m.group(1) in drop):
			kept.append(line)
	return '\n'.join(kept) + '\n'


def listed(output: str) -> Set[str]:
	"""The symbols "make listnewconfig" names (one CONFIG_X=default line each)."""
	return set(re.findall(r'^CONFIG_(\w+)=', output, re.M))


def shown(name: str, value: Optional[str]) -> str:
	"""A symbol's value as its .config line says it."""
	if value is None:
		return f'no CONFIG_{name} line'
	if value == 'n':
		return f'"# CONFIG_{name} is not set"'
	return f'CONFIG_{name}={value}'


# --- The check on one .config ---------------------------------------------

@dataclass
class Outcome:
	"""What the check found on one build's .config."""
	arch: str
	config: str
	path: str
	problems: List[str] = field(default_factory=list)
	notes: List[str] = field(default_factory=list)
	specialist: Dict[str, str] = field(default_factory=dict)  # checked symbol -> its gate
	project: List[str] = field(default_factory=list)

	@property
	def ok(self) -> bool:
		return not self.problems

	def where(self) -> str:
		return f'ARCH={self.arch} CONFIG={self.config} ({self.path})'


def check_config(text: str, out: Outcome, entries: Dict[str, List[Entry]],
		 project: Sequence[str], kconfig: Kconfig) -> Outcome:
	"""Checks a .config text against CFG-1; adds to out's problems and notes.

	entries: the pristine RCU Kconfig entries; project: the project's
	symbols; kconfig runs listnewconfig / olddefconfig on a .config text.
	"""
	values = read_config(text)
	where = out.where()
	gated = expert_gated(entries)
	out.project = sorted(project)
	if not gated:
		out.problems.append(f'no RCU_EXPERT-gated option found in pristine {", ".join(RCU_KCONFIGS)}:'
				    ' is the tree prepared (make prepare)?')
	if not project:
		out.problems.append('no Kconfig option of the project found (git diff pristine in the '
				    'prepared tree): is the tree prepared (make prepare)?')
	if values.get(EXPERT, 'n') != 'n':
		out.problems.append(f'CONFIG_{EXPERT}: {where} has {shown(EXPERT, values[EXPERT])}, '
				    f'expected "# CONFIG_{EXPERT} is not set": specialist RCU options '
				    'are open to the user there (not checked further)')
	elif gated:
		stripped = without(text, gated)
		new = listed(kconfig('listnewconfig', stripped)[0])
		defaults = read_config(kconfig('olddefconfig', stripped)[1])
		for name, via in sorted(gated.items()):
			cond = visibility(entries[name])
			gate = EXPERT if via == EXPERT else f'{EXPERT} through {via}'
			if evaluate(parse_expr(cond), defaults):
				out.notes.append(f'CONFIG_{name} has a prompt without {EXPERT} in {where}: '
						 f'its pristine dependency ({cond}) holds there; not checked')
				continue
			out.specialist[name] = via
			actual, default = values.get(name), defaults.get(name)
			seen = []
			if actual == 'n':
				seen.append(f'the .config has "# CONFIG_{name} is not set"')
			if name in new:
				seen.append('make listnewconfig lists it')
			if seen:
				out.problems.append(f'CONFIG_{name} (gated by {gate}) has a visible prompt in '
						    f'{where} with {EXPERT}=n: expected none, but '
						    + ' and '.join(seen))
			if (actual or 'n') != (default or 'n'):
				out.problems.append(f'CONFIG_{name} (gated by {gate}) is not at its default '
						    f'in {where}: expected {shown(name, default)} (the '
						    f'default with {EXPERT}=n), got {shown(name, actual)}')
	if project:
		after = read_config(kconfig('olddefconfig', without(text, ['KUNIT', *project]))[1])
		if after.get('KUNIT', 'n') != 'n':
			out.problems.append(f'CONFIG_KUNIT: stays {shown("KUNIT", after["KUNIT"])} in '
					    f'{where} without its line (selected?), expected no line; '
					    'the project options were not checked without KUNIT')
		else:
			for name in project:
				if name in after:
					why = ('has a prompt' if after[name] == 'n' else 'gets a value')
					out.problems.append(
						f'CONFIG_{name} (the project\'s) {why} without KUNIT in {where}: '
						f'expected no CONFIG_{name} line after make olddefconfig '
						f'without CONFIG_KUNIT, got {shown(name, after[name])}')
	return out


# --- The prepared tree and its builds -------------------------------------

def pristine_entries(tree: str) -> Dict[str, List[Entry]]:
	"""The Kconfig entries of kernel/rcu/Kconfig* as the pristine tree has them."""
	if not git(tree, 'rev-parse', '--verify', '-q', PRISTINE + '^{commit}', check=False).strip():
		raise UserError(f'no tag {PRISTINE} in {tree}: run make prepare')
	return merge(*(parse_kconfig(git(tree, 'show', f'{PRISTINE}:{path}'))
		       for path in RCU_KCONFIGS))


def project_options(tree: str) -> List[str]:
	"""The config symbols the series and overlay add to the tree's Kconfig files."""
	return added_configs(git(tree, 'diff', PRISTINE, '--', ':(glob)**/Kconfig*'))


def make_kconfig(tree: str, arch: str, out: str) -> Kconfig:
	"""Runs make ARCH=arch O=out <target> in tree on a .config text; conf gets built in out."""
	env = kbuild.build_env(arch=arch)  # the compilers the builds saw (Kconfig asks $(CC))
	cmd = kbuild.make_cmd(arch, out) + ['-s']

	def run(target: str, text: str) -> Tuple[str, str]:
		os.makedirs(out, exist_ok=True)
		path = os.path.join(out, '.config')
		with open(path, 'w') as f:
			f.write(text)
		proc = run_cmd(cmd + [target], cwd=tree, env=env, check=False)
		if proc.returncode != 0:
			raise UserError(f'{" ".join(cmd + [target])} failed in {tree}:\n'
					+ proc.stdout[-2000:])
		with open(path) as f:
			return proc.stdout, f.read()
	return run


def _run_hint(arch: str, config: str) -> str:
	return f'make run ARCH={arch}' + ('' if config == 'default' else f' CONFIG={config}')


def _stale(tree: str, arch: str, config: str, build: str) -> bool:
	"""Was build's kernel not built from the current tree and config (or not at all)?"""
	try:
		with open(os.path.join(build, kbuild.STAMP)) as f:
			stamp = (f.read().split() or [''])[0]
		return stamp != kbuild.build_fingerprint(tree, arch, load_config(config))
	except (OSError, UserError):
		return True


def check_build(arch: str, config: str, work: str) -> Outcome:
	"""CFG-1 on the .config of make run's build for (arch, config); make runs in work/<arch>."""
	tree = tree_dir()
	build = build_dir(arch, config, False)
	path = os.path.join(build, '.config')
	out = Outcome(arch, config, os.path.relpath(path, os.path.dirname(tree)))
	if not os.path.isfile(path):
		out.problems.append(f'no {path} for ARCH={arch} CONFIG={config}: '
				    f'{_run_hint(arch, config)} creates it')
		return out
	with open(path) as f:
		text = f.read()
	if _stale(tree, arch, config, build):
		out.notes.append(f'{path} is not from a finished build of the current tree and '
				 f'config; checked anyway ({_run_hint(arch, config)} refreshes it)')
	try:
		check_config(text, out, pristine_entries(tree), project_options(tree),
			     make_kconfig(tree, arch, os.path.join(work, arch)))
	except (UserError, ValueError) as e:
		out.problems.append(f'{out.where()}: {e}')
	return out


def write_result(out: Outcome, seconds: float) -> str:
	"""results/<arch>-<config>/kconfig-check.json, which the matrix reads for CONFIG=default."""
	outdir = results_dir(out.arch, out.config, False)
	os.makedirs(outdir, exist_ok=True)
	path = os.path.join(outdir, RESULT_FILE)
	with open(path, 'w') as f:
		json.dump({'check': NAME, 'covers': list(COVERS), 'arch': out.arch,
			   'config': out.config, 'config_file': out.path,
			   'status': 'passed' if out.ok else 'failed', 'problems': out.problems,
			   'notes': out.notes, 'specialist_options': out.specialist,
			   'project_options': out.project, 'seconds': round(seconds, 1)}, f, indent=1)
	return path


def check_builds(runs: Sequence[Tuple[str, str]]) -> Tuple[int, int, int]:
	"""make check's "Kconfig rules (CFG-1)" line: one result per build dir.

	A config without Kconfig lines boots the default build (ghost): its
	.config is the default one, checked once.
	"""
	passed = failed = 0
	work = tempfile.mkdtemp(prefix='kunit-rcu-kconfig-')
	seen: Dict[str, str] = {}
	try:
		for arch, config in runs:
			build = build_dir(arch, config, False)
			if build in seen:
				log(f'kconfig ARCH={arch} CONFIG={config}: the build of {seen[build]}, '
				    'checked above')
				continue
			seen[build] = f'ARCH={arch} CONFIG={config}'
			start = time.monotonic()
			# The build dir's lock also guards its results dir; the tree's, its Kconfig.
			with locks.build(build_dir(arch, config, False)), locks.tree():
				out = check_build(arch, config, work)
				write_result(out, time.monotonic() - start)
			for note in out.notes:
				log('note: ' + note)
			for problem in out.problems:
				log('FAIL: ' + problem)
			if out.ok:
				log(f'kconfig ARCH={arch} CONFIG={config}: {EXPERT}=n, '
				    f'{len(out.specialist)} specialist RCU options hidden and at their '
				    f'defaults, {len(out.project)} project options absent without KUNIT '
				    f'({time.monotonic() - start:.0f}s)')
			passed += out.ok
			failed += not out.ok
	finally:
		shutil.rmtree(work, ignore_errors=True)
	return passed, failed, 0


def load_result(arch: str) -> Optional[dict]:
	"""The check's result for ARCH=arch CONFIG=default; None if not run since the last make run."""
	return load_tooling_result(arch, RESULT_FILE)
