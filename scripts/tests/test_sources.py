# SPDX-License-Identifier: GPL-2.0
import re
import unittest

import os
import tempfile

from kunit_rcu import sources

REQ_ID = re.compile(r'^(CFG|FW|EB|IRQ|MOD|HP|SCH|TR|EN|PERF|BH|SCHED|SRCU|TASKS|POLL|FUT|IST)'
		    r'-(A?\d+)$')

SAMPLE = '''
/*
 * Covers: EB-1, EB-2
 * May skip: nopreempt, arm64 (no reader depth to observe)
 *
 * text
 */
static void first(struct kunit *test)
{
}

static void helperless(struct kunit *test)
{
}

static struct kunit_case things_cases[] = {
	KUNIT_CASE(first),
	KUNIT_CASE_PARAM(helperless, gen),
	{}
};

static struct kunit_suite things_suite = {
	.name = "things",
	.test_cases = things_cases,
};
'''


class SourcesTest(unittest.TestCase):
	def test_parse(self):
		(suite,) = sources.parse_file('x.c', SAMPLE)
		self.assertEqual(suite.name, 'things')
		self.assertEqual([(c.name, c.requirements, c.may_skip, c.path) for c in suite.cases],
				 [('first', ['EB-1', 'EB-2'], ['nopreempt', 'arm64'], 'x.c'),
				  ('helperless', [], [], 'x.c')])

	def test_arch_dirs_belong_to_their_arch(self):
		with tempfile.TemporaryDirectory() as repo:
			for path in ('kernel/rcu/common.c', 'arch/x86/kernel/x86only.c',
				     'arch/arm64/kernel/arm64only.c'):
				os.makedirs(os.path.join(repo, os.path.dirname(path)))
				name = os.path.basename(path)[:-2]
				with open(os.path.join(repo, path), 'w') as f:
					f.write(SAMPLE.replace('"things"', f'"{name}"'))
			got = {arch: [(s.name, [c.path for c in s.cases]) for s in sources.suites_for(arch, repo)]
			       for arch in ('x86_64', 'arm64')}
		self.assertEqual(got['arm64'], [('common', ['kernel/rcu/common.c'] * 2),
						('arm64only', ['arch/arm64/kernel/arm64only.c'] * 2)])
		self.assertEqual(got['x86_64'], [('common', ['kernel/rcu/common.c'] * 2),
						 ('x86only', ['arch/x86/kernel/x86only.c'] * 2)])

	def test_absent_overlay_dirs_are_empty(self):
		with tempfile.TemporaryDirectory() as repo:
			os.makedirs(os.path.join(repo, 'kernel/rcu'))
			with open(os.path.join(repo, 'kernel/rcu/common.c'), 'w') as f:
				f.write(SAMPLE)
			for arch in ('x86_64', 'arm64'):
				self.assertEqual([s.name for s in sources.suites_for(arch, repo)], ['things'])

	def test_may_skip_names_are_arches_or_configs(self):
		self.assertIn('x86_64', sources.skip_names())
		self.assertIn('default', sources.skip_names())
		self.assertEqual(sources.unknown_skip_names(), [])

	def test_project_cases_all_cover_known_requirements(self):
		for arch in ('x86_64', 'arm64'):
			suites = sources.suites_for(arch)
			self.assertTrue(suites, arch)
			for suite in suites:
				for case in suite.cases:
					with self.subTest(case=f'{suite.name}.{case.name}'):
						self.assertTrue(case.requirements, 'no "Covers:" line')
						for rid in case.requirements:
							self.assertRegex(rid, REQ_ID)


if __name__ == '__main__':
	unittest.main()
