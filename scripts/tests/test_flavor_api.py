# SPDX-License-Identifier: GPL-2.0
"""FUT-6's check: the folded bh/sched APIs stay out of include/, the read-side APIs stay in."""
import json
import os
import tempfile
import unittest
from unittest import mock

from kunit_rcu import common, flavor_api as fa

# Shaped like 6.1's include/linux/rcupdate.h: every KEPT name defined once,
# in each form the check knows; the removed names only in comments.
RCUPDATE = '''/* SPDX-License-Identifier: GPL-2.0+ */
#ifndef __LINUX_RCUPDATE_H
#define __LINUX_RCUPDATE_H

#ifdef CONFIG_DEBUG_LOCK_ALLOC
int rcu_read_lock_bh_held(void);
int rcu_read_lock_sched_held(void);
#else
static inline int rcu_read_lock_bh_held(void) { return 1; }
#endif

/*
 * In recent kernels that have consolidated synchronize_sched() and
 * synchronize_rcu_bh() into synchronize_rcu(), ...
 */
#define rcu_dereference_bh(p) rcu_dereference_bh_check(p, 0)
#define rcu_dereference_sched(p) rcu_dereference_sched_check(p, 0)

static inline void rcu_read_lock_bh(void)
{
	local_bh_disable();	// was call_rcu_bh() territory
}

static inline void rcu_read_unlock_bh(void)
{
	local_bh_enable();
}

static inline void rcu_read_lock_sched(void)
{
	preempt_disable();
}

static inline notrace void rcu_read_lock_sched_notrace(void)
{
	preempt_disable_notrace();
}

static inline void
rcu_read_unlock_sched(void)
{
	WARN_ON(!rcu_read_lock_sched_held());
	preempt_enable();
}
#endif
'''


class FakeTree:
	"""A kernel tree in a temporary dir with only include/."""

	def __init__(self, test: unittest.TestCase):
		tmp = tempfile.TemporaryDirectory()
		test.addCleanup(tmp.cleanup)
		self.base = tmp.name
		self.root = os.path.join(tmp.name, 'src')
		self.write('include/linux/rcupdate.h', RCUPDATE)
		self.write('include/linux/spinlock.h', '#define spin_lock(l) raw_spin_lock(l)\n')

	def write(self, rel: str, text: str) -> str:
		path = os.path.join(self.root, rel)
		os.makedirs(os.path.dirname(path), exist_ok=True)
		with open(path, 'w') as f:
			f.write(text)
		return path


class FlavorApiTest(unittest.TestCase):
	def setUp(self):
		self.tree = FakeTree(self)

	def test_a_clean_include_passes(self):
		result = fa.check(self.tree.root)
		self.assertEqual((result['status'], result['problems']), ('passed', []))
		self.assertEqual(result['check'], 'flavor_api')
		self.assertEqual(result['covers'], ['FUT-6'])
		self.assertEqual(result['links'], ['BH-1', 'SCHED-1'])
		self.assertEqual(result['removed'], list(fa.REMOVED))
		self.assertEqual(result['kept'], list(fa.KEPT))
		self.assertEqual(result['tree'], self.tree.root)
		self.assertEqual(result['defined']['rcu_read_lock_bh'], 'include/linux/rcupdate.h:19')
		self.assertEqual(result['defined']['rcu_read_unlock_sched'],
				 'include/linux/rcupdate.h:40')

	def test_a_header_that_adds_a_removed_api_again_fails_with_file_and_line(self):
		self.tree.write('include/linux/sched/flavor.h',
				'#include <linux/rcupdate.h>\n\n'
				'void call_rcu_sched(struct rcu_head *head, rcu_callback_t func);\n')
		result = fa.check(self.tree.root)
		self.assertEqual(result['status'], 'failed')
		self.assertEqual(result['problems'],
				 ['include/linux/sched/flavor.h:3: call_rcu_sched is defined/used again'])

	def test_a_use_in_a_macro_counts_each_name_and_line(self):
		self.tree.write('include/net/x.h', '#define X() do { \\\n\tsynchronize_sched(); \\\n'
				'\tsynchronize_rcu_bh_expedited(); } while (0)\n')
		self.assertEqual(fa.check(self.tree.root)['problems'],
				 ['include/net/x.h:2: synchronize_sched is defined/used again',
				  'include/net/x.h:3: synchronize_rcu_bh_expedited is defined/used again'])

	def test_a_mention_in_a_comment_or_string_or_a_longer_name_does_not_count(self):
		self.tree.write('include/linux/notes.h',
				'/* call_rcu_sched() is gone,\n * and so is rcu_barrier_bh(). */\n'
				'// synchronize_sched_expedited() too\n'
				'static const char *s = "/* not a comment: call_rcu_bh";\n'
				'void my_call_rcu_sched(void); int synchronize_sched_x;\n')
		self.assertEqual(fa.check(self.tree.root)['problems'], [])

	def test_a_missing_kept_api_fails(self):
		self.tree.write('include/linux/rcupdate.h',
				RCUPDATE.replace('static inline void rcu_read_lock_sched(void)',
						 'static inline void rcu_read_lock_sched_gone(void)'))
		result = fa.check(self.tree.root)
		self.assertEqual(result['status'], 'failed')
		self.assertEqual(len(result['problems']), 1, result['problems'])
		self.assertRegex(result['problems'][0], r'^rcu_read_lock_sched is not defined in '
				 r'include/linux/rcupdate\.h')

	def test_a_kept_api_only_used_or_in_a_comment_is_missing(self):
		text = RCUPDATE.replace('int rcu_read_lock_sched_held(void);\n', '') \
			.replace('#define rcu_dereference_sched(p)', '/* #define rcu_dereference_sched(p) */')
		self.tree.write('include/linux/rcupdate.h', text)
		problems = fa.check(self.tree.root)['problems']
		self.assertEqual([p.split()[0] for p in problems],
				 ['rcu_dereference_sched', 'rcu_read_lock_sched_held'])

	def test_a_kept_api_in_another_linux_header_is_found(self):
		self.tree.write('include/linux/rcupdate.h',
				RCUPDATE.replace('#define rcu_dereference_bh(p)', '#define rcu_deref_bh(p)'))
		self.tree.write('include/linux/rcu_bh.h', '#define rcu_dereference_bh(p) (p)\n')
		result = fa.check(self.tree.root)
		self.assertEqual(result['problems'], [])
		self.assertEqual(result['defined']['rcu_dereference_bh'], 'include/linux/rcu_bh.h:1')

	def test_an_unprepared_tree_fails_with_a_hint(self):
		result = fa.check(os.path.join(self.tree.root, 'nothing'))
		self.assertEqual(result['status'], 'failed')
		self.assertEqual(len(result['problems']), 1)
		self.assertIn('make prepare', result['problems'][0])

	def test_check_tree_writes_the_result_for_every_arch(self):
		cache = os.path.join(self.tree.base, 'cache')
		results = os.path.join(self.tree.base, 'results')
		env = {'KUNIT_RCU_RESULTS': results, 'KUNIT_RCU_CACHE': cache}  # locks there too
		with mock.patch.dict(os.environ, env), \
		     mock.patch.object(fa, 'tree_dir', return_value=self.tree.root), \
		     mock.patch.object(fa, 'log') as log:
			for arch in common.ARCHES:
				self.assertIsNone(fa.load_result(arch))
			self.assertEqual(fa.check_tree(), (1, 0, 0))
			for arch in common.ARCHES:
				self.assertEqual(fa.load_result(arch)['status'], 'passed')
				path = os.path.join(results, f'{arch}-default', 'flavor-api.json')
				with open(path) as f:
					self.assertEqual(json.load(f)['covers'], ['FUT-6'])
			self.tree.write('include/linux/x.h', 'int synchronize_sched(void);\n')
			self.assertEqual(fa.check_tree(), (0, 1, 0))
			log.assert_any_call('FAIL: include/linux/x.h:1: synchronize_sched is '
					    'defined/used again')
			self.assertEqual(fa.load_result('arm64')['status'], 'failed')
		self.assertFalse(fa.locks.held())

	def test_the_prepared_tree_passes(self):
		tree = common.tree_dir()
		if not os.path.isfile(os.path.join(tree, fa.RCUPDATE)):
			self.skipTest(f'no prepared tree at {tree} (make prepare)')
		result = fa.check(tree)
		self.assertEqual((result['status'], result['problems']), ('passed', []))
		self.assertEqual(sorted(result['defined']), sorted(fa.KEPT))


if __name__ == '__main__':
	unittest.main()
