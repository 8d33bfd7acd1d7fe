# SPDX-License-Identifier: GPL-2.0
"""Runs that share a tree or a build dir wait for each other, in one lock order."""
import os
import select
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from kunit_rcu import common, locks

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# argv[1]: what to lock; holds it until a line arrives on stdin.
HOLD = '''
import sys
sys.path.insert(0, {scripts!r})
from kunit_rcu import locks
with getattr(locks, sys.argv[1])():
	print('held', flush=True)
	sys.stdin.readline()
	open(sys.argv[2], 'w').close()  # "released" marker, written while still holding
'''

# argv[1]: what to lock; says whether the holder had released it by then.
TAKE = '''
import os, sys
sys.path.insert(0, {scripts!r})
from kunit_rcu import locks
lock = getattr(locks, sys.argv[1])()
with lock:
	print('got it', 'after release' if os.path.exists(sys.argv[2]) else 'BEFORE RELEASE',
	      flush=True)
	with open(lock.path) as f:
		print('lock file:', f.read().replace(chr(10), ' | '), flush=True)
'''


def readline(proc: subprocess.Popen, timeout: float = 30) -> str:
	ready, _, _ = select.select([proc.stdout], [], [], timeout)
	if not ready:
		raise AssertionError('no output within %s s' % timeout)
	return proc.stdout.readline()


class TwoProcessTest(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		self.env = dict(os.environ, KUNIT_RCU_CACHE=self.tmp.name)
		self.marker = os.path.join(self.tmp.name, 'released')
		self.procs = []

	def tearDown(self):
		for p in self.procs:
			if p.poll() is None:
				p.kill()
			p.wait()
			for f in (p.stdin, p.stdout):
				if f:
					f.close()

	def start(self, code: str, what: str, tag: str, stdin=subprocess.DEVNULL) -> subprocess.Popen:
		script = os.path.join(self.tmp.name, f'{tag}.py')
		with open(script, 'w') as f:
			f.write(code.format(scripts=SCRIPTS))
		p = subprocess.Popen([sys.executable, script, what, self.marker, tag], env=self.env,
				     stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
				     text=True)
		self.procs.append(p)
		return p

	def test_second_process_waits_and_names_the_holder(self):
		holder = self.start(HOLD, 'scratch', 'holder-tag', stdin=subprocess.PIPE)
		self.assertEqual(readline(holder), 'held\n')
		with mock.patch.dict(os.environ, {'KUNIT_RCU_CACHE': self.tmp.name}):
			path = locks.scratch().path
			what = locks.scratch().what
		with open(path) as f:
			self.assertEqual(f.read().splitlines()[0], str(holder.pid))
		waiter = self.start(TAKE, 'scratch', 'waiter-tag')
		line = readline(waiter)
		self.assertTrue(line.startswith(f'kunit-rcu: waiting for {what}, held by pid '
						f'{holder.pid} ('), line)
		self.assertIn('holder-tag', line)
		self.assertIsNone(waiter.poll())
		holder.stdin.write('go\n')
		holder.stdin.flush()
		rest, _ = waiter.communicate(timeout=30)
		self.assertEqual(holder.wait(timeout=30), 0)
		self.assertEqual(waiter.returncode, 0)
		lines = rest.splitlines()
		self.assertEqual(lines[0], 'got it after release')  # said once, then got it
		self.assertIn(f'lock file: {waiter.pid} | ', lines[1])
		self.assertIn('waiter-tag', lines[1])
		with open(path) as f:
			self.assertEqual(f.read(), '')  # released: no stale holder

	def test_a_killed_holder_leaves_no_lock(self):
		holder = self.start(HOLD, 'tree', 'x', stdin=subprocess.PIPE)
		self.assertEqual(readline(holder), 'held\n')
		holder.send_signal(signal.SIGKILL)
		holder.wait(timeout=30)
		open(self.marker, 'w').close()
		out, _ = self.start(TAKE, 'tree', 'y').communicate(timeout=30)
		self.assertTrue(out.startswith('got it after release\n'), out)

	def test_different_locks_do_not_wait(self):
		holder = self.start(HOLD, 'tree', 'x', stdin=subprocess.PIPE)
		self.assertEqual(readline(holder), 'held\n')
		open(self.marker, 'w').close()
		out, _ = self.start(TAKE, 'scratch', 'y').communicate(timeout=30)
		self.assertTrue(out.startswith('got it'), out)


class InProcessTest(unittest.TestCase):
	def setUp(self):
		tmp = tempfile.TemporaryDirectory()
		self.addCleanup(tmp.cleanup)
		patch = mock.patch.dict(os.environ, {'KUNIT_RCU_CACHE': tmp.name})
		patch.start()
		self.addCleanup(patch.stop)

	def content(self, lock: locks.Lock) -> str:
		with open(lock.path) as f:
			return f.read()

	def test_reentrant_within_a_process(self):
		outer = locks.tree()
		with outer:
			with locks.tree():
				with locks.tree():
					pass
			self.assertTrue(self.content(outer).startswith(f'{os.getpid()}\n'))
			self.assertEqual(locks.held(), [outer.what])
		self.assertEqual(self.content(outer), '')
		self.assertEqual(locks.held(), [])

	def test_one_fixed_order_build_tree_scratch(self):
		build = locks.build(common.build_dir('x86_64', 'default', True))
		with build, locks.tree(), locks.scratch():
			self.assertEqual(len(locks.held()), 3)
		with locks.scratch():
			with self.assertRaisesRegex(RuntimeError, 'lock order: the prepared tree'):
				locks.tree().acquire()
			with self.assertRaisesRegex(RuntimeError, 'lock order: the build dir'):
				locks.build(common.build_dir('x86_64', 'default', False)).acquire()
		with locks.tree():
			with self.assertRaises(RuntimeError):
				locks.build(common.build_dir('x86_64', 'default', False)).acquire()
		self.assertEqual(locks.held(), [])

	def test_early_release_of_the_tree_keeps_scratch(self):
		"""What an EXTRA_PATCHES run does once its scratch tree is made."""
		tree, scratch = locks.tree(), locks.scratch()
		with tree:
			with scratch:
				tree.release()
				tree.release()  # idempotent
				self.assertEqual(locks.held(), [scratch.what])
		self.assertEqual(locks.held(), [])

	def test_build_dir_locks_are_per_build_dir(self):
		names = {locks.build(common.build_dir(a, c, e)).path
			 for a in common.ARCHES for c in ('default', 'nohz') for e in (False, True)}
		self.assertEqual(len(names), 2 * 2 * len(common.ARCHES))
		self.assertTrue(all(os.path.dirname(n) == locks.lock_dir() for n in names))


if __name__ == '__main__':
	unittest.main()
