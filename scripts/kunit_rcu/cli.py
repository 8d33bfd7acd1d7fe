# SPDX-License-Identifier: GPL-2.0
"""Command line of kunit-rcu; the Makefile targets call these subcommands."""

import argparse
import os
import subprocess
import sys
import time
import unittest
from typing import List, Sequence, Tuple

from . import kbuild, matrix, mutants, packages, prepare, run, series
from .common import REPO, UserError, log


def _split(value: str) -> List[str]:
	return [v for v in (value or '').split() if v]


def _closing(passed: int, failed: int, skipped: int) -> str:
	return f'{passed} passed, {failed} failed, {skipped} skipped'


def run_counts(out: run.RunOutcome) -> Tuple[int, int, int]:
	"""KUnit cases, plus one check for the run as a whole (splats, truncation, hang)."""
	c = out.counts
	return (c['passed'] + int(out.integrity_ok), c['failed'] + int(not out.integrity_ok),
		c['skipped'])


def _prepared(args) -> str:
	"""Installs what is missing and prepares the tree; returns its HEAD."""
	packages.ensure_packages()
	return prepare.prepare(force=args.force)


def cmd_prepare(args) -> int:
	head = _prepared(args)
	log(f'prepared tree: {prepare.tree_dir()} at {head[:12]}')
	log(f'  cd {prepare.tree_dir()} && ./tools/testing/kunit/kunit.py run --arch=x86_64')
	return 0


def cmd_run(args) -> int:
	total = [0, 0, 0]
	ok = True
	for arch in _split(args.arch):
		out = run.run(arch, args.config, _split(args.extra), args.timeout)
		for i, n in enumerate(run_counts(out)):
			total[i] += n
		ok &= out.ok
	print(_closing(*total))
	return 0 if ok else 1


def selftest() -> Tuple[int, int, int]:
	"""Unit tests of the tooling itself (scripts/tests)."""
	suite = unittest.defaultTestLoader.discover(os.path.join(REPO, 'scripts', 'tests'),
						     top_level_dir=os.path.join(REPO, 'scripts'))
	result = unittest.TextTestRunner(verbosity=1, stream=sys.stdout).run(suite)
	failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
	skipped = len(result.skipped)
	return result.testsRun - failed - skipped, failed, skipped


def cmd_selftest(args) -> int:
	p, f, s = selftest()
	print(_closing(p, f, s))
	return 0 if f == 0 else 1


def cmd_check(args) -> int:
	start = time.monotonic()
	total = [0, 0, 0]
	lines = []

	def add(name: str, counts: Sequence[int]) -> None:
		for i, n in enumerate(counts):
			total[i] += n
		lines.append(f'  {name:<28} {_closing(*counts)}')

	log('[check] tooling unit tests')
	add('tooling unit tests', selftest())
	log('[check] prepare, series round trip, checkpatch --strict')
	_prepared(args)
	add('series and checkpatch', series.check())
	for arch in _split(args.arch):
		log(f'[check] make run ARCH={arch}')
		out = run.run(arch, args.config, [], args.timeout)
		add(f'KUnit ARCH={arch}', run_counts(out))
	if not args.no_mutants:
		log('[check] mutation harness (ARCH=x86_64)')
		add('mutants killed', mutants.run_all('x86_64', args.config,
						      min(args.timeout, mutants.TIMEOUT)))
	log(f'[check] summary ({time.monotonic() - start:.0f}s):')
	print('\n'.join(lines))
	print(_closing(*total))
	return 0 if total[1] == 0 else 1


def cmd_mutants(args) -> int:
	p, f, s = mutants.run_all('x86_64', args.config, args.timeout, _split(args.only))
	print(_closing(p, f, s))
	return 0 if f == 0 else 1


def cmd_series(args) -> int:
	_prepared(args)
	files = series.export(os.path.abspath(args.out))
	for f in files:
		print(f)
	log(f'{len(files)} patches in {args.out}: git am them onto pristine linux-source-6.1')
	return 0


def cmd_matrix(args) -> int:
	log('wrote ' + matrix.write())
	return 0


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
	p = sub.add_parser('matrix', help='regenerate docs/matrix.md')
	p.set_defaults(func=cmd_matrix)
	p = sub.add_parser('bench', help='cold/warm make run against bare kunit.py')
	common(p)
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
