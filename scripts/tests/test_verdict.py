# SPDX-License-Identifier: GPL-2.0
import unittest

import copy
import json

from kunit_rcu import ktap, report, verdict
from kunit_rcu.sources import Case
from tests.helpers import EXPECTED, PASSING, SKIP_CONFIG, with_line_after


class VerdictTest(unittest.TestCase):
	def test_clean_run_passes(self):
		v = verdict.judge(PASSING, EXPECTED, config=SKIP_CONFIG)
		self.assertTrue(v.passed, v.reasons)
		self.assertEqual((v.count(ktap.PASSED), v.count(ktap.SKIPPED)), (2, 1))
		self.assertEqual(v.cases[0].requirements, ['SCH-1'])

	def test_failed_case_fails_the_run_and_is_named(self):
		v = verdict.judge(PASSING.replace('    ok 2 rcu_poll_get_state',
						  '    not ok 2 rcu_poll_get_state'), EXPECTED,
				  config=SKIP_CONFIG)
		self.assertFalse(v.passed)
		self.assertEqual(v.failed_cases(), ['rcu_core.rcu_poll_get_state'])
		self.assertTrue(v.integrity_ok)  # the run was sound, a case failed

	def test_splat_fails_a_run_whose_cases_all_pass(self):
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting',
				       '[    1.15] WARNING: CPU: 1 PID: 9 at kernel/rcu/tree.c:1 f+0x0/0x1')
		v = verdict.judge(text, EXPECTED)
		self.assertFalse(v.passed)
		self.assertEqual(v.failed_cases(), [])
		self.assertEqual(v.splats[0].case, 'rcu_core.rcu_poll_get_state')
		self.assertTrue(any('splat' in r for r in v.reasons))
		self.assertFalse(v.integrity_ok)

	def splat_reason(self, v):
		(reason,) = [r for r in v.reasons if 'kernel splat(s)' in r]
		return reason

	def test_many_splats_make_a_short_message(self):
		lines = [f'WARNING: CPU: 1 PID: 9 at kernel/rcu/tree.c:{n} f+0x0/0x1\n'
			 '---[ end trace 0000000000000000 ]---' for n in range(1, 8)]
		lines += ['BUG: sleeping function called from invalid context at x.c:1\n'
			  '---[ end trace 0000000000000000 ]---'] * 72
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting', '\n'.join(lines))
		v = verdict.judge(text, EXPECTED, config=SKIP_CONFIG,
				  console_path='/r/x86_64-default/console.log')
		self.assertEqual(len([s for s in v.splats if not s.expected]), 79)  # all still judged
		reason = self.splat_reason(v)
		self.assertTrue(reason.startswith('79 kernel splat(s) during the run'), reason)
		self.assertEqual(reason.count('warning in rcu_core.rcu_poll_get_state: WARNING'), 5)
		self.assertIn('tree.c:5 ', reason)
		self.assertNotIn('tree.c:6 ', reason)
		self.assertNotIn('sleeping function', reason)
		self.assertTrue(reason.endswith('; ... and 74 more (3 distinct; see '
						'/r/x86_64-default/console.log)'), reason)
		self.assertLess(len(reason), 800)

	def test_repeated_splat_is_shown_once_with_its_count(self):
		lines = ['BUG: sleeping function called from invalid context at x.c:1\n'
			 '---[ end trace 0000000000000000 ]---'] * 30
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting', '\n'.join(lines))
		reason = self.splat_reason(verdict.judge(text, EXPECTED, config=SKIP_CONFIG))
		self.assertTrue(reason.endswith(': might-sleep in rcu_core.rcu_poll_get_state: BUG: '
						'sleeping function called from invalid context at x.c:1 '
						'(30 times)'), reason)
		self.assertNotIn('more', reason)

	def test_more_splats_without_a_console_path(self):
		lines = [f'WARNING: CPU: 1 PID: 9 at a.c:{n} f\n---[ end trace 0 ]---' for n in range(7)]
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting', '\n'.join(lines))
		reason = self.splat_reason(verdict.judge(text, EXPECTED, config=SKIP_CONFIG))
		self.assertTrue(reason.endswith('; ... and 2 more (2 distinct; see the console log)'),
				reason)

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
		self.assertFalse(v.integrity_ok)
		self.assertFalse(v.finished)

	def test_stopped_output_fails_with_the_callers_reason(self):
		text = PASSING.split('    ok 2')[0]
		v = verdict.judge(text, EXPECTED, stopped='stopped: seen enough')
		self.assertFalse(v.passed)
		self.assertEqual(v.reasons[0], 'stopped: seen enough')
		self.assertFalse(any('without shutting down' in r for r in v.reasons))
		self.assertIn('rcu_core.rcu_read_lock_nesting', [c.id for c in v.cases
							     if c.status == ktap.PASSED])

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
		self.assertTrue(verdict.judge(text, EXPECTED, config=SKIP_CONFIG).passed)

	def test_suite_printed_twice_fails_and_is_named(self):
		suite = PASSING[PASSING.index('[    1.000002]'):PASSING.index('[    1.400000]')]
		failing = suite.replace('    ok 2 rcu_poll_get_state', '    not ok 2 rcu_poll_get_state') \
			.replace('] ok 1 rcu_core', '] not ok 1 rcu_core')
		again = suite.replace('] ok 1 rcu_core', '] ok 2 rcu_core')
		text = PASSING.replace(suite, failing + again).replace('] 1..1', '] 1..2')
		v = verdict.judge(text, EXPECTED, config=SKIP_CONFIG)
		self.assertFalse(v.passed)
		self.assertIn('suite rcu_core printed 2 times in the KTAP output',
			      v.reasons)
		# The failing printing is the one recorded, not silently the last one.
		self.assertEqual(v.failed_cases(), ['rcu_core.rcu_poll_get_state'])
		self.assertEqual(len(v.cases), 3)

	def test_case_printed_twice_fails_and_is_named(self):
		text = PASSING.replace('    ok 2 rcu_poll_get_state\n',
				       '    not ok 2 rcu_poll_get_state\n    ok 2 rcu_poll_get_state\n') \
			.replace('    1..3', '    1..4')
		v = verdict.judge(text, EXPECTED, config=SKIP_CONFIG)
		self.assertFalse(v.passed)
		self.assertIn('case rcu_core.rcu_poll_get_state printed 2 times in the KTAP output', v.reasons)
		self.assertEqual(v.failed_cases(), ['rcu_core.rcu_poll_get_state'])

	def test_case_listed_twice_in_sources_fails_and_is_named(self):
		expected = copy.deepcopy(EXPECTED)
		expected[0].cases.append(Case('rcu_poll_get_state', ['POLL-1']))
		v = verdict.judge(PASSING, expected, config=SKIP_CONFIG)
		self.assertFalse(v.passed)
		self.assertIn('case rcu_core.rcu_poll_get_state listed 2 times in the sources '
			      '(kernel/rcu/rcu_kunit.c)', v.reasons)
		self.assertEqual(len(v.cases), 3)

	def test_suite_defined_twice_in_sources_fails(self):
		v = verdict.judge(PASSING, EXPECTED + copy.deepcopy(EXPECTED), config=SKIP_CONFIG)
		self.assertFalse(v.passed)
		self.assertIn('suite rcu_core defined 2 times in the sources '
			      '(kernel/rcu/rcu_kunit.c, kernel/rcu/rcu_kunit.c)', v.reasons)

	def test_undeclared_skip_fails_and_names_case_and_message(self):
		v = verdict.judge(PASSING, EXPECTED, arch='x86_64', config='default')
		self.assertFalse(v.passed)
		(reason,) = v.reasons
		self.assertIn('case rcu_core.rcu_poll_start skipped without declaring it', reason)
		self.assertIn('"not this config"', reason)
		self.assertIn('add `May skip: <arch or config>` to its comment if that is intended',
			      reason)

	def test_declared_skip_by_arch_or_config_passes(self):
		expected = copy.deepcopy(EXPECTED)
		expected[0].cases[2].may_skip = ['arm64', 'nohz']
		self.assertTrue(verdict.judge(PASSING, expected, arch='arm64').passed)
		self.assertTrue(verdict.judge(PASSING, expected, config='nohz').passed)
		self.assertFalse(verdict.judge(PASSING, expected, arch='x86_64', config='default').passed)

	def test_no_case_passed_fails(self):
		text = PASSING.replace('    ok 1 rcu_read_lock_nesting', '    ok 1 rcu_read_lock_nesting # SKIP x') \
			.replace('    ok 2 rcu_poll_get_state', '    ok 2 rcu_poll_get_state # SKIP y')
		expected = copy.deepcopy(EXPECTED)
		for c in expected[0].cases:
			c.may_skip = [SKIP_CONFIG]
		v = verdict.judge(text, expected, config=SKIP_CONFIG)
		self.assertEqual(v.reasons, ['no case passed'])

	def test_results_json_has_may_skip_and_skip_reason(self):
		v = verdict.judge(PASSING, EXPECTED, config=SKIP_CONFIG)
		data = json.loads(json.dumps(report.to_json(v, {'arch': 'x86_64', 'config': SKIP_CONFIG})))
		case = next(c for c in data['cases'] if c['case'] == 'rcu_poll_start')
		self.assertEqual((case['status'], case['reason'], case['may_skip']),
				 ('skipped', 'not this config', [SKIP_CONFIG]))
		self.assertEqual(data['cases'][0]['may_skip'], [])


if __name__ == '__main__':
	unittest.main()
