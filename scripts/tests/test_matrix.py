# SPDX-License-Identifier: GPL-2.0
import contextlib
import json
import io
import os
import re
import tempfile
import unittest
from unittest import mock

from kunit_rcu import matrix
from kunit_rcu.common import UserError

# What the sources say, per arch: an x86-only case covers IST-1.
CASES = {
	'arm64': {'s.nest': ['SCH-1'], 's.poll': ['POLL-1'], 's.full': ['POLL-1']},
	'x86_64': {'s.nest': ['SCH-1'], 's.poll': ['POLL-1'], 's.full': ['POLL-1'],
		   'ist.int3': ['IST-1']},
}


def _case(name: str, status: str, reason: str = '') -> dict:
	suite, case = name.split('.')
	return {'suite': suite, 'case': case, 'status': status, 'reason': reason}


RESULTS = {
	'x86_64': {'verdict': 'pass', 'cases': [
		_case('s.nest', 'passed'), _case('s.poll', 'skipped', 'no | poll here'),
		_case('s.full', 'failed'), _case('ist.int3', 'passed')]},
	'arm64': {'verdict': 'fail', 'cases': [_case('s.nest', 'missing')]},
}


class MatrixTest(unittest.TestCase):
	def setUp(self):
		patcher = mock.patch.object(matrix.sources, 'requirement_map',
					    side_effect=lambda arch, *a: CASES[arch])
		patcher.start()
		self.addCleanup(patcher.stop)
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		self.not_covered = self.reasons('- IST-1 [arm64]: x86 only\n- FUT-1: measured\n')

	def reasons(self, text: str) -> str:
		path = os.path.join(self.tmp.name, 'not-covered.md')
		with open(path, 'w') as f:
			f.write('# why\n\n    - ID [arch]: reason\n\n' + text)
		return path

	def rows(self, text: str) -> dict:
		out = {}
		for line in text.splitlines():
			m = re.match(r'^\| ([A-Z]+-[A-Z]*\d+) \| .*? \| (.*) \| (.*) \|$', line)
			if m:
				out[m.group(1)] = (m.group(2), m.group(3))
		return out

	def test_cells_show_each_case_with_its_status(self):
		rows = self.rows(matrix.render(RESULTS, self.not_covered))
		self.assertEqual(rows['SCH-1'], ('`s.nest` not run', '`s.nest` passed'))
		self.assertEqual(rows['POLL-1'][1], '`s.poll` skipped: no \\| poll here; `s.full` failed')
		self.assertEqual(rows['POLL-1'][0], '`s.poll` not run; `s.full` not run')

	def test_arch_only_cases_and_written_reasons(self):
		rows = self.rows(matrix.render(RESULTS, self.not_covered))
		self.assertEqual(rows['IST-1'], ('n/a: x86 only', '`ist.int3` passed'))
		self.assertEqual(rows['FUT-1'], ('n/a: measured', 'n/a: measured'))
		self.assertEqual(rows['EB-1'], ('not covered', 'not covered'))

	def test_covered_only_where_a_case_passed(self):
		text = matrix.render(RESULTS, self.not_covered)
		total = len(matrix.catalogue())
		self.assertIn(f'Covered (a case or tooling check passed): arm64 0 of {total}, '
			      f'x86_64 2 of {total}; '
			      'not applicable with a written reason: arm64 2, x86_64 1.', text)
		self.assertIn('The last run failed on arm64', text)

	def test_a_tooling_check_covers_its_requirement(self):
		results = {a: dict(r) for a, r in RESULTS.items()}
		results['x86_64']['tooling'] = {'kconfig_check': {'status': 'passed'}}
		text = matrix.render(results, self.not_covered)
		self.assertEqual(self.rows(text)['CFG-1'], ('tooling: `kconfig_check` not run',
							    'tooling: `kconfig_check` passed'))
		total = len(matrix.catalogue())
		self.assertIn(f'arm64 0 of {total}, x86_64 3 of {total};', text)
		results['arm64']['tooling'] = {'kconfig_check': {'status': 'failed'}}
		self.assertEqual(self.rows(matrix.render(results, self.not_covered))['CFG-1'][0],
				 'tooling: `kconfig_check` failed')

	def test_a_written_reason_for_a_tooling_covered_id_is_an_error(self):
		problems = matrix.not_covered_problems(self.reasons('- CFG-1 [arm64]: stale\n'))
		self.assertEqual(len(problems), 1, problems)
		self.assertIn('CFG-1 has a written reason and the tooling check(s) kconfig_check',
			      problems[0])

	def test_missing_results_stop_with_a_message(self):
		with mock.patch.dict(os.environ, {'KUNIT_RCU_RESULTS': self.tmp.name}):
			with self.assertRaisesRegex(UserError, r'^no results for ARCH=arm64: '
						    r'run make run ARCH=arm64 first'):
				matrix.render(not_covered=self.not_covered)

	def test_a_case_passed_in_another_config_says_which(self):
		results = {a: dict(r) for a, r in RESULTS.items()}
		results['x86_64']['configs'] = {
			'nohz': {'verdict': 'pass', 'cases': [_case('s.poll', 'passed')]},
			'nopreempt': {'verdict': 'pass', 'cases': [_case('s.poll', 'passed'),
								   _case('s.nest', 'skipped')]}}
		results['arm64']['configs'] = {
			'nohz': {'verdict': 'fail', 'cases': [_case('s.nest', 'failed')]}}
		text = matrix.render(results, self.not_covered)
		rows = self.rows(text)
		self.assertEqual(rows['POLL-1'][1], '`s.poll` passed (nohz, nopreempt); `s.full` failed')
		self.assertEqual(rows['SCH-1'], ('`s.nest` failed (nohz)', '`s.nest` passed'))
		self.assertIn('The last run failed on arm64, arm64 CONFIG=nohz', text)
		total = len(matrix.catalogue())
		self.assertIn(f'arm64 0 of {total}, x86_64 3 of {total};', text)

	def test_results_are_read_from_kunit_rcu_results(self):
		runs = [(a, 'default') for a in RESULTS] + list(matrix.CHECK_CONFIG_RUNS)
		for arch, config in runs:
			os.makedirs(os.path.join(self.tmp.name, f'{arch}-{config}'))
			with open(os.path.join(self.tmp.name, f'{arch}-{config}', 'results.json'), 'w') as f:
				json.dump(RESULTS[arch] if config == 'default' else
					  {'verdict': 'pass', 'cases': []}, f)
		results = {a: dict(r, configs={c: {'verdict': 'pass', 'cases': []}
					       for x, c in matrix.CHECK_CONFIG_RUNS if x == a})
			   for a, r in RESULTS.items()}
		with mock.patch.dict(os.environ, {'KUNIT_RCU_RESULTS': self.tmp.name}):
			self.assertEqual(matrix.render(not_covered=self.not_covered),
					 matrix.render(results, self.not_covered))
			# A tooling check's own result file, next to the run's.
			with open(os.path.join(self.tmp.name, 'arm64-default', 'kconfig-check.json'),
				  'w') as f:
				json.dump({'status': 'passed'}, f)
			self.assertEqual(self.rows(matrix.render(not_covered=self.not_covered))['CFG-1'],
					 ('tooling: `kconfig_check` passed', 'tooling: `kconfig_check` not run'))

	def test_unknown_id_or_arch_in_not_covered_is_an_error(self):
		path = self.reasons('- NOPE-1: typo\n- EB-1 [riscv]: no\n- EB-2 reason without colon\n')
		_, problems = matrix.read_not_covered(path)
		self.assertEqual(len(problems), 3, problems)
		self.assertIn('unknown requirement ID NOPE-1', problems[0])
		self.assertIn('unknown arch riscv', problems[1])
		with self.assertRaisesRegex(UserError, 'NOPE-1'):
			matrix.render(RESULTS, path)

	def test_reason_for_an_id_with_cases_is_an_error(self):
		path = self.reasons('- SCH-1 [x86_64]: stale\n- IST-1 [arm64]: fine\n')
		problems = matrix.not_covered_problems(path)
		self.assertEqual(len(problems), 1, problems)
		self.assertIn('SCH-1 [x86_64] has a written reason and case(s) s.nest', problems[0])

	def test_check_compares_with_the_committed_file(self):
		committed = os.path.join(self.tmp.name, 'matrix.md')
		with mock.patch.object(matrix, 'MATRIX', committed), \
		     mock.patch.object(matrix, 'render', return_value='fresh\n'), \
		     contextlib.redirect_stdout(io.StringIO()) as out:
			self.assertEqual(matrix.check(), (0, 1, 0))
			self.assertIn('run make matrix and commit it', out.getvalue())
			with open(committed, 'w') as f:
				f.write('fresh\n')
			self.assertEqual(matrix.check(), (1, 0, 0))
			self.assertEqual(matrix.check('nopreempt'), (0, 0, 1))
		with mock.patch.object(matrix, 'render', side_effect=UserError('no results for ARCH=arm64')), \
		     contextlib.redirect_stdout(io.StringIO()):
			self.assertEqual(matrix.check(), (0, 1, 0))


class ProjectMatrixTest(unittest.TestCase):
	"""The project's own files; the matrix content itself is compared by make check."""

	def test_every_covered_id_is_in_the_catalogue(self):
		self.assertEqual(matrix.unknown_ids(), [])

	def test_not_covered_file_names_known_ids_without_cases(self):
		self.assertEqual(matrix.not_covered_problems(), [])

	def test_committed_matrix_lists_the_catalogue(self):
		with open(matrix.MATRIX) as f:
			ids = re.findall(r'^\| ([A-Z]+-[A-Z]*\d+) \|', f.read(), re.M)
		self.assertEqual(ids, [rid for rid, _ in matrix.catalogue()],
				 'run "make matrix" and commit it')


if __name__ == '__main__':
	unittest.main()
