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
	'soft-lockup': 'watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kunit_try_catch:77]',
}

# What 6.1's lockdep_rcu_suspicious() prints: one report, two matching lines.
LOCKDEP_RCU = '''
=============================
WARNING: suspicious RCU usage
6.1.192 #1 Tainted: G                 N
-----------------------------
kernel/rcu/rcu_kunit.c:300 suspicious rcu_dereference_check() usage!

other info that might help us debug this:


rcu_scheduler_active = 2, debug_locks = 1
no locks held by kunit_try_catch/77.

stack backtrace:
CPU: 1 PID: 77 Comm: kunit_try_catch Tainted: G                 N 6.1.192 #1
Call Trace:
 <TASK>
 dump_stack_lvl+0x45/0x5e
 lockdep_rcu_suspicious+0x14c/0x160
 </TASK>
'''.strip('\n').splitlines()

# A WARN from ct_kernel_exit(): the report up to its end marker.
CT_WARN = '''WARNING: CPU: 1 PID: 9 at kernel/context_tracking.c:128 ct_kernel_exit+0x9c/0xb0
Modules linked in:
CPU: 1 PID: 9 Comm: kunit_try_catch Tainted: G                 N 6.1.192 #1
RIP: 0010:ct_kernel_exit+0x9c/0xb0
Call Trace:
 <TASK>
 ct_idle_enter+0x9/0x20
 </TASK>'''.splitlines()
MIGHT_SLEEP = ['BUG: sleeping function called from invalid context at kernel/sched/core.c:9',
	       'in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 9, name: kunit_try_catch',
	       'preempt_count: 1, expected: 0']


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

	def test_gcov_dump_records_are_not_splats(self):
		lines = ['[    9.000000] gcov-dump: run file 0 10 18 0badf00d /b/WARNING: CPU: 1 PID: 2 at x/a.gcda',
			 '[    9.000001] gcov-dump: run data 0 0 789c0bad',
			 '[    9.000002] BUG: unable to handle page fault']
		found = splat.find(lines)
		self.assertEqual([(s.kind, s.line) for s in found], [('bug', 2)])

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

	def test_expected_warn_does_not_excuse_a_bug_after_it(self):
		for end in ([], ['---[ end trace 0000000000000000 ]---']):
			with self.subTest(end_marker=bool(end)):
				lines = (['kunit-rcu: expect splat: WARNING: .* at kernel/context_tracking.c']
					 + CT_WARN + end + MIGHT_SLEEP + ['kunit-rcu: expect splat end'])
				found = splat.find(lines)
				self.assertEqual([(s.kind, s.expected) for s in found],
						 [('warning', True), ('might-sleep', False)])
				self.assertTrue(found[1].text.startswith('BUG: sleeping function'))

	def test_same_kind_after_end_marker_is_judged_on_its_own(self):
		lines = (['kunit-rcu: expect splat: context_tracking'] + CT_WARN +
			 ['---[ end trace 0000000000000000 ]---',
			  'WARNING: CPU: 1 PID: 9 at kernel/rcu/tree.c:1 f+0x0/0x1',
			  'kunit-rcu: expect splat end'])
		self.assertEqual([s.expected for s in splat.find(lines)], [True, False])

	def test_lockdep_rcu_report_is_one_splat(self):
		found = splat.find(LOCKDEP_RCU)
		self.assertEqual([(s.kind, s.expected) for s in found], [('suspicious-rcu', False)])
		lines = (['kunit-rcu: expect splat: suspicious RCU usage'] + LOCKDEP_RCU +
			 ['kunit-rcu: expect splat end'])
		found = splat.find(lines)
		self.assertEqual([(s.kind, s.expected) for s in found], [('suspicious-rcu', True)])

	def test_panic_end_marker_is_not_another_panic(self):
		lines = ['Kernel panic - not syncing: Fatal exception',
			 '---[ end Kernel panic - not syncing: Fatal exception ]---']
		self.assertEqual([s.kind for s in splat.find(lines)], ['panic'])


if __name__ == '__main__':
	unittest.main()
