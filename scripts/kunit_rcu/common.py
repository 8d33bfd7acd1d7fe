# SPDX-License-Identifier: GPL-2.0
"""Paths, settings, configs (configs/<name>.config) and the error type shared by every kunit-rcu stage."""

import json
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Directories of the repository that are copied onto the kernel tree.  One
# that does not exist (yet) is simply empty.  Suites under an arch's
# ARCHES[...]['suite_dirs'] are expected on that arch only (sources.suites_for).
OVERLAY_DIRS = ('kernel/rcu', 'arch/x86/kernel', 'arch/arm64/kernel', 'lib/kunit-rcu')

ARCHES = {
	'x86_64': {'cross_compile': None, 'cc': 'gcc', 'suite_dirs': ('arch/x86/',)},
	'arm64': {'cross_compile': 'aarch64-linux-gnu-',
		  'cc': 'aarch64-linux-gnu-gcc', 'suite_dirs': ('arch/arm64/',)},
}

TARBALL = '/usr/src/linux-source-6.1.tar.xz'
PACKAGE = 'linux-source-6.1'


class UserError(Exception):
	"""A failure the user can act on: the message says what and how."""


# The runs make check does besides CONFIG=default on each arch, in order:
# every config that a matrix cell or a "May skip:" line relies on.
CHECK_CONFIG_RUNS = tuple((arch, config) for config in ('ghost', 'nopreempt', 'nohz')
			  for arch in ('x86_64', 'arm64'))


def cache_dir() -> str:
	return os.path.abspath(os.environ.get('KUNIT_RCU_CACHE') or
			       os.path.expanduser('~/.cache/kunit-rcu'))


def expected_version() -> str:
	with open(os.path.join(REPO, 'KERNEL_VERSION')) as f:
		return f.read().strip()


def version_dir() -> str:
	"""Per Debian version, so trying another one never wipes the tested tree."""
	return os.path.join(cache_dir(), os.environ.get('KUNIT_RCU_ALLOW_VERSION') or
			    expected_version())


def tree_dir() -> str:
	return os.path.join(version_dir(), 'src')


def apply_dir() -> str:
	return os.path.join(version_dir(), 'apply')


def scratch_dir() -> str:
	return os.path.join(version_dir(), 'scratch')


def build_dir(arch: str, config: str, extra: bool) -> str:
	"""kunit.py's build dir for a run: a direct child of the tree it builds.

	In the prepared tree src/ (or, with EXTRA_PATCHES, in scratch/):
	.kunit for x86_64 and .kunit-arm64 for arm64 with CONFIG=default
	and with any config that has no Kconfig lines (it only changes the
	kernel's or QEMU's arguments), .kunit-<arch>-<config> otherwise.  A plain
	"kunit.py run --arch=x86_64" in src/ (or, for arm64, with
	--build_dir=.kunit-arm64) reuses make run's build.  As a direct child,
	kbuild's srctree is "..", so every path on a compiler command line is
	relative and the same in src/ and scratch/: scratch builds hit the
	ccache entries of the prepared tree's builds.
	"""
	tree = scratch_dir() if extra else tree_dir()
	if config != 'default' and _boots_default_kernel(config):
		config = 'default'
	if config == 'default':
		name = '.kunit' if arch == 'x86_64' else '.kunit-' + arch
	else:
		name = f'.kunit-{arch}-{config}'
	return os.path.join(tree, name)


def _boots_default_kernel(config: str) -> bool:
	"""A config without Kconfig lines (only kernel or QEMU arguments) builds the default kernel."""
	try:
		return not load_config(config).kconfig
	except UserError:
		return False


def results_dir(arch: str, config: str, extra: bool) -> str:
	base = os.environ.get('KUNIT_RCU_RESULTS') or os.path.join(REPO, 'results')
	name = f'{arch}-{config}' + ('-extra' if extra else '')
	return os.path.join(os.path.abspath(base), name)


def load_tooling_result(arch: str, name: str) -> Optional[dict]:
	"""A tooling check's result file name in results/<arch>-default; None if absent or unreadable.

	The Kconfig rules and the flavor-API check write there; a make run of
	that arch clears the directory, so None also means "not run since".
	"""
	try:
		with open(os.path.join(results_dir(arch, 'default', False), name)) as f:
			return json.load(f)
	except (OSError, ValueError):
		return None


def check_arch(arch: str) -> None:
	if arch not in ARCHES:
		raise UserError(f'unknown ARCH "{arch}": use one of '
				f'{", ".join(sorted(ARCHES))} (e.g. make run ARCH=arm64)')


def configs_dir() -> str:
	return os.path.join(REPO, 'configs')


def config_names() -> List[str]:
	"""The names of configs/*.config, sorted."""
	return sorted(n[:-len('.config')] for n in os.listdir(configs_dir())
		      if n.endswith('.config'))


# A Kconfig line as kunit.py's kunit_config.py parses it.
_KCONFIG_LINE = re.compile(r'^(CONFIG_\w+=(\S+|".*")|# CONFIG_\w+ is not set)$')
# "# key: value" or "# key[arch]: value" in a comment line.
_DIRECTIVE = re.compile(r'^#\s*([\w-]+)(?:\[([^\]]*)\])?:\s*(.*)$')
# Comment keys that look like a misspelt directive (kernel_args, arch, ...).
_LOOKS_LIKE_DIRECTIVE = re.compile(r'^(arch\w*|kernel[-_]\w*|qemu[-_]\w*)$')
DIRECTIVES = ('arches', 'kernel-args', 'qemu-args')


@dataclass
class Config:
	"""configs/<name>.config, resolved: what its builds and boots take.

	kconfig: the Kconfig lines, passed as --kconfig_add on every arch;
	kernel_args / qemu_args: per arch in arches, the general directive's
	words followed by the arch-specific one's.
	"""
	name: str
	path: str
	kconfig: List[str] = field(default_factory=list)
	arches: List[str] = field(default_factory=lambda: list(ARCHES))
	kernel_args: Dict[str, List[str]] = field(default_factory=dict)
	qemu_args: Dict[str, List[str]] = field(default_factory=dict)

	def check_arch(self, arch: str) -> None:
		"""Raises UserError unless the config applies to arch."""
		check_arch(arch)
		if arch not in self.arches:
			raise UserError(f'CONFIG={self.name} does not apply to ARCH={arch}: '
					f'configs/{self.name}.config says "# arches: '
					f'{" ".join(self.arches)}"; run it with ARCH={self.arches[0]}'
					' or add the arch to that line')

	def kernel_args_for(self, arch: str) -> List[str]:
		return list(self.kernel_args.get(arch, []))

	def qemu_args_for(self, arch: str) -> List[str]:
		return list(self.qemu_args.get(arch, []))


def _unknown_config(name: str) -> UserError:
	return UserError(f'unknown CONFIG "{name}": no configs/{name}.config; '
			 f'use one of {", ".join(config_names())} or add that file')


def _bad_line(path: str, lineno: int, line: str, why: str) -> UserError:
	return UserError(f'{os.path.relpath(path, REPO)} line {lineno}: {why}: {line}')


def parse_config(name: str, path: str, text: str) -> Config:
	"""A Config from the text of configs/<name>.config (Kconfig lines, comment directives)."""
	kconfig: List[str] = []
	arches: Optional[List[str]] = None
	# directive -> (lineno, arch or None, words), in file order
	args: Dict[str, List[Tuple[int, Optional[str], List[str]]]] = {
		'kernel-args': [], 'qemu-args': []}
	for lineno, raw in enumerate(text.splitlines(), 1):
		line = raw.strip()
		if not line:
			continue
		if _KCONFIG_LINE.match(line):
			kconfig.append(line)
			continue
		if not line.startswith('#'):
			raise _bad_line(path, lineno, line, 'not a Kconfig line (write CONFIG_X=y '
					'or "# CONFIG_X is not set")')
		m = _DIRECTIVE.match(line)
		if not m:
			continue  # a comment
		key, arch, value = m.group(1), m.group(2), m.group(3).strip()
		if key not in DIRECTIVES:
			if _LOOKS_LIKE_DIRECTIVE.match(key) or arch is not None:
				raise _bad_line(path, lineno, line, f'unknown directive "{key}" (known: '
						'arches, kernel-args[ARCH], qemu-args[ARCH])')
			continue  # a comment with a colon in it
		if arch is not None and arch not in ARCHES:
			raise _bad_line(path, lineno, line, f'unknown ARCH "{arch}" '
					f'(use one of {", ".join(sorted(ARCHES))})')
		if key == 'arches':
			if arch is not None or arches is not None:
				raise _bad_line(path, lineno, line, 'one "# arches:" line, without [ARCH]')
			arches = value.replace(',', ' ').split()
			if not arches or any(a not in ARCHES for a in arches):
				raise _bad_line(path, lineno, line, '"arches" must name some of '
						+ ', '.join(sorted(ARCHES)))
			continue
		try:
			# Kernel parameters are plain words; QEMU arguments shell words.
			words = shlex.split(value) if key == 'qemu-args' else value.split()
		except ValueError as e:
			raise _bad_line(path, lineno, line, str(e))
		args[key].append((lineno, arch, words))
	applies = arches or list(ARCHES)
	per_arch: Dict[str, Dict[str, List[str]]] = {}
	for key, entries in args.items():
		per_arch[key] = {a: [] for a in applies}
		for lineno, arch, words in entries:
			if arch is not None and arch not in applies:
				raise UserError(f'{os.path.relpath(path, REPO)} line {lineno}: {key}[{arch}], '
						f'but the config applies only to {" ".join(applies)} '
						'(its "# arches:" line)')
		# The general line's words first, then the arch's own.
		for lineno, arch, words in sorted(entries, key=lambda e: e[1] is not None):
			for a in ([arch] if arch else applies):
				per_arch[key][a] += words
	return Config(name=name, path=path, kconfig=kconfig, arches=applies,
		      kernel_args=per_arch['kernel-args'], qemu_args=per_arch['qemu-args'])


def load_config(name: str) -> Config:
	"""configs/<name>.config as a Config; UserError for an unknown name or a bad line."""
	path = os.path.join(configs_dir(), name + '.config')
	if not re.fullmatch(r'[\w.+-]+', name or '') or not os.path.isfile(path):
		raise _unknown_config(name)
	with open(path) as f:
		return parse_config(name, path, f.read())


class Stage:
	"""Prints a stage's start and its elapsed time when it ends."""

	def __init__(self, name: str, timings: Optional[dict] = None):
		self.name = name
		self.timings = timings

	def __enter__(self):
		self.start = time.monotonic()
		log(f'[{self.name}] ...')
		return self

	def __exit__(self, exc_type, exc, tb):
		elapsed = time.monotonic() - self.start
		if self.timings is not None:
			self.timings[self.name] = round(elapsed, 1)
		state = 'done' if exc_type is None else 'FAILED'
		log(f'[{self.name}] {state} in {elapsed:.1f}s')
		return False


def patch_reasons(path: str) -> Dict[str, str]:
	"""'<patch file name>: <reason>' lines of path ('#' starts a comment); {} without it."""
	out: Dict[str, str] = {}
	try:
		with open(path) as f:
			for lineno, line in enumerate(f, 1):
				line = line.split('#', 1)[0].strip()
				if not line:
					continue
				name, sep, reason = line.partition(':')
				if not sep or not reason.strip():
					raise UserError(f'{path} line {lineno}: write '
							'"<patch file name>: <reason>"')
				out[name.strip()] = reason.strip()
	except FileNotFoundError:
		pass
	return out


def log(msg: str) -> None:
	print(f'kunit-rcu: {msg}', flush=True)


def run(cmd: Sequence[str], cwd: Optional[str] = None, check: bool = True,
	env: Optional[dict] = None) -> subprocess.CompletedProcess:
	"""Runs cmd; returns its output; raises with the output if check fails."""
	proc = subprocess.run(list(cmd), cwd=cwd, env=env, text=True,
			      errors='backslashreplace', stdout=subprocess.PIPE,
			      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
	if check and proc.returncode != 0:
		raise subprocess.CalledProcessError(proc.returncode, list(cmd), proc.stdout)
	return proc


def git(tree: str, *args: str, check: bool = True) -> str:
	env = dict(os.environ, GIT_AUTHOR_NAME='kunit-rcu', GIT_AUTHOR_EMAIL='kunit-rcu@localhost',
		   GIT_COMMITTER_NAME='kunit-rcu', GIT_COMMITTER_EMAIL='kunit-rcu@localhost')
	return run(['git', '-C', tree, *args], check=check, env=env).stdout


_SET = re.compile(r'^CONFIG_(\w+)=(.*)$')
_UNSET = re.compile(r'^# CONFIG_(\w+) is not set$')


def read_config(text: str) -> Dict[str, str]:
	"""symbol -> value of a .config text: 'y', 'm', '64', 'text' (unquoted), 'n' for "is not set"."""
	out: Dict[str, str] = {}
	for line in text.splitlines():
		line = line.strip()
		m = _SET.match(line)
		if m:
			value = m.group(2)
			out[m.group(1)] = value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' \
				else value
			continue
		m = _UNSET.match(line)
		if m:
			out[m.group(1)] = 'n'
	return out


def build_config(build: str) -> Dict[str, str]:
	"""read_config() of a build dir's .config; {} if it has none."""
	try:
		with open(os.path.join(build, '.config'), errors='replace') as f:
			return read_config(f.read())
	except OSError:
		return {}
