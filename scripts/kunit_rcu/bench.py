# SPDX-License-Identifier: GPL-2.0
"""make bench: make run against bare kunit.py, cold and warm, same config.

Cold: empty build directories and, for make run, an empty ccache, so
neither side profits from earlier work.  Warm: one test file edited
after a successful run.  A benchmark, not a timed test: it prints the
figures and ratios and exits 0 unless a run itself fails.
"""

import os
import shutil
import subprocess
import tempfile
import time
from typing import List

from . import kbuild, locks, prepare
from .common import REPO, build_dir, load_config, log, tree_dir

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


def main(args) -> int:
	arch, config = args.arch.split()[0], args.config
	cfg = load_config(config)
	cfg.check_arch(arch)
	prepare.prepare()
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
	return 0
