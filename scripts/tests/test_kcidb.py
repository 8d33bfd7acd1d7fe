# SPDX-License-Identifier: GPL-2.0
"""kcidb.json: KCIDB v5.3 data from a verdict, and the validator that checks it."""

import argparse
import copy
import json
import os
import tempfile
import unittest
from unittest import mock

from kunit_rcu import bench, kcidb, packages, prepare, report, verdict
from tests.helpers import BOOT, EXPECTED, PASSING, SKIP_CONFIG, with_line_after

COMMIT = '0123456789abcdef0123456789abcdef01234567'
META = {'arch': 'x86_64', 'config': SKIP_CONFIG, 'debian_version': '6.1.192-3',
	'tested_debian_version': '6.1.192-3', 'extra_patches': [],
	'started': '2026-12-05T14:13:04Z', 'timings': {'prepare': 1.5, 'build': 214.4},
	'kconfig_add': ['CONFIG_PREEMPT_NONE=y'], 'kernel_args': [], 'qemu_args': [],
	'tree': '/cache/src', 'tree_commit': COMMIT, 'build_dir': '/nonexistent/.kunit'}
SERIES = ['0001-rcu-Add-Kconfig-option.patch', '0002-kunit-tool-Boot.patch']
FAILING = PASSING.replace('    ok 2 rcu_poll_get_state',
			  '    # rcu_poll_get_state: EXPECTATION FAILED at kernel/rcu/rcu_kunit.c:9\n'
			  '[    1.1]     Expected done to be false\n'
			  '    not ok 2 rcu_poll_get_state')
TRUNCATED = PASSING.split('    ok 2')[0]
CRASHED = BOOT + '[    0.900000] Kernel panic - not syncing: VFS: Unable to mount root fs\n'
CASES = ['kunit.rcu_core.rcu_read_lock_nesting', 'kunit.rcu_core.rcu_poll_get_state',
	 'kunit.rcu_core.rcu_poll_start']


def doc_of(console: str, **judge) -> dict:
	v = verdict.judge(console, EXPECTED, **dict({'config': SKIP_CONFIG}, **judge))
	return kcidb.from_verdict(v, META, series=SERIES, compiler='gcc (Debian 12.2.0-14) 12.2.0')


def statuses(doc: dict) -> dict:
	return {t['path']: t['status'] for t in doc['tests']}


def test_of(doc: dict, path: str) -> dict:
	(test,) = [t for t in doc['tests'] if t['path'] == path]
	return test


class FromVerdictTest(unittest.TestCase):
	def assertValid(self, doc):
		self.assertEqual(kcidb.validate(doc), [])
		# What goes to the file: plain JSON, the same after a round trip.
		self.assertEqual(json.loads(json.dumps(doc)), doc)

	def test_passing_run(self):
		doc = doc_of(PASSING)
		self.assertValid(doc)
		self.assertEqual(doc['version'], {'major': 5, 'minor': 3})
		self.assertEqual(statuses(doc), {CASES[0]: 'PASS', CASES[1]: 'PASS', CASES[2]: 'SKIP',
						 kcidb.RUN_PATH: 'PASS'})
		(co,), (b,) = doc['checkouts'], doc['builds']
		self.assertEqual((co['id'], co['git_commit_hash'], co['origin']),
				 (f'kunit_rcu:{COMMIT}', COMMIT, 'kunit_rcu'))
		self.assertEqual(co['misc']['series'], SERIES)
		self.assertIn('2 patches', co['comment'])
		self.assertEqual((b['checkout_id'], b['architecture'], b['config_name'], b['status']),
				 (co['id'], 'x86_64', SKIP_CONFIG, 'PASS'))
		self.assertEqual(b['compiler'], 'gcc (Debian 12.2.0-14) 12.2.0')
		self.assertEqual(b['duration'], 214.4)
		self.assertTrue(all(t['build_id'] == b['id'] and t['id'].startswith(b['id'] + ':')
				    for t in doc['tests']))
		skip = test_of(doc, CASES[2])
		self.assertEqual((skip['comment'], skip['misc']['may_skip']),
				 ('not this config', [SKIP_CONFIG]))
		self.assertEqual(test_of(doc, CASES[0])['misc']['requirements'], ['SCH-1'])
		self.assertNotIn('log_excerpt', test_of(doc, kcidb.RUN_PATH))

	def test_failing_case(self):
		doc = doc_of(FAILING)
		self.assertValid(doc)
		self.assertEqual(statuses(doc)[CASES[1]], 'FAIL')
		self.assertIn('Expected done to be false', test_of(doc, CASES[1])['log_excerpt'])
		run = test_of(doc, kcidb.RUN_PATH)
		self.assertEqual(run['status'], 'FAIL')  # the run finished: its result is a FAIL
		self.assertIn('1 case(s) failed: rcu_core.rcu_poll_get_state', run['log_excerpt'])

	def test_splat_fails_the_run_check_only(self):
		text = with_line_after(PASSING, 'ok 1 rcu_read_lock_nesting',
				       '[    1.15] WARNING: CPU: 1 PID: 9 at kernel/rcu/tree.c:1 f+0x0/0x1')
		doc = doc_of(text)
		self.assertValid(doc)
		self.assertEqual(statuses(doc)[CASES[0]], 'PASS')
		run = test_of(doc, kcidb.RUN_PATH)
		self.assertEqual((run['status'], run['misc']['splats']), ('FAIL', 1))
		self.assertIn('WARNING: CPU: 1 PID: 9 at kernel/rcu/tree.c:1', run['log_excerpt'])

	def test_truncated_run_misses_what_did_not_report(self):
		doc = doc_of(TRUNCATED)
		self.assertValid(doc)
		# The case that printed "ok" passed; the two after it never reported.
		self.assertEqual(statuses(doc), {CASES[0]: 'PASS', CASES[1]: 'MISS', CASES[2]: 'MISS',
						 kcidb.RUN_PATH: 'ERROR'})
		self.assertEqual(test_of(doc, CASES[1])['comment'], kcidb.MISSING_COMMENT)
		self.assertIn('truncated KTAP', test_of(doc, kcidb.RUN_PATH)['log_excerpt'])

	def test_crashed_run_has_no_pass(self):
		doc = doc_of(CRASHED)
		self.assertValid(doc)
		self.assertEqual(statuses(doc), {CASES[0]: 'MISS', CASES[1]: 'MISS', CASES[2]: 'MISS',
						 kcidb.RUN_PATH: 'ERROR'})
		excerpt = test_of(doc, kcidb.RUN_PATH)['log_excerpt']
		self.assertIn('no KTAP output', excerpt)
		self.assertIn('console tail:\n', excerpt)
		self.assertIn('Kernel panic - not syncing: VFS', excerpt)

	def test_hung_run_is_an_error(self):
		doc = doc_of(TRUNCATED, timed_out=True, timeout=30)
		self.assertValid(doc)
		self.assertEqual(statuses(doc)[kcidb.RUN_PATH], 'ERROR')
		self.assertNotIn('PASS', [statuses(doc)[c] for c in CASES[1:]])

	def test_missing_suite_in_a_finished_run(self):
		doc = doc_of(PASSING.replace('rcu_core', 'other'))
		self.assertValid(doc)
		self.assertEqual(statuses(doc), {CASES[0]: 'MISS', CASES[1]: 'MISS', CASES[2]: 'MISS',
						 kcidb.RUN_PATH: 'FAIL'})

	def test_long_log_is_cut_to_the_schema_limit(self):
		v = verdict.judge(FAILING, EXPECTED, config=SKIP_CONFIG)
		v.cases[1].log = ['first line'] + [f'line {n} ' + 'x' * 100 for n in range(400)] + ['last']
		doc = kcidb.from_verdict(v, META, series=SERIES, compiler='')
		self.assertValid(doc)
		text = test_of(doc, CASES[1])['log_excerpt']
		self.assertEqual(len(text), kcidb.EXCERPT_MAX)
		self.assertTrue(text.startswith('first line\n') and text.endswith('\nlast'))
		self.assertIn(' characters, cut to 16384 ...]', text)
		self.assertNotIn('compiler', doc['builds'][0])

	def test_paths_of_odd_names(self):
		self.assertEqual(kcidb.case_path('rcu core', 'a.b/c'), 'kunit.rcu_core.a_b_c')
		self.assertEqual(kcidb.case_path('s', ''), 'kunit.s._')
		expected = copy.deepcopy(EXPECTED)
		v = verdict.judge(PASSING, expected, config=SKIP_CONFIG)
		v.cases[1].case, v.cases[2].case = 'x.y', 'x/y'
		doc = kcidb.from_verdict(v, META, series=[], compiler='')
		self.assertValid(doc)
		self.assertEqual([t['path'] for t in doc['tests']][1:3],
				 ['kunit.rcu_core.x_y', 'kunit.rcu_core.x_y_2'])

	def test_extra_patches_and_no_commit(self):
		meta = dict(META, extra_patches=['/tmp/fix.patch'], debian_version=None)
		del meta['tree_commit'], meta['timings']
		v = verdict.judge(PASSING, EXPECTED, config=SKIP_CONFIG)
		doc = kcidb.from_verdict(v, meta, series=SERIES, compiler='')
		self.assertValid(doc)
		co = doc['checkouts'][0]
		self.assertNotIn('git_commit_hash', co)
		self.assertNotIn('git_repository_branch', co)  # scratch/ is a detached checkout
		self.assertEqual(co['misc']['extra_patches'], ['fix.patch'])
		self.assertIn('-extra-', doc['builds'][0]['id'])

	def test_compiler_from_the_build_dirs_config(self):
		with tempfile.TemporaryDirectory() as d:
			with open(os.path.join(d, '.config'), 'w') as f:
				f.write('CONFIG_CC_VERSION_TEXT="gcc (Debian 12.2.0-14) 12.2.0"\nCONFIG_X=y\n')
			self.assertEqual(kcidb.compiler_of(d), 'gcc (Debian 12.2.0-14) 12.2.0')
		self.assertEqual(kcidb.compiler_of('/nonexistent'), '')

	def test_report_write_writes_kcidb_json(self):
		v = verdict.judge(FAILING, EXPECTED, config=SKIP_CONFIG)
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(prepare, 'series_patches', return_value=['/r/patches/0001-a.patch']):
			report.write(d, v, META, FAILING)
			with open(os.path.join(d, 'kcidb.json')) as f:
				doc = json.load(f)
			with open(os.path.join(d, 'results.json')) as f:
				self.assertEqual(json.load(f)['cases'][1]['status'], 'failed')
		self.assertEqual(kcidb.validate(doc), [])
		self.assertEqual(doc['checkouts'][0]['misc']['series'], ['0001-a.patch'])
		self.assertEqual(statuses(doc)[CASES[1]], 'FAIL')


class FiguresTest(unittest.TestCase):
	FIGURES = [kcidb.Figure('loop.cold.make_run', 300.5, 's', 'make run, cold'),
		   kcidb.Figure('loop.cold.ratio', 1.08)]

	def test_figures_are_done_tests_with_numbers(self):
		doc = kcidb.from_figures(self.FIGURES, META, series=SERIES)
		self.assertEqual(kcidb.validate(doc), [])
		self.assertEqual([(t['path'], t['status'], t['number']) for t in doc['tests']],
				 [('kunit_rcu.bench.loop.cold.make_run', 'DONE', {'value': 300.5, 'unit': 's'}),
				  ('kunit_rcu.bench.loop.cold.ratio', 'DONE', {'value': 1.08})])
		self.assertNotIn('status', doc['builds'][0])

	def test_make_bench_writes_its_figures(self):
		coverage = [kcidb.Figure('coverage.decode', 2.5, 's')]
		args = argparse.Namespace(arch='x86_64', config='default', bench='')
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.dict(os.environ, {'KUNIT_RCU_RESULTS': d}), \
		     mock.patch.object(prepare, 'prepare', return_value=COMMIT), \
		     mock.patch.object(prepare, 'series_patches', return_value=[]), \
		     mock.patch.object(packages, 'installed_version', return_value='6.1.192-3'), \
		     mock.patch.object(bench, 'loop', return_value=list(self.FIGURES)) as loop, \
		     mock.patch.object(bench, 'coverage_cost', return_value=coverage):
			self.assertEqual(bench.main(args), 0)
			with open(os.path.join(d, 'bench-x86_64-default', 'kcidb.json')) as f:
				doc = json.load(f)
		loop.assert_called_once()
		self.assertEqual(kcidb.validate(doc), [])
		self.assertEqual([t['path'] for t in doc['tests']],
				 ['kunit_rcu.bench.loop.cold.make_run', 'kunit_rcu.bench.loop.cold.ratio',
				  'kunit_rcu.bench.coverage.decode'])
		self.assertEqual(doc['checkouts'][0]['git_commit_hash'], COMMIT)


class ValidateTest(unittest.TestCase):
	def setUp(self):
		self.doc = doc_of(FAILING)
		self.assertEqual(kcidb.validate(self.doc), [])
		self.test = self.doc['tests'][0]

	def problems(self) -> str:
		found = kcidb.validate(self.doc)
		self.assertTrue(found, 'validate() found nothing')
		return '\n'.join(found)

	def test_bad_ids(self):
		for bad in ('rcu_core.x', 'Kunit_RCU:x', 'kunit-rcu:x', ':x', 'kunit_rcu:', 42):
			with self.subTest(id=bad):
				self.test['id'] = bad
				self.assertIn('tests[0].id', self.problems())

	def test_id_of_another_origin(self):
		self.test['id'] = 'other:x'
		self.assertIn('does not start with its origin "kunit_rcu:"', self.problems())

	def test_bad_origin(self):
		self.doc['builds'][0]['origin'] = 'Kunit RCU'
		self.assertIn('builds[0].origin', self.problems())

	def test_bad_parent_ids(self):
		self.test['build_id'] = 'kunit_rcu:no-such-build'
		self.assertIn('tests[0].build_id', self.problems())
		self.test['build_id'] = 'no origin'
		self.assertIn('is not <origin>:<id>', self.problems())

	def test_bad_status(self):
		for bad in ('passed', 'pass', 'OK', None):
			with self.subTest(status=bad):
				self.test['status'] = bad
				self.assertIn('tests[0].status', self.problems())
		self.doc['tests'][0]['status'] = 'PASS'
		self.doc['builds'][0]['status'] = 'valid'
		self.assertIn('builds[0].status', self.problems())

	def test_bad_path(self):
		for bad in ('kunit.rcu core.x', 'kunit..x', 'kunit.x.', '.kunit', 'kunit/x', 7):
			with self.subTest(path=bad):
				self.test['path'] = bad
				self.assertIn('tests[0].path', self.problems())

	def test_root_path_is_allowed(self):
		self.test['path'] = ''
		self.assertEqual(kcidb.validate(self.doc), [])

	def test_missing_required_and_unknown_fields(self):
		del self.test['build_id']
		self.assertIn('tests[0]: no "build_id" (required)', self.problems())
		self.doc = doc_of(FAILING)
		self.doc['builds'][0]['valid'] = True  # v4's field: v5 has status
		self.assertIn('builds[0]: unknown field "valid"', self.problems())

	def test_bad_version(self):
		self.doc['version'] = {'major': 4, 'minor': 3}
		self.assertIn('version.major', self.problems())
		self.doc['version'] = {'major': 5, 'minor': 4}
		self.assertIn('version.minor', self.problems())
		del self.doc['version']
		self.assertIn('version: missing', self.problems())

	def test_bad_number_excerpt_null_and_duplicates(self):
		self.test['number'] = {'value': '1.5', 'unit': 's'}
		self.assertIn('tests[0].number.value', self.problems())
		self.test['number'] = {'value': 1.5}
		self.test['log_excerpt'] = 'x' * (kcidb.EXCERPT_MAX + 1)
		self.assertIn('tests[0].log_excerpt', self.problems())
		self.test['log_excerpt'] = 'a\0b'
		self.assertIn('contains NUL', self.problems())
		self.test['log_excerpt'] = None
		self.assertIn('null', self.problems())
		del self.test['log_excerpt']
		self.doc['tests'].append(dict(self.test))
		self.assertIn('used twice', self.problems())

	def test_not_a_document(self):
		self.assertEqual(kcidb.validate([]), ['the document is not an object'])
		self.assertIn('tests: not a list', kcidb.validate({'version': kcidb.VERSION, 'tests': {}}))


if __name__ == '__main__':
	unittest.main()
