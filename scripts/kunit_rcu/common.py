# SPDX-License-Identifier: GPL-2.0
"""Paths, settings and the error type shared by every kunit-rcu stage."""

import os
import subprocess
import time
from typing import List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Directories of the repository that are copied onto the kernel tree.
OVERLAY_DIRS = ('kernel/rcu', 'arch/x86/kernel', 'lib/kunit-rcu')

ARCHES = {
	'x86_64': {'cross_compile': None, 'cc': 'gcc', 'suite_dirs': ('arch/x86/',)},
	'arm64': {'cross_compile': 'aarch64-linux-gnu-',
		  'cc': 'aarch64-linux-gnu-gcc', 'suite_dirs': ('arch/arm64/',)},
}

TARBALL = '/usr/src/linux-source-6.1.tar.xz'
PACKAGE = 'linux-source-6.1'


class UserError(Exception):
	"""A failure the user can act on: the message says what and how."""


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
	"""kunit.py's build dir for a run.

	The default x86_64 run builds in the prepared tree's .kunit, kunit.py's
	own default, and the default arm64 run in .kunit-arm64: a plain
	"kunit.py run --arch=x86_64" there (or, for arm64, with
	--build_dir=.kunit-arm64) reuses make run's build.
	"""
	if not extra and config == 'default':
		return os.path.join(tree_dir(), '.kunit' if arch == 'x86_64' else '.kunit-' + arch)
	name = f'{arch}-{config}' + ('-extra' if extra else '')
	return os.path.join(version_dir(), 'build', name)


def results_dir(arch: str, config: str, extra: bool) -> str:
	base = os.environ.get('KUNIT_RCU_RESULTS') or os.path.join(REPO, 'results')
	name = f'{arch}-{config}' + ('-extra' if extra else '')
	return os.path.join(os.path.abspath(base), name)


def check_arch(arch: str) -> None:
	if arch not in ARCHES:
		raise UserError(f'unknown ARCH "{arch}": use one of '
				f'{", ".join(sorted(ARCHES))} (e.g. make run ARCH=arm64)')


def config_fragment(config: str) -> str:
	path = os.path.join(REPO, 'configs', config + '.config')
	if not os.path.isfile(path):
		names = sorted(n[:-len('.config')] for n in os.listdir(os.path.join(REPO, 'configs'))
			       if n.endswith('.config'))
		raise UserError(f'unknown CONFIG "{config}": no configs/{config}.config; '
				f'use one of {", ".join(names)} or add that file')
	return path


def fragment_lines(config: str) -> List[str]:
	with open(config_fragment(config)) as f:
		return [l.strip() for l in f if l.strip() and not l.startswith('#')]


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
