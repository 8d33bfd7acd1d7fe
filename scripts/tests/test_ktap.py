# SPDX-License-Identifier: GPL-2.0
import unittest

from kunit_rcu import ktap
from tests.helpers import PASSING


class KtapTest(unittest.TestCase):
	def test_suites_cases_and_statuses(self):
		log = ktap.parse(PASSING)
		self.assertTrue(log.started)
		self.assertEqual(log.top_plan, 1)
		self.assertEqual([s.name for s in log.suites], ['rcu_core'])
		suite = log.suites[0]
		self.assertEqual(suite.plan, 3)
		self.assertEqual([(c.name, c.status) for c in suite.children],
				 [('rcu_read_lock_nesting', ktap.PASSED),
				  ('rcu_poll_get_state', ktap.PASSED),
				  ('rcu_poll_start', ktap.SKIPPED)])
		self.assertEqual(suite.children[2].reason, 'not this config')
		self.assertEqual(log.problems, [])

	def test_failure_log_goes_to_its_case(self):
		text = PASSING.replace('    ok 2 rcu_poll_get_state',
				       '    # rcu_poll_get_state: EXPECTATION FAILED at x.c:1\n'
				       '[    1.1] Expected done_inside to be false\n'
				       '    not ok 2 rcu_poll_get_state')
		case = ktap.parse(text).suites[0].children[1]
		self.assertEqual(case.status, ktap.FAILED)
		self.assertIn('Expected done_inside to be false', case.log)
		self.assertEqual(ktap.parse(text).suites[0].children[0].log, [])

	def test_dash_and_timestamps_are_optional(self):
		text = 'KTAP version 1\n1..1\n    # Subtest: s\n    1..1\n    ok 1 - c\nok 1 - s\n'
		log = ktap.parse(text)
		self.assertEqual(log.suites[0].children[0].name, 'c')
		self.assertEqual(log.problems, [])

	def test_parameterized_case_keeps_its_params(self):
		text = ('KTAP version 1\n1..1\n    # Subtest: s\n    1..1\n'
			'        KTAP version 1\n        # Subtest: p\n'
			'        ok 1 one\n        not ok 2 two\n    not ok 1 p\nnot ok 1 s\n')
		case = ktap.parse(text).suites[0].children[0]
		self.assertEqual(case.status, ktap.FAILED)
		self.assertEqual([c.name for c in case.children], ['one', 'two'])

	def test_failed_parameters_lend_their_log_to_the_case(self):
		text = ('KTAP version 1\n1..1\n    # Subtest: s\n    1..1\n'
			'        KTAP version 1\n        # Subtest: p\n'
			'        # p: fine\n        ok 1 one\n'
			'        # p: EXPECTATION FAILED at x.c:9\n        not ok 2 two\n'
			'    # p: pass:1 fail:1 skip:0 total:2\n    not ok 1 p\nnot ok 1 s\n')
		case = ktap.parse(text).suites[0].children[0]
		self.assertEqual(ktap.case_log(case),
				 ['    # p: pass:1 fail:1 skip:0 total:2', 'failed two:',
				  '          # p: EXPECTATION FAILED at x.c:9'])

	def test_truncated_inside_a_suite(self):
		text = PASSING.split('    ok 2')[0]
		log = ktap.parse(text)
		self.assertEqual(log.suites[0].status, ktap.MISSING)
		self.assertEqual(len(log.suites[0].children), 1)
		self.assertTrue(any('no result line' in p for p in log.problems))

	def test_plan_mismatch_is_a_problem(self):
		log = ktap.parse(PASSING.replace('    1..3', '    1..4'))
		self.assertTrue(any('planned 4 cases, printed 3' in p for p in log.problems))
		log = ktap.parse(PASSING.replace('] 1..1', '] 1..2'))
		self.assertTrue(any('planned 2 suites' in p for p in log.problems))

	def test_second_header_is_a_problem(self):
		log = ktap.parse(PASSING + PASSING)
		self.assertTrue(any('second KTAP header' in p for p in log.problems))

	def test_no_ktap(self):
		log = ktap.parse('[    0.1] Kernel panic - not syncing: VFS\n')
		self.assertFalse(log.started)
		self.assertEqual(log.suites, [])


if __name__ == '__main__':
	unittest.main()


class KtapLikeKunitToolTest(unittest.TestCase):
	"""Shapes of kunit_tool's test_data logs (ktap_check runs the logs themselves)."""

	def test_two_space_indentation_nests(self):
		text = 'KTAP version 1\n1..1\n  KTAP version 1\n  1..2\n  ok 1 a\n  not ok 2 b\nok 1 s\n'
		(suite,) = ktap.parse(text).suites
		self.assertEqual([(c.name, c.status) for c in suite.children],
				 [('a', ktap.PASSED), ('b', ktap.FAILED)])

	def test_prefix_of_the_header_is_dropped_from_every_line(self):
		text = ('[    T1] boot noise\n[    T1] TAP version 14\n[    T1] 1..1\n'
			'[    T1] \t# Subtest: s\n[    T1] \t1..1\n[    T1] \tok 1 - c\n[    T1] ok 1 - s\n')
		(suite,) = ktap.parse(text).suites
		self.assertEqual((suite.name, suite.children[0].name), ('s', 'c'))

	def test_subtest_header_without_tests_is_no_pass(self):
		text = ('TAP version 14\n1..1\n  # Subtest: suite\n  1..1\n    # Subtest: case\n'
			'  ok 1 - case\nok 1 - suite\n')
		case = ktap.parse(text).suites[0].children[0]
		self.assertEqual((case.status, case.reason), (ktap.MISSING, 'no tests run'))
