# SPDX-License-Identifier: GPL-2.0
"""Which patches checkpatch may add files to without a MAINTAINERS change."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

from kunit_rcu import series

PATCH = '''Subject: [PATCH] x

---
diff --git a/{path} b/{path}
new file mode 100644
index 0000000..e69de29
'''


class NewFilesMaintainedTest(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		tree = os.path.join(self.tmp.name, 'tree')
		os.makedirs(tree)
		with open(os.path.join(tree, 'MAINTAINERS'), 'w') as f:
			f.write('GCOV BASED KERNEL PROFILING\nF:\tkernel/gcov/\n'
				'RCU\nF:\tkernel/rcu/*rcu*.c\n')
		for cmd in (['init', '-q'], ['add', 'MAINTAINERS'],
			    ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'p'],
			    ['tag', 'pristine']):
			subprocess.run(['git', '-C', tree, *cmd], check=True)
		p = mock.patch.object(series, 'tree_dir', return_value=tree)
		p.start()
		self.addCleanup(p.stop)

	def _patch(self, *paths: str) -> str:
		path = os.path.join(self.tmp.name, 'p.patch')
		with open(path, 'w') as f:
			f.write(''.join(PATCH.format(path=p) for p in paths))
		return path

	def test_files_under_a_maintained_dir_or_glob(self):
		self.assertTrue(series.new_files_maintained(
			self._patch('kernel/gcov/console_dump.c', 'kernel/rcu/rcu_kunit.c')))

	def test_one_unmaintained_file_is_enough_to_say_no(self):
		self.assertFalse(series.new_files_maintained(
			self._patch('kernel/gcov/console_dump.c', 'lib/kunit-rcu/core.c')))

	def test_a_patch_adding_no_file(self):
		self.assertFalse(series.new_files_maintained(self._patch()))


if __name__ == '__main__':
	unittest.main()
