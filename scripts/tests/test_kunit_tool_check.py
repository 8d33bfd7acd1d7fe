# SPDX-License-Identifier: GPL-2.0
"""kunit_tool_check: kunit_tool's tests may fail only where pristine 6.1's fail too."""

import subprocess
import unittest
from unittest import mock

from kunit_rcu import kunit_tool_check as ktc

OUTPUT_311 = """..E.F
======================================================================
ERROR: test_a (__main__.KUnitMainTest.test_a)
----------------------------------------------------------------------
FAIL: test_b (__main__.KUnitParserTest.test_b)
----------------------------------------------------------------------
Ran 5 tests in 0.2s

FAILED (failures=1, errors=1)
"""


class KunitToolCheckTest(unittest.TestCase):
	def fake_run(self, text):
		return mock.patch.object(ktc, 'run', return_value=subprocess.CompletedProcess(
			[], 1, stdout=text))

	def test_failures_are_named_in_both_python_formats(self):
		with self.fake_run(OUTPUT_311):
			self.assertEqual(ktc.results('/k'),
					 (5, {'KUnitMainTest.test_a', 'KUnitParserTest.test_b'}))
		with self.fake_run('ERROR: test_a (__main__.KUnitMainTest)\nRan 2 tests in 1s\n'):
			self.assertEqual(ktc.results('/k'), (2, {'KUnitMainTest.test_a'}))

	def test_no_run_is_an_error(self):
		with self.fake_run('SyntaxError: bad\n'), self.assertRaises(RuntimeError):
			ktc.results('/k')

	def test_only_failures_new_with_the_series_fail(self):
		runs = iter([(75, {'A.x', 'B.y'}), (75, {'A.x'})])
		with mock.patch.object(ktc, 'results', side_effect=lambda d: next(runs)), \
		     mock.patch.object(ktc, 'export_pristine', return_value='/p'), \
		     mock.patch.object(ktc, 'log'):
			self.assertEqual(ktc.check('/tree'), (73, 1, 1))
