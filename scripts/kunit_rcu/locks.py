# SPDX-License-Identifier: GPL-2.0
"""Locks on what concurrent kunit-rcu processes share: build dirs, the prepared tree, the scratch tree.

Each is an flock on a file in <version dir>/locks/; the kernel drops it
when its holder dies, so a killed run never leaves one behind.  The
holder writes its pid and command line into the file, and a process that
has to wait says once what for and who holds it.

No deadlocks: a process takes locks in one order only, a build dir
(which also guards the run's results dir), then the prepared tree, then
the scratch tree; taking one out of that order raises (a bug in the
caller).  A lock the process already holds is taken again for free.
"""

import fcntl
import os
import re
import sys
from typing import Dict, List, Tuple

from .common import log, scratch_dir, tree_dir, version_dir

# Ranks: the fixed order in which a process may take locks.
BUILD, TREE, SCRATCH = 0, 1, 2


class _Held:
	"""A lock file this process holds, and how many Lock objects hold it."""

	def __init__(self, fd: int, key: Tuple[int, str], what: str):
		self.fd = fd
		self.key = key
		self.what = what
		self.count = 1


# lock file path -> what this process holds
_held: Dict[str, _Held] = {}


def lock_dir() -> str:
	return os.path.join(version_dir(), 'locks')


def command_line(limit: int = 300) -> str:
	"""This process's command line as ps shows it, on one line."""
	try:
		with open('/proc/self/cmdline', 'rb') as f:
			argv = [a.decode(errors='replace') for a in f.read().split(b'\0') if a]
	except OSError:
		argv = []
	text = ' '.join(' '.join(argv or [sys.executable, *sys.argv]).split())
	return text if len(text) <= limit else text[:limit - 3] + '...'


def holder(path: str) -> str:
	"""'pid N (command line)' as the holder wrote it into the lock file, if it has yet."""
	try:
		with open(path, errors='replace') as f:
			lines = f.read().splitlines()
	except OSError:
		lines = []
	if len(lines) >= 2 and lines[0].isdigit():
		return f'pid {lines[0]} ({lines[1]})'
	return 'another process'


class Lock:
	"""One exclusive lock: use as a context manager, or acquire() and release() (idempotent)."""

	def __init__(self, name: str, what: str, rank: int):
		self.name = name
		self.what = what
		self.key = (rank, name)
		self.path = os.path.join(lock_dir(), name + '.lock')
		self.holding = False

	def acquire(self) -> 'Lock':
		if self.holding:
			return self
		held = _held.get(self.path)
		if held:
			held.count += 1
			self.holding = True
			return self
		later = [h.what for h in _held.values() if h.key > self.key]
		if later:
			raise RuntimeError(f'lock order: {self.what} taken while holding '
					   f'{", ".join(later)}; take it first')
		os.makedirs(os.path.dirname(self.path), exist_ok=True)
		fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
		try:
			try:
				fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
			except BlockingIOError:
				log(f'waiting for {self.what}, held by {holder(self.path)}')
				fcntl.flock(fd, fcntl.LOCK_EX)
			os.ftruncate(fd, 0)
			os.pwrite(fd, f'{os.getpid()}\n{command_line()}\n'.encode(), 0)
		except BaseException:
			os.close(fd)
			raise
		_held[self.path] = _Held(fd, self.key, self.what)
		self.holding = True
		return self

	def release(self) -> None:
		if not self.holding:
			return
		self.holding = False
		held = _held[self.path]
		held.count -= 1
		if held.count:
			return
		del _held[self.path]
		try:
			os.ftruncate(held.fd, 0)  # no stale holder for the next waiter to name
		finally:
			os.close(held.fd)  # drops the flock

	def __enter__(self) -> 'Lock':
		return self.acquire()

	def __exit__(self, *exc) -> None:
		self.release()


def build(path: str) -> Lock:
	"""A build dir, and with it the results dir of the runs that use it."""
	rel = os.path.relpath(os.path.abspath(path), version_dir())
	return Lock('build-' + re.sub(r'[^\w.+-]', '-', rel), f'the build dir {path}', BUILD)


def tree() -> Lock:
	"""The prepared tree src/ (and apply/, where prepare composes it)."""
	return Lock('tree', f'the prepared tree {tree_dir()}', TREE)


def scratch() -> Lock:
	"""The scratch tree of EXTRA_PATCHES runs."""
	return Lock('scratch', f'the scratch tree {scratch_dir()}', SCRATCH)


def held() -> List[str]:
	"""What this process holds, in the order it must be taken."""
	return [h.what for h in sorted(_held.values(), key=lambda h: h.key)]
