# SPDX-License-Identifier: GPL-2.0
import unittest

from kunit_rcu import ktap, verdict
from tests.helpers import EXPECTED, PASSING, with_line_after


class VerdictTest(unittest.TestCase):
	def test_clean_run_passes(self):
		v = verdict.judge(PASSING, EXPECTED)
		self.assertTrue(v.passed, v.reasons)
		self.assertEqual((v.count(ktap.PASSED), v.count(ktap.SKIPPED)), (2, 1))
		self.assertEqual(v.cases[0].requirements, ['SCH-1'])

	def test_failed_case_fails_the_run_and_is_named(self):
		v = verdict.judge(PASSING.replace('    ok 2 rcu_poll_get_state',
						  '    not ok 2 rcu_poll_get_state'), EXPECTED)
		self.assertFalse(v.passed)
		self.assertEqual(v.failed_cases(), ['rcu_core.rcu_poll_get_state'])

	def test_splat_fails_a_run_whose_cases_all_pass(self):
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting',
				       '[    1.15] WARNING: CPU: 1 PID: 9 at kernel/rcu/tree.c:1 f+0x0/0x1')
		v = verdict.judge(text, EXPECTED)
		self.assertFalse(v.passed)
		self.assertEqual(v.failed_cases(), [])
		self.assertEqual(v.splats[0].case, 'rcu_core.rcu_poll_get_state')
		self.assertTrue(any('splat' in r for r in v.reasons))

	def test_boot_splat_is_attributed_to_boot(self):
		text = with_line_after(PASSING, '4 CPUs', 'BUG: sleeping function called from invalid context')
		v = verdict.judge(text, EXPECTED)
		self.assertFalse(v.passed)
		self.assertEqual(v.splats[0].case, 'boot (before the tests)')

	def test_missing_suite(self):
		v = verdict.judge(PASSING.replace('rcu_core', 'other'), EXPECTED)
		self.assertFalse(v.passed)
		self.assertTrue(any('suite rcu_core' in r and 'missing' in r for r in v.reasons))
		self.assertEqual(v.unexpected_suites, ['other'])

	def test_missing_case(self):
		text = PASSING.replace('    ok 2 rcu_poll_get_state\n', '').replace('1..3', '1..2')
		v = verdict.judge(text, EXPECTED)
		self.assertFalse(v.passed)
		self.assertIn('rcu_core.rcu_poll_get_state', v.failed_cases())

	def test_truncated_output(self):
		text = PASSING.split('    ok 2')[0]
		v = verdict.judge(text, EXPECTED)
		self.assertFalse(v.passed)
		self.assertTrue(any('truncated' in r for r in v.reasons))
		self.assertTrue(any('without shutting down' in r for r in v.reasons))

	def test_no_shutdown_line(self):
		v = verdict.judge(PASSING.replace('reboot: Restarting system', ''), EXPECTED)
		self.assertFalse(v.passed)

	def test_hang(self):
		text = PASSING.split('    ok 2')[0]
		v = verdict.judge(text, EXPECTED, timed_out=True, timeout=30)
		self.assertFalse(v.passed)
		self.assertTrue(any('did not finish within 30 s' in r for r in v.reasons))
		self.assertTrue(v.tail)

	def test_nothing_ran(self):
		v = verdict.judge('[ 0.1] Kernel panic - not syncing: x\n', EXPECTED)
		self.assertFalse(v.passed)
		self.assertTrue(any('no KTAP output' in r for r in v.reasons))

	def test_expected_splat_does_not_fail(self):
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting',
				       'kunit-rcu: expect splat: suspicious RCU usage\n'
				       'WARNING: suspicious RCU usage\nkunit-rcu: expect splat end')
		self.assertTrue(verdict.judge(text, EXPECTED).passed)


if __name__ == '__main__':
	unittest.main()
