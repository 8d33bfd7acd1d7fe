# SPDX-License-Identifier: GPL-2.0
"""make bench: make run against bare kunit.py, and the coverage build against a plain one.

BENCH=loop: make run against bare kunit.py, cold and warm, same config.
Cold: empty build directories and, for make run, an empty ccache, so
neither side profits from earlier work.  Warm: one test file edited
after a successful run.

BENCH=coverage: kunit.py run (build + boot) of the config with its gcov
options (patches 0007 and 0008) and the console dump, against the same
config with them off, both from an empty build dir and an empty ccache;
then coverage.collect's decode on that console (gcovdump, gcov, lcov
files) and the per-patch report on the last make run results.

make bench runs both.  A benchmark, not a timed test: it prints the
figures and ratios and exits 0 unless a run itself fails.  The figures
also go to results/bench-<arch>-<config>/kcidb.json as KernelCI DONE
tests (kunit_rcu.bench.*, each with its number).
"""

import os
import shutil
import subprocess
import tempfile
import time
from typing import List

from . import coverage, kbuild, kcidb, locks, packages, prepare
from .common import REPO, UserError, build_dir, load_config, log, results_dir, tree_dir
from .kcidb import Figure

TEST_FILE = 'kernel/rcu/rcu_kunit.c'


def _timed(cmd: List[str], cwd: str, env: dict) -> float:
	log('$ ' + ' '.join(cmd))
	start = time.monotonic()
	proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
			      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
	elapsed = time.monotonic() - start
	if proc.returncode != 0:
		raise RuntimeError(f'{" ".join(cmd)} failed ({proc.returncode})')
	log(f'  {elapsed:.1f}s')
	return elapsed


def _append(path: str, text: str) -> None:
	with open(path, 'a') as f:
		f.write(text)


# What turns the coverage build into the plain one (kunit.py lets a later
# --kconfig_add override the kunitconfig).
PLAIN = ('# CONFIG_GCOV_KERNEL is not set', '# CONFIG_GCOV_CONSOLE_DUMP is not set',
	 '# CONFIG_RCU_KUNIT_COVERAGE is not set')


def main(args) -> int:
	what = args.bench.split() or ['loop', 'coverage']
	for w in what:
		if w not in ('loop', 'coverage'):
			raise UserError(f'unknown BENCH "{w}": use loop, coverage or both')
	arch, config = args.arch.split()[0], args.config
	cfg = load_config(config)
	cfg.check_arch(arch)
	meta = {'arch': arch, 'config': config, 'debian_version': packages.installed_version(),
		'started': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
		'tree_commit': prepare.prepare()}
	figures: List[Figure] = []
	if 'loop' in what:
		figures += loop(arch, config, cfg)
	if 'coverage' in what:
		figures += coverage_cost(arch, cfg)
	log('figures: ' + write_figures(figures, meta))
	return 0


def figures_dir(arch: str, config: str) -> str:
	"""results/bench-<arch>-<config>: make run, which bench runs, owns results/<arch>-<config>."""
	return os.path.join(os.path.dirname(results_dir(arch, config, False)),
			    f'bench-{arch}-{config}')


def write_figures(figures: List[Figure], meta: dict) -> str:
	"""The figures as KernelCI data in figures_dir(); returns the file's path."""
	outdir = figures_dir(meta['arch'], meta['config'])
	os.makedirs(outdir, exist_ok=True)
	path = os.path.join(outdir, kcidb.FILE)
	kcidb.write(path, kcidb.from_figures(figures, meta))
	return path


def coverage_cost(arch: str, cfg) -> List[Figure]:
	tree = tree_dir()
	jobs = '--jobs=' + str(os.cpu_count() or 2)
	sides = {}
	with tempfile.TemporaryDirectory() as tmp:
		console = os.path.join(tmp, 'console.log')
		for side, extra in (('plain', ['--kconfig_add=' + line for line in PLAIN]),
				    ('coverage', ['--kernel_args=' + coverage.KERNEL_ARG])):
			bdir = os.path.join(tree, f'.kunit-bench-{side}-{arch}')
			cmd = ['python3', 'tools/testing/kunit/kunit.py', 'run', jobs,
			       *kbuild.kunit_args(arch, cfg, bdir), *kbuild.boot_args(arch, cfg),
			       *extra, '--raw_output=all']
			ccache = os.path.join(tmp, 'ccache-' + side)
			env = kbuild.build_env(dict(os.environ, CCACHE_DIR=ccache), config=cfg, arch=arch)
			with locks.build(bdir), locks.tree():
				shutil.rmtree(bdir, ignore_errors=True)
				log('$ ' + ' '.join(cmd))
				start = time.monotonic()
				with open(console, 'w') as out:
					proc = subprocess.run(cmd, cwd=tree, env=env, stdout=out,
							      stderr=subprocess.STDOUT,
							      stdin=subprocess.DEVNULL)
				sides[side] = time.monotonic() - start
				log(f'  {sides[side]:.1f}s')
				if proc.returncode != 0:
					raise RuntimeError(f'{" ".join(cmd)} failed ({proc.returncode}): '
							   f'see {console}')
				if side == 'coverage':
					with open(console, errors='replace') as f:
						text = f.read()
					status = coverage.collect(arch, tree, bdir, text,
								  os.path.join(tmp, 'out'))
				shutil.rmtree(bdir, ignore_errors=True)
	if not status['ok']:
		raise UserError('bench: coverage decode failed: ' + status['error'])
	start = time.monotonic()
	arches = coverage.available_arches()
	if arches:
		coverage.write_report(arches, summary=False)
	report = time.monotonic() - start
	print(f'bench coverage ARCH={arch} CONFIG={cfg.name} (seconds, one run each, cold)')
	print(f'  build+run: coverage {sides["coverage"]:.1f}  plain {sides["plain"]:.1f}  '
	      f'ratio {sides["coverage"] / sides["plain"]:.2f} (target <= 1.25)')
	print(f'  decode (gcovdump + gcov + lcov files) {status["seconds"]:.1f}; per-patch report '
	      f'and HTML for {"+".join(arches) or "no arch (no make run results)"} {report:.1f} '
	      '(target: decode + report < 10 per arch)')
	return [Figure('coverage.build_run.coverage', sides['coverage'], 's',
		       'kunit.py run, gcov options and console dump on, cold'),
		Figure('coverage.build_run.plain', sides['plain'], 's',
		       'kunit.py run, gcov options off, cold'),
		Figure('coverage.build_run.ratio', sides['coverage'] / sides['plain'], '',
		       'coverage / plain (target <= 1.25)'),
		Figure('coverage.decode', status['seconds'], 's', 'gcovdump + gcov + lcov files'),
		Figure('coverage.report', report, 's',
		       f'per-patch report and HTML for {"+".join(arches) or "no arch"}')]


def loop(arch: str, config: str, cfg) -> List[Figure]:
	tree = tree_dir()
	# In the tree like make run's build dirs (git ignores .kunit*), so
	# both sides see the same relative paths.
	bare_dir = os.path.join(tree, f'.kunit-bench-bare-{arch}')
	ours_dir = build_dir(arch, config, False)
	# bare kunit.py: no ccache, no make variables
	env = kbuild.build_env(dict(os.environ, KUNIT_RCU_NO_CCACHE='1'))
	bare = ['python3', 'tools/testing/kunit/kunit.py', 'run',
		*kbuild.kunit_args(arch, cfg, bare_dir), *kbuild.boot_args(arch, cfg),
		'--jobs=' + str(os.cpu_count() or 2)]
	ours = ['make', '-C', REPO, 'run', 'ARCH=' + arch, 'CONFIG=' + config]
	repo_file = os.path.join(REPO, TEST_FILE)
	with open(repo_file) as f:
		original = f.read()
	# The bare runs take the locks a make run in src/ takes (build dir, then
	# tree); none is held while make run itself runs.
	with tempfile.TemporaryDirectory() as ccache:
		cold_env = dict(os.environ, CCACHE_DIR=ccache)
		try:
			with locks.build(bare_dir), locks.tree():
				shutil.rmtree(bare_dir, ignore_errors=True)
				bare_cold = _timed(bare, tree, env)
			with locks.build(ours_dir), locks.tree():
				shutil.rmtree(ours_dir, ignore_errors=True)
			ours_cold = _timed(ours, REPO, cold_env)
			_append(repo_file, '/* bench: warm edit */\n')
			ours_warm = _timed(ours, REPO, cold_env)
			with locks.build(bare_dir), locks.tree():
				_append(os.path.join(tree, TEST_FILE), '/* bench: bare warm edit */\n')
				bare_warm = _timed(bare, tree, env)
		finally:
			with open(repo_file, 'w') as f:
				f.write(original)
			with locks.build(bare_dir), locks.tree():
				subprocess.run(['git', '-C', tree, 'checkout', '-q', '--', TEST_FILE])
				shutil.rmtree(bare_dir, ignore_errors=True)
	print(f'bench ARCH={arch} CONFIG={config} (seconds, one run each)')
	print(f'  cold: make run {ours_cold:.1f}  bare kunit.py run {bare_cold:.1f}  '
	      f'ratio {ours_cold / bare_cold:.2f} (target <= 1.15)')
	print(f'  warm: make run {ours_warm:.1f}  bare kunit.py run {bare_warm:.1f}  '
	      f'ratio {ours_warm / bare_warm:.2f} (target <= 1.50)')
	return [Figure('loop.cold.make_run', ours_cold, 's', 'make run, empty build dir and ccache'),
		Figure('loop.cold.bare_kunit_run', bare_cold, 's', 'kunit.py run, empty build dir'),
		Figure('loop.cold.ratio', ours_cold / bare_cold, '',
		       'make run / kunit.py (target <= 1.15)'),
		Figure('loop.warm.make_run', ours_warm, 's', 'make run after one test file edit'),
		Figure('loop.warm.bare_kunit_run', bare_warm, 's', 'kunit.py run after the same edit'),
		Figure('loop.warm.ratio', ours_warm / bare_warm, '',
		       'make run / kunit.py (target <= 1.50)')]
