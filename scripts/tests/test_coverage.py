# SPDX-License-Identifier: GPL-2.0
"""The coverage report's classification and gate, on made-up counts."""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout
from unittest import mock

from kunit_rcu import attribution, coverage


def _write_run(results: str, arch: str, run: dict, boot: dict) -> None:
	d = os.path.join(results, f'{arch}-default', 'coverage')
	os.makedirs(d)
	with open(os.path.join(d, 'status.json'), 'w') as f:
		json.dump({'ok': True}, f)
	with open(os.path.join(d, 'lines.json'), 'w') as f:
		json.dump({'run': run, 'boot': boot}, f)


class CoverageGateTest(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		self.tree = os.path.join(self.tmp.name, 'tree')
		os.makedirs(os.path.join(self.tree, 'kernel', 'rcu'))
		with open(os.path.join(self.tree, 'kernel', 'rcu', 'tree.c'), 'w') as f:
			f.write('int a;\nvoid f(void)\n{\n\ta = 1;\n\ta = 2;\n}\n'
				'noinstr void g(void)\n{\n\ta = 3;\n}\n')
		self.results = os.path.join(self.tmp.name, 'results')
		self.cov = os.path.join(self.tmp.name, 'coverage')
		os.makedirs(self.cov)
		for name, value in (('REPO', self.tmp.name), ('COVERAGE_DIR', self.cov),
				    ('EXCEPTIONS', os.path.join(self.cov, 'exceptions')),
				    ('BASELINE', os.path.join(self.cov, 'baseline.json'))):
			p = mock.patch.object(coverage, name, value)
			p.start()
			self.addCleanup(p.stop)
		for p in (mock.patch.dict(os.environ, {'KUNIT_RCU_RESULTS': self.results}),
			  mock.patch.object(coverage, 'tree_dir', return_value=self.tree),
			  mock.patch.object(coverage, 'series_patches',
					    return_value=['/p/0001-rcu-fix.patch'])):
			p.start()
			self.addCleanup(p.stop)
		with open(coverage.BASELINE, 'w') as f:
			json.dump({'kernel/rcu/ during tests, union': 50.0}, f)

	def _patch_adds(self, lines, overlay=None):
		commits = [attribution.PatchLines('a' * 40, 'rcu: Fix', {'kernel/rcu/tree.c': set(lines)}),
			   attribution.PatchLines('b' * 40, 'overlay', overlay or {})]
		p = mock.patch.object(coverage.attribution, 'patch_lines', return_value=commits)
		p.start()
		self.addCleanup(p.stop)

	def _gate(self):
		out = io.StringIO()
		with redirect_stdout(out):
			counts = coverage.gate(('x86_64', 'arm64'))
		return counts, out.getvalue()

	def test_lines_run_on_either_arch_pass(self):
		_write_run(self.results, 'x86_64', {'kernel/rcu/tree.c': {'4': 3, '5': 0}},
			   {'kernel/rcu/tree.c': {'4': 9, '5': 1}})
		_write_run(self.results, 'arm64', {'kernel/rcu/tree.c': {'4': 0, '5': 2}},
			   {'kernel/rcu/tree.c': {'4': 1, '5': 2}})
		self._patch_adds([4, 5, 9])
		(passed, failed, skipped), text = self._gate()
		self.assertEqual((passed, failed, skipped), (2, 0, 1), text)
		self.assertIn('1/2 50.0%', text)  # each arch on its own
		self.assertIn('2/2 100.0%', text)  # the union

	def test_uncovered_patch_fails_naming_it_and_its_lines(self):
		# A test case that covered line 5 was removed: nothing runs it now.
		_write_run(self.results, 'x86_64', {'kernel/rcu/tree.c': {'4': 3, '5': 0}}, {})
		_write_run(self.results, 'arm64', {'kernel/rcu/tree.c': {'4': 1, '5': 0}}, {})
		self._patch_adds([4, 5])
		with mock.patch.object(coverage, 'log') as log:
			(passed, failed, _), text = self._gate()
		self.assertEqual(failed, 1)
		self.assertIn('FAIL 0001-rcu-fix.patch', ' '.join(str(c) for c in log.call_args_list))
		self.assertIn('kernel/rcu/tree.c:5', text)
		self.assertNotIn('kernel/rcu/tree.c:4\n', text)

	def test_exception_excuses_a_patch(self):
		_write_run(self.results, 'x86_64', {'kernel/rcu/tree.c': {'4': 0, '5': 0}}, {})
		_write_run(self.results, 'arm64', {'kernel/rcu/tree.c': {'4': 0, '5': 0}}, {})
		self._patch_adds([4, 5])
		with open(coverage.EXCEPTIONS, 'w') as f:
			f.write('# patch: why\n0001-rcu-fix.patch: runs only on CPU hotplug failure\n')
		(passed, failed, _), _ = self._gate()
		# the patch is excused; kernel/rcu/ at 0% is still below the baseline
		self.assertEqual((passed, failed), (1, 1))

	def test_noinstr_lines_are_neither_covered_nor_uncovered(self):
		_write_run(self.results, 'x86_64', {'kernel/rcu/tree.c': {'4': 1}}, {})
		_write_run(self.results, 'arm64', {'kernel/rcu/tree.c': {'4': 1}}, {})
		counts = {'x86_64': coverage.load_counts('x86_64'), 'arm64': coverage.load_counts('arm64')}
		row = coverage.classify('p', 's', {'kernel/rcu/tree.c': {4, 9}, 'kernel/gcov/d.c': {1},
						  'kernel/rcu/x_kunit.c': {1, 2}}, self.tree, counts)
		self.assertEqual(row.union(), ({('kernel/rcu/tree.c', 4)}, {('kernel/rcu/tree.c', 4)}))
		self.assertEqual(row.noinstr, {('kernel/rcu/tree.c', 9)})
		self.assertEqual(row.unprofiled, {('kernel/gcov/d.c', 1)})
		self.assertEqual(row.test_lines, 2)

	def test_drop_below_baseline_fails(self):
		_write_run(self.results, 'x86_64', {'kernel/rcu/tree.c': {'4': 1, '5': 0}}, {})
		_write_run(self.results, 'arm64', {'kernel/rcu/tree.c': {'4': 1, '5': 0}}, {})
		self._patch_adds([])
		with open(coverage.BASELINE, 'w') as f:
			json.dump({'kernel/rcu/ during tests, union': 50.4}, f)
		self.assertEqual(self._gate()[0][:2], (1, 0))
		with open(coverage.BASELINE, 'w') as f:
			json.dump({'kernel/rcu/ during tests, union': 50.6}, f)
		self.assertEqual(self._gate()[0][:2], (0, 1))

	def test_missing_or_broken_run_fails_the_gate(self):
		_write_run(self.results, 'x86_64', {}, {})
		d = os.path.join(self.results, 'arm64-default', 'coverage')
		os.makedirs(d)
		with open(os.path.join(d, 'status.json'), 'w') as f:
			json.dump({'ok': False, 'error': 'phase run: kernel/rcu/tree.gcda: crc32 mismatch'}, f)
		with mock.patch.object(coverage, 'log') as log:
			(_, failed, _), _ = self._gate()
		self.assertEqual(failed, 1)
		self.assertIn('crc32 mismatch', str(log.call_args))


if __name__ == '__main__':
	unittest.main()
