# SPDX-License-Identifier: GPL-2.0
"""soak: N boots of one kernel, per case what it did; a case that varies is a failure."""

import contextlib
import os
import tempfile
import unittest
from unittest import mock

from kunit_rcu import ktap, run, soak, verdict
from kunit_rcu.common import UserError
from tests.helpers import EXPECTED, PASSING, SKIP_CONFIG

FAILING = PASSING.replace('    ok 2 rcu_poll_get_state', '    not ok 2 rcu_poll_get_state')
HUNG = PASSING.split('    ok 2 rcu_poll_get_state')[0]


def judged(console: str) -> verdict.Verdict:
	return verdict.judge(console, EXPECTED, config=SKIP_CONFIG)


class TallyTest(unittest.TestCase):
	def test_the_same_every_time_does_not_vary(self) -> None:
		s = soak.Soak()
		for _ in range(3):
			s.add(judged(PASSING))
		self.assertEqual(s.varying(), [])
		self.assertEqual(s.cases['rcu_core.rcu_poll_get_state'][ktap.PASSED], 3)
		self.assertEqual(s.counts(), (2, 0, 1))
		self.assertNotIn('VARIES', s.table())

	def test_a_case_that_fails_once_varies(self) -> None:
		s = soak.Soak()
		for console in (PASSING, FAILING, PASSING):
			s.add(judged(console))
		self.assertEqual(s.varying(), ['rcu_core.rcu_poll_get_state'])
		self.assertEqual(s.failed_boots[0][0], 2)
		self.assertEqual(s.counts(), (1, 2, 1))  # the case, and boot 2
		row = [l for l in s.table().splitlines() if 'rcu_poll_get_state' in l][0]
		self.assertEqual(row.split()[1:], ['2', '1', '0', '0', 'VARIES'])

	def test_a_case_missing_from_a_hung_boot_varies(self) -> None:
		s = soak.Soak()
		for console in (PASSING, HUNG):
			s.add(judged(console))
		self.assertIn('rcu_core.rcu_poll_get_state', s.varying())
		self.assertEqual(len(s.failed_boots), 1)


class SoakTest(unittest.TestCase):
	def setUp(self) -> None:
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		with open(os.path.join(self.tmp.name, 'console.log'), 'w') as f:
			f.write(PASSING)
		self.boots = [PASSING, FAILING]
		for target, value in (('results_dir', lambda *a: self.tmp.name),
				      ('build_dir', lambda *a: self.tmp.name),
				      ('tree_dir', lambda: self.tmp.name),
				      ('load_config', mock.DEFAULT)):
			patcher = mock.patch.object(soak, target, value) if value is not mock.DEFAULT \
				else mock.patch.object(soak, target)
			patcher.start()
			self.addCleanup(patcher.stop)
		for name in ('build', 'tree'):
			patcher = mock.patch.object(soak.locks, name, lambda *a: contextlib.nullcontext())
			patcher.start()
			self.addCleanup(patcher.stop)
		patcher = mock.patch.object(soak.sources, 'suites_for', lambda arch: EXPECTED)
		patcher.start()
		self.addCleanup(patcher.stop)

	def boot(self, tree, arch, cfg, build, path, timeout):
		console = self.boots.pop(0)
		with open(path, 'w') as f:
			f.write(console)
		return soak.kbuild.Boot(console, False, 1.0)

	def test_later_boots_reuse_the_image_and_are_judged(self) -> None:
		first = run.RunOutcome(ok=True)
		with mock.patch.object(soak.kbuild, 'boot', side_effect=self.boot) as boot:
			s = soak.soak('x86_64', SKIP_CONFIG, 3, 60, first=first)
		self.assertEqual(boot.call_count, 2)
		self.assertEqual(s.boots, 3)
		self.assertEqual(s.varying(), ['rcu_core.rcu_poll_get_state'])
		self.assertTrue(os.path.exists(os.path.join(self.tmp.name, 'console.3.log')))

	def test_no_boots_is_refused(self) -> None:
		with self.assertRaisesRegex(UserError, 'at least 1'):
			soak.soak('x86_64', 'default', 0, 60, first=run.RunOutcome(ok=True))


if __name__ == '__main__':
	unittest.main()
