# SPDX-License-Identifier: GPL-2.0
import unittest

from kunit_rcu import splat

SAMPLES = {
	'warning': 'WARNING: CPU: 2 PID: 1 at kernel/rcu/update.c:236 rcu_set_runtime_mode+0x1/0x2',
	'suspicious-rcu': 'WARNING: suspicious RCU usage',
	'might-sleep': 'BUG: sleeping function called from invalid context at kernel/sched/core.c:1',
	'lockdep': 'WARNING: possible circular locking dependency detected',
	'kasan': 'BUG: KASAN: slab-out-of-bounds in foo+0x1/0x2',
	'oops': 'Oops: 0002 [#1] PREEMPT SMP',
	'bug': 'kernel BUG at kernel/rcu/tree.c:100!',
	'rcu-stall': 'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:',
	'hung-task': 'INFO: task kunit_try_catch:77 blocked for more than 120 seconds.',
	'panic': 'Kernel panic - not syncing: Fatal exception',
}


class SplatTest(unittest.TestCase):
	def test_each_kind_is_found(self):
		for kind, line in SAMPLES.items():
			with self.subTest(kind=kind):
				found = splat.find(['boot', line, 'more'])
				self.assertEqual(len(found), 1, line)
				self.assertEqual(found[0].kind, kind)
				self.assertFalse(found[0].expected)

	def test_clean_lines_are_not_splats(self):
		for line in ('    ok 1 rcu_poll_start', '# rcu_core: pass:4 fail:0 skip:0 total:4',
			     'rcu: Hierarchical RCU implementation.', 'kunit-rcu: warning text',
			     'Call Trace: is not by itself a splat'):
			self.assertIsNone(splat.classify(line), line)

	def test_one_report_counts_once(self):
		lines = ['=====', 'WARNING: suspicious RCU usage', '6.1.192 #1 Not tainted',
			 'kernel/x.c:1 suspicious rcu_dereference_check() usage!']
		self.assertEqual(len(splat.find(lines)), 1)

	def test_separate_reports_count_twice(self):
		lines = ['WARNING: CPU: 0 PID: 1 at a.c:1 f'] + ['x'] * splat.SPLAT_SPAN + \
			['WARNING: CPU: 0 PID: 1 at b.c:2 g']
		self.assertEqual(len(splat.find(lines)), 2)

	def test_expected_splat_is_excused_only_if_it_matches(self):
		lines = ['kunit-rcu: expect splat: suspicious RCU usage',
			 'WARNING: suspicious RCU usage', 'kunit-rcu: expect splat end']
		self.assertTrue(splat.find(lines)[0].expected)
		lines[1] = 'BUG: sleeping function called from invalid context at x'
		self.assertFalse(splat.find(lines)[0].expected)

	def test_unexpected_splat_right_after_expected_one_is_kept(self):
		lines = ['kunit-rcu: expect splat: suspicious', 'WARNING: suspicious RCU usage',
			 'kunit-rcu: expect splat end', 'WARNING: CPU: 1 PID: 3 at c.c:3 h']
		found = splat.find(lines)
		self.assertEqual([s.expected for s in found], [True, False])


if __name__ == '__main__':
	unittest.main()
