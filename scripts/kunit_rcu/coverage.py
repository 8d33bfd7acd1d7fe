# SPDX-License-Identifier: GPL-2.0
"""gcov coverage from the QEMU guests: per-run collection, per-patch report, gate.

A default run (make run, no EXTRA_PATCHES) boots its kernel with
gcov_console_dump when the build has CONFIG_GCOV_CONSOLE_DUMP (patch
0007); the guest prints its gcov data twice (gcovdump).  collect() turns
the console into results/<arch>-default/coverage/: .gcda files next to
copies of their .gcno, per-line counts for "run" (during tests: after
the initcalls, where built-in KUnit runs) and "boot" (since boot: the
sum of both dumps), and lcov tracefiles.

report() attributes every C line the series and overlay add to the
prepared tree to its commit (attribution) and counts, per patch, the
lines gcov measured and how many ran during tests on each arch and on
either.  gate() is make check's verdict on that report.
"""

import html
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from . import attribution, gcovdump
from .common import (ARCHES, REPO, UserError, build_config, git, log, patch_reasons, results_dir,
		     tree_dir)
from .prepare import series_patches

KERNEL_ARG = 'gcov_console_dump'
DUMP_OPTION = 'GCOV_CONSOLE_DUMP'
PHASES = ('run', 'boot')  # during tests; since boot
GATE_PERCENT = 90.0
BASELINE_SLACK = 0.5  # percentage points
COVERAGE_DIR = os.path.join(REPO, 'coverage')
EXCEPTIONS = os.path.join(COVERAGE_DIR, 'exceptions')
BASELINE = os.path.join(COVERAGE_DIR, 'baseline.json')
SUMMARY = os.path.join(COVERAGE_DIR, 'SUMMARY.md')
BASELINE_GROUP = 'kernel/rcu/'

# What the coverage build profiles (patch 0008 and lib/kunit-rcu/Makefile).
INSTRUMENTED = ('kernel/rcu/', 'kernel/context_tracking.c', 'kernel/entry/common.c',
		'arch/x86/kernel/traps.c', 'arch/x86/kernel/nmi.c',
		'arch/arm64/kernel/entry-common.c', 'arch/arm64/kernel/debug-monitors.c',
		'lib/kunit-rcu/')

# Rows of the whole-file table: (label, files it holds).
GROUPS = (
	('kernel/rcu/', lambda p: p.startswith('kernel/rcu/') and not attribution.is_test_file(p)),
	('kernel/context_tracking.c', lambda p: p == 'kernel/context_tracking.c'),
	('kernel/entry/common.c', lambda p: p == 'kernel/entry/common.c'),
	('arch/x86/kernel/{traps,nmi}.c',
	 lambda p: p in ('arch/x86/kernel/traps.c', 'arch/x86/kernel/nmi.c')),
	('arch/arm64/kernel/{entry-common,debug-monitors}.c',
	 lambda p: p in ('arch/arm64/kernel/entry-common.c', 'arch/arm64/kernel/debug-monitors.c')),
	('lib/kunit-rcu/', lambda p: p.startswith('lib/kunit-rcu/')),
)

Counts = Dict[str, Dict[int, int]]  # tree-relative source -> line -> executions


def coverage_dir(arch: str) -> str:
	return os.path.join(results_dir(arch, 'default', False), 'coverage')


def report_dir() -> str:
	return os.path.join(os.path.dirname(results_dir('x86_64', 'default', False)), 'coverage')


def dump_wanted(config: str, extra: bool, build: str) -> bool:
	"""Only a plain default run collects coverage, and only from a build that can dump it."""
	if config != 'default' or extra:
		return False
	return build_config(build).get(DUMP_OPTION) == 'y'


def collect(arch: str, tree: str, build: str, console: str, outdir: str) -> dict:
	"""Decodes the run's gcov dump into outdir/coverage; returns (and writes) its status."""
	start = time.monotonic()
	out = os.path.join(outdir, 'coverage')
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	status = {'ok': False, 'error': '', 'arch': arch,
		  'tree_commit': git(tree, 'rev-parse', 'HEAD').strip()}
	try:
		dump = gcovdump.decode(console, build)
		for phase in ('init', 'run'):
			if phase not in dump:
				raise gcovdump.DumpError(
					f'the guest printed no gcov dump for phase "{phase}"'
					+ (' (it did not shut down normally)' if phase == 'run' else '')
					+ f': see {os.path.join(outdir, "console.log")}')
		tool = gcovdump.gcov_tool(arch)
		counts = {}
		for phase in ('init', 'run'):
			objdir = os.path.join(out, 'gcda-' + phase)
			gcovdump.write_objdir(dump[phase], build, objdir)
			counts[phase] = gcovdump.line_counts(tool, objdir, tree)
		lines = {'run': counts['run'], 'boot': gcovdump.add_counts(counts['init'], counts['run'])}
		for phase in PHASES:
			gcovdump.write_lcov(lines[phase], os.path.join(out, phase + '.info'),
					    f'{arch}_{phase}', tree)
		with open(os.path.join(out, 'lines.json'), 'w') as f:
			json.dump({phase: {path: {str(n): c for n, c in sorted(per.items())}
					   for path, per in sorted(lines[phase].items())}
				   for phase in PHASES}, f)
		status.update(ok=True, files=len(dump['run']))
	except (UserError, OSError, subprocess.CalledProcessError) as e:
		status['error'] = str(e)
	status['seconds'] = round(time.monotonic() - start, 2)
	with open(os.path.join(out, 'status.json'), 'w') as f:
		json.dump(status, f, indent=1)
	if status['ok']:
		run = load_counts(arch, 'run')
		ex, cov = _tally(run, [p for p in run if GROUPS[0][1](p)])
		log(f'coverage: {status["files"]} objects decoded in {status["seconds"]}s; '
		    f'kernel/rcu/ during tests {_pct(cov, ex)} ({cov}/{ex} lines)')
	else:
		log('coverage: error: ' + status['error'])
	return status


def load_counts(arch: str, phase: str = 'run') -> Counts:
	"""The per-line counts of arch's last default run; UserError if there are none."""
	d = coverage_dir(arch)
	try:
		with open(os.path.join(d, 'status.json')) as f:
			status = json.load(f)
	except OSError:
		raise UserError(f'no coverage for {arch}: run "make run ARCH={arch}" '
				'(CONFIG=default, no EXTRA_PATCHES) or "make coverage"') from None
	if not status.get('ok'):
		raise UserError(f'coverage of the last {arch} run is unusable: {status.get("error")}')
	with open(os.path.join(d, 'lines.json')) as f:
		data = json.load(f)[phase]
	return {path: {int(n): c for n, c in per.items()} for path, per in data.items()}


def _tally(counts: Counts, paths: Sequence[str]) -> Tuple[int, int]:
	executable = covered = 0
	for p in paths:
		for c in counts.get(p, {}).values():
			executable += 1
			covered += c > 0
	return executable, covered


def _pct(covered: int, executable: int) -> str:
	return f'{100.0 * covered / executable:.1f}%' if executable else 'n/a'


@dataclass
class Row:
	"""One patch's added or changed C lines, classified."""
	name: str
	subject: str
	executable: Dict[str, Set[Tuple[str, int]]] = field(default_factory=dict)  # arch -> lines
	covered: Dict[str, Set[Tuple[str, int]]] = field(default_factory=dict)
	noinstr: Set[Tuple[str, int]] = field(default_factory=set)
	unprofiled: Set[Tuple[str, int]] = field(default_factory=set)
	test_lines: int = 0

	def union(self) -> Tuple[Set[Tuple[str, int]], Set[Tuple[str, int]]]:
		ex: Set[Tuple[str, int]] = set()
		cov: Set[Tuple[str, int]] = set()
		for arch in self.executable:
			ex |= self.executable[arch]
			cov |= self.covered[arch]
		return ex, cov

	def uncovered(self) -> List[Tuple[str, int]]:
		ex, cov = self.union()
		return sorted(ex - cov)


def _profiled(path: str, counts: Dict[str, Counts]) -> bool:
	return path.startswith(INSTRUMENTED) or any(path in c for c in counts.values())


def classify(name: str, subject: str, files: Dict[str, Set[int]], tree: str,
	     counts: Dict[str, Counts]) -> Row:
	"""Sorts one patch's lines: gcov-measured (per arch), noinstr, unprofiled, test code."""
	row = Row(name, subject, {a: set() for a in counts}, {a: set() for a in counts})
	for path, lines in sorted(files.items()):
		if attribution.is_test_file(path):
			row.test_lines += len(lines)
			continue
		if not _profiled(path, counts):
			row.unprofiled |= {(path, n) for n in lines}
			continue
		measured = set()
		for arch, c in counts.items():
			per = c.get(path, {})
			for n in lines:
				if n in per:
					measured.add(n)
					row.executable[arch].add((path, n))
					if per[n] > 0:
						row.covered[arch].add((path, n))
		rest = lines - measured
		if rest:
			with open(os.path.join(tree, path), errors='replace') as f:
				noinstr = attribution.noinstr_lines(f.read())
			row.noinstr |= {(path, n) for n in rest & noinstr}
	return row


def patch_rows(tree: str, counts: Dict[str, Counts], rev: Optional[str] = None) -> List[Row]:
	"""One Row per patch of the series and one for the overlay, or one for REV.. ."""
	if rev:
		files = attribution.since_rev(rev, REPO, tree)
		return [classify(f'since {rev}', 'lines the project changed since ' + rev,
				 files, tree, counts)]
	commits = attribution.patch_lines(tree)
	names = [os.path.basename(p) for p in series_patches()] + ['overlay']
	if len(commits) != len(names):
		raise UserError(f'the prepared tree has {len(commits)} commits on top of pristine, '
				f'the series {len(names) - 1} patches and the overlay: run make prepare')
	return [classify(name, pl.subject, pl.files, tree, counts)
		for name, pl in zip(names, commits)]


def load_exceptions() -> Dict[str, str]:
	"""coverage/exceptions: '<patch file name>: <reason>' lines exempt a patch from the gate."""
	return patch_reasons(EXCEPTIONS)


def group_table(counts: Dict[str, Dict[str, Counts]]) -> List[dict]:
	"""Whole-file coverage per GROUPS row: {label, arch: (cov, ex), union: (cov, ex)} per phase."""
	rows = []
	for label, member in GROUPS:
		row = {'label': label}
		for phase in PHASES:
			union: Dict[Tuple[str, int], bool] = {}
			for arch, c in counts[phase].items():
				paths = [p for p in c if member(p)]
				ex, cov = _tally(c, paths)
				row[(phase, arch)] = (cov, ex)
				for p in paths:
					for n, k in c[p].items():
						union[(p, n)] = union.get((p, n), False) or k > 0
			row[(phase, 'union')] = (sum(union.values()), len(union))
		rows.append(row)
	return rows


def _cell(cov: int, ex: int) -> str:
	return f'{cov}/{ex} {_pct(cov, ex)}' if ex else '-'


def text_table(rows: List[Row], groups: List[dict], arches: Sequence[str]) -> str:
	head = f'{"patch":<56} {"lines":>5} ' + ' '.join(f'{a:>14}' for a in arches) + \
	       f' {"union":>14} {"noinstr":>7} {"unprof":>6}'
	out = ['per patch: added/changed C lines gcov measured, and how many ran during tests',
	       head, '-' * len(head)]
	for r in rows:
		ex, cov = r.union()
		out.append(f'{r.name[:56]:<56} {len(ex):>5} ' +
			   ' '.join(f'{_cell(len(r.covered[a]), len(r.executable[a])):>14}'
				    for a in arches) +
			   f' {_cell(len(cov), len(ex)):>14} {len(r.noinstr):>7} {len(r.unprofiled):>6}')
	out += ['', 'instrumented files as a whole (during tests | since boot)']
	for g in groups:
		out.append(f'  {g["label"]:<48} ' + ' '.join(
			f'{a}: {_cell(*g[("run", a)])} | {_pct(*g[("boot", a)])}'
			for a in list(arches) + ['union']))
	return '\n'.join(out)


def _gcov_page(path: str) -> str:
	return 'html/' + path + '.gcov.html'


def write_html(rows: List[Row], counts: Dict[str, Counts], tree: str, outdir: str) -> str:
	"""genhtml of every arch's "run" tracefile, and patches.html marking each patch's lines."""
	html_dir = os.path.join(outdir, 'html')
	shutil.rmtree(html_dir, ignore_errors=True)
	infos = [os.path.join(coverage_dir(a), 'run.info') for a in counts]
	if shutil.which('genhtml'):
		proc = subprocess.run(['genhtml', '--quiet', '--prefix', tree, '--title',
				       'kunit-rcu: during tests, ' + ' + '.join(counts),
				       '-o', html_dir, *infos], stdout=subprocess.PIPE,
				      stderr=subprocess.STDOUT, text=True)
		if proc.returncode != 0:
			raise UserError('genhtml failed:\n' + proc.stdout[-2000:])
	page = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>kunit-rcu coverage '
		'per patch</title><style>td{font-family:monospace;padding:0 .5em}'
		'.hit{background:#cfc}.miss{background:#fcc}.na{color:#888}</style></head><body>',
		'<h1>Lines each patch adds or changes, during tests</h1>']
	for r in rows:
		page.append(f'<h2>{html.escape(r.name)}</h2><p>{html.escape(r.subject)}</p><table>'
			    '<tr><th>line</th>' + ''.join(f'<th>{a}</th>' for a in counts) +
			    '<th>source</th></tr>')
		ex, _ = r.union()
		marked = sorted(ex | r.noinstr)
		for path, n in marked:
			cells = ''
			for a, c in counts.items():
				k = c.get(path, {}).get(n)
				cls = 'na' if k is None else ('hit' if k else 'miss')
				cells += f'<td class="{cls}">{"-" if k is None else k}</td>'
			try:
				with open(os.path.join(tree, path), errors='replace') as f:
					src = f.read().splitlines()[n - 1]
			except (OSError, IndexError):
				src = ''
			note = ' (noinstr: not instrumentable)' if (path, n) in r.noinstr else ''
			page.append(f'<tr><td><a href="{_gcov_page(path)}#{n}">{html.escape(path)}:{n}'
				    f'</a></td>{cells}<td>{html.escape(src)}{note}</td></tr>')
		page.append('</table>')
	page.append('</body></html>')
	out = os.path.join(outdir, 'patches.html')
	with open(out, 'w') as f:
		f.write('\n'.join(page))
	return out


def summary_md(rows: List[Row], groups: List[dict], arches: Sequence[str], tree: str) -> str:
	out = ['# Coverage per patch (generated by `make coverage`)', '',
	       f'Prepared tree {git(tree, "rev-parse", "--short", "HEAD").strip()}; arches: '
	       + ', '.join(arches) + '. "During tests": counters reset after the last initcall, '
	       'read at shutdown (the built-in KUnit suites). Lines: C lines the patch adds or '
	       'changes that gcov measured (noinstr lines have no counters: listed apart; '
	       '"unprofiled": lines in files the coverage build does not profile; test code '
	       'is not counted).', '',
	       '| patch | lines | ' + ' | '.join(arches) + ' | union | noinstr | unprofiled | '
	       'gate |', '|---|---:|' + '---:|' * len(arches) + '---:|---:|---:|---|']
	exceptions = load_exceptions()
	for r in rows:
		ex, cov = r.union()
		out.append(f'| {r.name} | {len(ex)} | ' + ' | '.join(
			_cell(len(r.covered[a]), len(r.executable[a])) for a in arches) +
			f' | {_cell(len(cov), len(ex))} | {len(r.noinstr)} | {len(r.unprofiled)} | '
			f'{_gate_word(r, exceptions)} |')
	out += ['', '## Instrumented files as a whole', '',
		'| files | ' + ' | '.join(f'{a} during tests' for a in arches) +
		' | union during tests | union since boot |',
		'|---|' + '---:|' * (len(arches) + 2)]
	for g in groups:
		out.append(f'| {g["label"]} | ' + ' | '.join(_cell(*g[('run', a)]) for a in arches)
			   + f' | {_cell(*g[("run", "union")])} | {_cell(*g[("boot", "union")])} |')
	return '\n'.join(out) + '\n'


def _gate_word(r: Row, exceptions: Dict[str, str]) -> str:
	ex, cov = r.union()
	if not ex:
		return 'no measured lines'
	if 100.0 * len(cov) / len(ex) >= GATE_PERCENT:
		return 'pass'
	return 'exception' if r.name in exceptions else 'FAIL'


def _counts(arches: Sequence[str]) -> Dict[str, Dict[str, Counts]]:
	return {phase: {a: load_counts(a, phase) for a in arches} for phase in PHASES}


def baseline_value(groups: List[dict]) -> float:
	cov, ex = groups[0][('run', 'union')]
	return round(100.0 * cov / ex, 2) if ex else 0.0


def gate(arches: Sequence[str] = tuple(ARCHES), rev: Optional[str] = None,
	 quiet: bool = False) -> Tuple[int, int, int]:
	"""The coverage gate: (passed, failed, skipped) over every patch and the baseline."""
	tree = tree_dir()
	try:
		counts = _counts(arches)
	except UserError as e:
		log('coverage gate: ' + str(e))
		return 0, 1, 0
	rows = patch_rows(tree, counts['run'], rev)
	groups = group_table(counts)
	if not quiet:
		print(text_table(rows, groups, arches))
	exceptions = load_exceptions()
	passed = failed = skipped = 0
	for r in rows:
		word = _gate_word(r, exceptions)
		ex, cov = r.union()
		if word == 'no measured lines':
			skipped += 1
		elif word == 'FAIL':
			failed += 1
			log(f'coverage gate: FAIL {r.name}: {len(cov)}/{len(ex)} '
			    f'({_pct(len(cov), len(ex))}) of its measured lines ran during tests, '
			    f'below {GATE_PERCENT:.0f}%; not run on any arch:')
			print('\n'.join(f'    {p}:{n}' for p, n in r.uncovered()))
		else:
			passed += 1
			if word == 'exception':
				log(f'coverage gate: {r.name} below {GATE_PERCENT:.0f}%, excused: '
				    + exceptions[r.name])
	if rev is None:
		now = baseline_value(groups)
		try:
			with open(BASELINE) as f:
				base = json.load(f)['kernel/rcu/ during tests, union']
		except (OSError, KeyError, ValueError):
			log(f'coverage gate: no baseline in {BASELINE}: run "make coverage-baseline"')
			return passed, failed + 1, skipped
		if now < base - BASELINE_SLACK:
			failed += 1
			log(f'coverage gate: FAIL kernel/rcu/ during tests is {now:.2f}%, more than '
			    f'{BASELINE_SLACK} points below the baseline {base:.2f}% ({BASELINE})')
		else:
			passed += 1
			log(f'coverage gate: kernel/rcu/ during tests {now:.2f}% (baseline {base:.2f}%)')
	return passed, failed, skipped


def available_arches() -> List[str]:
	"""The arches whose last default run left usable coverage."""
	out = []
	for a in ARCHES:
		try:
			load_counts(a)
			out.append(a)
		except (UserError, OSError, ValueError):
			pass
	return out


def write_report(arches: Sequence[str], rev: Optional[str] = None, summary: bool = True) -> str:
	"""The .info copies, the HTML and (without REV, with summary) SUMMARY.md; returns the page."""
	tree = tree_dir()
	counts = _counts(arches)
	rows = patch_rows(tree, counts['run'], rev)
	outdir = report_dir()
	os.makedirs(outdir, exist_ok=True)
	for a in arches:
		for phase in PHASES:
			shutil.copy(os.path.join(coverage_dir(a), phase + '.info'),
				    os.path.join(outdir, f'{a}-{phase}.info'))
	page = write_html(rows, counts['run'], tree, outdir)
	if rev is None and summary:
		with open(SUMMARY, 'w') as f:
			f.write(summary_md(rows, group_table(counts), arches, tree))
		log('wrote ' + SUMMARY)
	return page


def report(arches: Sequence[str] = tuple(ARCHES), rev: Optional[str] = None) -> int:
	"""make coverage's report: table, SUMMARY.md (not with REV), HTML, gate; 0 if the gate passes."""
	start = time.monotonic()
	page = write_report(arches, rev)
	outdir = report_dir()
	log(f'report in {time.monotonic() - start:.1f}s: {page}, {outdir}/html/index.html, '
	    f'{outdir}/*.info')
	_, failed, _ = gate(arches, rev)
	return 0 if failed == 0 else 1


def write_baseline(arches: Sequence[str] = tuple(ARCHES)) -> str:
	groups = group_table(_counts(arches))
	with open(BASELINE, 'w') as f:
		json.dump({'kernel/rcu/ during tests, union': baseline_value(groups),
			   'arches': list(arches)}, f, indent=1)
		f.write('\n')
	return BASELINE
