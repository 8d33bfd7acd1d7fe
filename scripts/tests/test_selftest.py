# SPDX-License-Identifier: GPL-2.0
"""make selftest (and make check's first line) shows a test's output only if it fails."""
import io
import os
import subprocess
import sys
import unittest

from kunit_rcu import common, selftest


def noisy(fail: bool) -> unittest.TestCase:
	"""A test that writes a marker every way a test can, then passes or fails.

	Made here, not at module level, so that discovery does not run it.
	"""
	class Noisy(unittest.TestCase):
		def runTest(self):
			tag = 'FAILING' if fail else 'PASSING'
			print(f'{tag}-print')
			print(f'{tag}-stderr', file=sys.stderr)
			common.log(f'{tag}-log')
			sys.__stdout__.write(f'{tag}-dunder-stdout\n')
			os.write(1, f'{tag}-fd1\n'.encode())
			os.write(2, f'{tag}-fd2\n'.encode())
			subprocess.run(['echo', f'{tag}-subprocess'])
			subprocess.run(['sh', '-c', f'echo {tag}-subprocess-stderr >&2'])
			self.assertFalse(fail, 'failed on purpose')
	return Noisy()


MARKERS = ('print', 'stderr', 'log', 'dunder-stdout', 'fd1', 'fd2', 'subprocess',
	   'subprocess-stderr')


class QuietTest(unittest.TestCase):
	def run_inner(self, *tests):
		stream = io.StringIO()
		result = selftest.run_quietly(unittest.TestSuite(tests), stream)
		return result, stream.getvalue()

	def test_a_passing_test_prints_nothing(self):
		result, shown = self.run_inner(noisy(False))
		self.assertTrue(result.wasSuccessful())
		self.assertNotIn('PASSING', shown)
		self.assertIn('Ran 1 test', shown)

	def test_a_failing_test_shows_everything_it_wrote(self):
		result, shown = self.run_inner(noisy(False), noisy(True))
		self.assertEqual(len(result.failures), 1)
		self.assertNotIn('PASSING', shown)
		for m in MARKERS:
			self.assertIn('FAILING-' + m, shown)
		self.assertIn('failed on purpose', shown)

	def test_the_project_tests_write_nothing_on_their_own(self):
		"""The tests that mock apt failures keep the messages to themselves."""
		from tests import test_errors
		suite = unittest.defaultTestLoader.loadTestsFromModule(test_errors)
		result, shown = self.run_inner(suite)
		self.assertTrue(result.wasSuccessful(), shown)
		self.assertNotIn('apt-get', shown)
		self.assertNotIn('kunit-rcu:', shown)


if __name__ == '__main__':
	unittest.main()
