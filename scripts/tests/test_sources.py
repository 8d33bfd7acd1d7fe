# SPDX-License-Identifier: GPL-2.0
import re
import unittest

from kunit_rcu import matrix, sources

REQ_ID = re.compile(r'^(CFG|FW|EB|IRQ|MOD|HP|SCH|TR|EN|PERF|BH|SCHED|SRCU|TASKS|POLL|FUT|IST)'
		    r'-(A?\d+)$')

SAMPLE = '''
/*
 * Covers: EB-1, EB-2
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
		self.assertEqual([(c.name, c.requirements) for c in suite.cases],
				 [('first', ['EB-1', 'EB-2']), ('helperless', [])])

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


class MatrixTest(unittest.TestCase):
	def test_every_covered_id_is_in_the_catalogue(self):
		self.assertEqual(matrix.unknown_ids(), [])

	def test_committed_matrix_is_current(self):
		with open(matrix.MATRIX) as f:
			self.assertEqual(f.read(), matrix.render(), 'run "make matrix" and commit it')


if __name__ == '__main__':
	unittest.main()
