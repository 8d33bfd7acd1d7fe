# SPDX-License-Identifier: GPL-2.0
"""Command line of kunit-rcu; the Makefile targets call these subcommands."""

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from . import (coverage, flavor_api, kbuild, kconfig_check, ktap_check, kunit_tool_check, locks,
	       matrix, mutants, packages, prepare, run, series)
from . import selftest as tooling_tests
from .common import CHECK_CONFIG_RUNS, REPO, UserError, check_arch, config_names, load_config, log


def _split(value: str) -> List[str]:
	return [v for v in (value or '').split() if v]


@dataclass(frozen=True)
class Counts:
	"""What a step passed, failed and skipped; the steps' modules return (p, f, s) tuples."""
	passed: int = 0
	failed: int = 0
	skipped: int = 0

	@classmethod
	def of(cls, counts: Sequence[int]) -> 'Counts':
		"""From a (passed, failed, skipped) tuple."""
		passed, failed, skipped = counts
		return cls(passed, failed, skipped)

	def __add__(self, other: 'Counts') -> 'Counts':
		return Counts(self.passed + other.passed, self.failed + other.failed,
			      self.skipped + other.skipped)

	def any(self) -> bool:
		return bool(self.passed or self.failed or self.skipped)

	def closing(self) -> str:
		"""The closing line CI reads: 'N passed, N failed, N skipped'."""
		return f'{self.passed} passed, {self.failed} failed, {self.skipped} skipped'


def run_counts(out: run.RunOutcome) -> Counts:
	"""KUnit cases, plus one check for the run as a whole (splats, truncation, hang)."""
	c = out.counts
	return Counts(c['passed'] + int(out.integrity_ok), c['failed'] + int(not out.integrity_ok),
		      c['skipped'])


def _closed(counts: Sequence[int]) -> int:
	"""Prints a module's (passed, failed, skipped) as the closing line; the exit code."""
	total = Counts.of(counts)
	print(total.closing())
	return 0 if total.failed == 0 else 1


def run_failures(out: run.RunOutcome) -> List[str]:
	"""What failed in a run, for make check's summary (the verdict's reasons name the cases)."""
	return [] if out.ok else list(out.reasons)


def failure_lines(failures: Sequence[str], most: int = 6, width: int = 200) -> List[str]:
	"""Summary lines under a make check row: what failed, so the tail of a log names it."""
	out = []
	for f in list(failures)[:most]:
		f = ' '.join(f.split())
		out.append('      ' + (f if len(f) <= width else f[:width - 3] + '...'))
	if len(failures) > most:
		out.append(f'      ... and {len(failures) - most} more above')
	return out


def _prepared(args) -> str:
	"""Installs what is missing and prepares the tree; returns its HEAD."""
	packages.ensure_packages()
	return prepare.prepare(force=args.force)


def cmd_prepare(args) -> int:
	head = _prepared(args)
	log(f'prepared tree: {prepare.tree_dir()} at {head[:12]}')
	log(f'  cd {prepare.tree_dir()} && ./tools/testing/kunit/kunit.py run --arch=x86_64')
	return 0


def check_runs(arches: str, config: str) -> List[Tuple[str, str]]:
	"""make check's runs, in order: (ARCH, CONFIG) for each arch, then CHECK_CONFIG_RUNS."""
	runs = [(arch, config) for arch in _split(arches)]
	return runs + [r for r in CHECK_CONFIG_RUNS if r not in runs]


def _label(arch: str, config: str) -> str:
	return f'KUnit ARCH={arch}' + ('' if config == 'default' else f' CONFIG={config}')


def cmd_run(args) -> int:
	total = Counts()
	ok = True
	cfg = load_config(args.config)
	for arch in _split(args.arch):
		cfg.check_arch(arch)  # every ARCH before the first build
	for arch in _split(args.arch):
		out = run.run(arch, args.config, _split(args.extra), args.timeout)
		total += run_counts(out)
		ok &= out.ok
	print(total.closing())
	return 0 if ok else 1


def selftest() -> Counts:
	"""Unit tests of the tooling itself (scripts/tests); quiet unless a test fails."""
	return Counts.of(tooling_tests.selftest())


def cmd_selftest(args) -> int:
	counts = selftest()
	print(counts.closing())
	return 0 if counts.failed == 0 else 1


def cmd_check(args) -> int:
	start = time.monotonic()
	total = Counts()
	lines = []

	def add(name: str, counts: Sequence[int] | Counts, failures: Sequence[str] = ()) -> None:
		"""A summary row; counts: a Counts or a module's (passed, failed, skipped)."""
		nonlocal total
		row = counts if isinstance(counts, Counts) else Counts.of(counts)
		total += row
		lines.append(f'  {name:<36} {row.closing()}')
		lines.extend(failure_lines(failures))

	log('[check] tooling unit tests')
	add('tooling unit tests', selftest())
	log('[check] prepare, series round trip, checkpatch --strict')
	with locks.tree():  # series.check uses src/ and apply/
		_prepared(args)
		add('series and checkpatch', series.check())
		log('[check] ktap reader against kunit_tool\'s parser on its test logs')
		add('ktap vs kunit_parser', ktap_check.check())
		log('[check] kunit_tool\'s own tests, prepared tree against pristine 6.1')
		add('kunit_tool_test.py', kunit_tool_check.check())
	runs = check_runs(args.arch, args.config)
	for arch, config in runs:
		log(f'[check] make run ARCH={arch}' + ('' if config == 'default' else f' CONFIG={config}'))
		out = run.run(arch, config, [], args.timeout)
		add(_label(arch, config), run_counts(out), run_failures(out))
	cov_arches = [a for a, c in runs if c == 'default']
	if args.config == 'default' and cov_arches:
		log('[check] coverage gate (per patch, and kernel/rcu/ against coverage/baseline.json)')
		add('coverage gate', coverage.gate(cov_arches))
	log('[check] Kconfig rules (CFG-1) on the .config of each build above')
	add('Kconfig rules (CFG-1)', kconfig_check.check_builds(runs))
	log('[check] flavor APIs (FUT-6): removed bh/sched APIs gone, read-side APIs kept')
	add('flavor APIs (FUT-6)', flavor_api.check_tree())
	log('[check] traceability matrix (docs/matrix.md against these results)')
	add('traceability matrix', matrix.check(args.config))
	if not args.no_mutants:
		log('[check] mutation harness (each mutant on its arches)')
		not_killed: List[str] = []
		add('mutants killed', mutants.run_all(args.config, min(args.timeout, mutants.TIMEOUT),
						      not_killed=not_killed, all_arches=False),
		    not_killed)
		for name in sorted({c for _, c in runs if c != args.config}):
			not_killed = []
			counts = Counts.of(mutants.run_all(name, min(args.timeout, mutants.TIMEOUT),
							   not_killed=not_killed, all_arches=False))
			if counts.any():
				add(f'mutants CONFIG={name}', counts, not_killed)
	log(f'[check] summary ({time.monotonic() - start:.0f}s):')
	print('\n'.join(lines))
	print(total.closing())
	return 0 if total.failed == 0 else 1


def cmd_check_configs(args) -> int:
	"""make check-configs: every configs/*.config on every arch it applies to."""
	runs = [(arch, name) for name in config_names() for arch in load_config(name).arches]
	total = Counts()
	lines = []
	for arch, config in runs:
		log(f'[check-configs] make run ARCH={arch} CONFIG={config}')
		counts = run_counts(run.run(arch, config, [], args.timeout))
		total += counts
		lines.append(f'  {f"ARCH={arch} CONFIG={config}":<36} {counts.closing()}')
	for name in config_names():
		if name != 'default' and any(mutants.mutant_config(p) == name
					     for p in mutants.mutant_files()):
			log(f'[check-configs] mutants of CONFIG={name}')
			counts = Counts.of(mutants.run_all(name, min(args.timeout, mutants.TIMEOUT)))
			total += counts
			lines.append(f'  {f"mutants CONFIG={name}":<36} {counts.closing()}')
	log('[check-configs] summary:')
	print('\n'.join(lines))
	print(total.closing())
	return 0 if total.failed == 0 else 1


def cmd_kconfig_check(args) -> int:
	"""make kconfig-check: CFG-1 on the .config files of make check's builds, as they are."""
	return _closed(kconfig_check.check_builds(check_runs(args.arch, args.config)))


def cmd_flavor_api(args) -> int:
	"""make flavor-api: FUT-6 on the prepared tree's include/, as it is."""
	return _closed(flavor_api.check_tree())


def cmd_mutants(args) -> int:
	return _closed(mutants.run_all(args.config, args.timeout, _split(args.only)))


def cmd_series(args) -> int:
	with locks.tree():
		_prepared(args)
		files = series.export(os.path.abspath(args.out))
	for f in files:
		print(f)
	log(f'{len(files)} patches in {args.out}: git am them onto pristine linux-source-6.1')
	return 0


def cmd_series_build(args) -> int:
	"""make series-build: each patch builds and keeps production objects (seriesbuild)."""
	from . import seriesbuild
	arches = args.arch.split()
	for arch in arches:
		check_arch(arch)
	return _closed(seriesbuild.main(arches))


def cmd_matrix(args) -> int:
	log('wrote ' + matrix.write())
	return 0


def cmd_coverage(args) -> int:
	"""make coverage: the default run on each arch, then the per-patch report and gate."""
	arches = _split(args.arch)
	for arch in arches:
		check_arch(arch)
	if not args.no_run:
		for arch in arches:
			log(f'[coverage] make run ARCH={arch}')
			if not run.run(arch, 'default', [], args.timeout).ok:
				log(f'[coverage] warning: the ARCH={arch} run failed; its coverage is '
				    'that of a failing run')
	with locks.tree():
		return coverage.report(arches, args.rev or None)


def cmd_coverage_baseline(args) -> int:
	log('wrote ' + coverage.write_baseline(_split(args.arch)))
	return 0


def cmd_soak(args) -> int:
	"""make soak: each ARCH's kernel booted N times; per case, what it did; a case that varied fails."""
	from . import soak
	arches = _split(args.arch)
	cfg = load_config(args.config)
	for arch in arches:
		cfg.check_arch(arch)
	total = Counts()
	for arch in arches:
		result = soak.soak(arch, args.config, args.boots, args.timeout)
		log(f'[soak] ARCH={arch} CONFIG={args.config}: {result.boots} boots')
		print(result.table())
		for boot, reasons in result.failed_boots:
			print(f'  boot {boot} failed: ' + '; '.join(reasons))
		vary = result.varying()
		log(f'[soak] ARCH={arch} CONFIG={args.config}: ' +
		    (f'{len(vary)} case(s) varied: {", ".join(vary)}' if vary else 'no case varied') +
		    f', {len(result.failed_boots)} of {result.boots} boots failed')
		total += Counts.of(result.counts())
	print(total.closing())
	return 0 if total.failed == 0 else 1


def cmd_bench(args) -> int:
	from . import bench
	return bench.main(args)


def main(argv: Sequence[str]) -> int:
	parser = argparse.ArgumentParser(prog='kunit-rcu', description=__doc__)
	sub = parser.add_subparsers(dest='command', required=True)

	def common(p, arch='x86_64'):
		p.add_argument('--arch', default=arch, help='x86_64, arm64, or both quoted')
		p.add_argument('--config', default='default', help='configs/<name>.config fragment')
		p.add_argument('--timeout', type=int, default=kbuild.DEFAULT_TIMEOUT,
			       help='bound on one guest boot, seconds')
		p.add_argument('--force', action='store_true',
			       help='reset a prepared tree that has local changes')

	p = sub.add_parser('prepare', help='install packages and prepare the kernel tree')
	common(p)
	p.set_defaults(func=cmd_prepare)
	p = sub.add_parser('run', help='prepare, build, boot, judge')
	common(p)
	p.add_argument('--extra', default='', help='extra patches (scratch tree)')
	p.set_defaults(func=cmd_run)
	p = sub.add_parser('check', help='the whole test command')
	common(p, 'x86_64 arm64')
	p.add_argument('--no-mutants', action='store_true')
	p.set_defaults(func=cmd_check)
	p = sub.add_parser('check-configs', help='every configs/*.config on every arch it applies to')
	p.add_argument('--timeout', type=int, default=kbuild.DEFAULT_TIMEOUT,
		       help='bound on one guest boot, seconds')
	p.add_argument('--force', action='store_true',
		       help='reset a prepared tree that has local changes')
	p.set_defaults(func=cmd_check_configs)
	p = sub.add_parser('kconfig-check', help='CFG-1 on the .config of make check\'s builds')
	p.add_argument('--arch', default='x86_64 arm64', help='x86_64, arm64, or both quoted')
	p.add_argument('--config', default='default', help='configs/<name>.config fragment')
	p.set_defaults(func=cmd_kconfig_check)
	p = sub.add_parser('flavor-api', help='FUT-6: removed bh/sched APIs gone from the tree')
	p.set_defaults(func=cmd_flavor_api)
	p = sub.add_parser('selftest', help='unit tests of the tooling')
	p.set_defaults(func=cmd_selftest)
	p = sub.add_parser('mutants', help='every mutant must fail its named cases')
	common(p)
	p.set_defaults(timeout=mutants.TIMEOUT)
	p.add_argument('--only', default='', help='mutant file names')
	p.set_defaults(func=cmd_mutants)
	p = sub.add_parser('series', help='export the whole change as git format-patch files')
	common(p)
	p.add_argument('--out', default=os.path.join(REPO, 'series-out'))
	p.set_defaults(func=cmd_series)
	p = sub.add_parser('series-build', help='each patch builds; production objects unchanged')
	common(p, 'x86_64 arm64')
	p.set_defaults(func=cmd_series_build)
	p = sub.add_parser('matrix', help='regenerate docs/matrix.md')
	p.set_defaults(func=cmd_matrix)
	p = sub.add_parser('coverage', help='per-patch gcov coverage of the default runs')
	common(p, 'x86_64 arm64')
	p.add_argument('--rev', default='', help='report the lines changed since this commit')
	p.add_argument('--no-run', action='store_true', help='report on the last runs')
	p.set_defaults(func=cmd_coverage)
	p = sub.add_parser('coverage-baseline', help='store kernel/rcu/ coverage as the baseline')
	p.add_argument('--arch', default='x86_64 arm64')
	p.set_defaults(func=cmd_coverage_baseline)
	p = sub.add_parser('soak', help='boot one kernel N times; a case that varies fails')
	common(p)
	p.add_argument('--boots', type=int, default=10, help='how many boots (N)')
	p.set_defaults(func=cmd_soak)
	p = sub.add_parser('bench', help='cold/warm make run against bare kunit.py; coverage cost')
	common(p)
	p.add_argument('--bench', default='', help='loop, coverage, or both (default)')
	p.set_defaults(func=cmd_bench)
	args = parser.parse_args(argv)
	if getattr(args, 'force', False):
		os.environ['FORCE'] = '1'
	try:
		return args.func(args)
	except UserError as e:
		print(f'kunit-rcu: error: {e}', file=sys.stderr)
		return 2
	except subprocess.CalledProcessError as e:
		print(f'kunit-rcu: error: command failed ({e.returncode}): {" ".join(e.cmd)}\n'
		      f'{(e.output or "")[-2000:]}', file=sys.stderr)
		return 2
	except KeyboardInterrupt:
		return 130
