# SPDX-License-Identifier: GPL-2.0
"""seriesbuild: which options, targets and sections make series-build looks at."""

import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from kunit_rcu import series, seriesbuild
from kunit_rcu.common import UserError

PATCH = """From 0 Mon Sep 17 00:00:00 2001
Subject: [PATCH 1/2] rcu: test

diff --git a/kernel/rcu/Kconfig.debug b/kernel/rcu/Kconfig.debug
--- a/kernel/rcu/Kconfig.debug
+++ b/kernel/rcu/Kconfig.debug
@@ -1,1 +1,4 @@
+config RCU_FOO_KUNIT_TEST
+	bool "foo"
+menuconfig RCU_BAR
diff --git a/kernel/rcu/tree.c b/kernel/rcu/tree.c
--- a/kernel/rcu/tree.c
+++ b/kernel/rcu/tree.c
@@ -1,1 +1,2 @@
+	rcu_foo_hook();
diff --git a/kernel/rcu/rcu_foo.c b/kernel/rcu/rcu_foo.c
new file mode 100644
--- /dev/null
+++ b/kernel/rcu/rcu_foo.c
@@ -0,0 +1 @@
+int x;
diff --git a/arch/x86/kernel/Makefile b/arch/x86/kernel/Makefile
--- a/arch/x86/kernel/Makefile
+++ b/arch/x86/kernel/Makefile
@@ -1,1 +1,3 @@
+GCOV_PROFILE_traps.o := $(CONFIG_FOO)
+obj-$(CONFIG_FOO) += foo_kunit.o
diff --git a/arch/arm64/kernel/Makefile b/arch/arm64/kernel/Makefile
--- a/arch/arm64/kernel/Makefile
+++ b/arch/arm64/kernel/Makefile
@@ -1,1 +1,2 @@
+GCOV_PROFILE_entry-common.o := $(CONFIG_FOO)
diff --git a/kernel/gcov/Makefile b/kernel/gcov/Makefile
--- a/kernel/gcov/Makefile
+++ b/kernel/gcov/Makefile
@@ -1,1 +1,2 @@
+obj-$(CONFIG_DUMP) += dump.o
diff --git a/tools/testing/kunit/qemu_configs/x86_64.py b/tools/testing/kunit/qemu_configs/x86_64.py
--- a/tools/testing/kunit/qemu_configs/x86_64.py
+++ b/tools/testing/kunit/qemu_configs/x86_64.py
@@ -1,1 +1,1 @@
-a
+b
"""


class SeriesTest(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.mkdtemp()
		self.addCleanup(shutil.rmtree, self.tmp)
		self.patch = os.path.join(self.tmp, '0001.patch')
		with open(self.patch, 'w') as f:
			f.write(PATCH)
		self.tree = os.path.join(self.tmp, 'tree')
		big = os.path.join(self.tree, 'arch/x86/kernel')
		os.makedirs(big)
		for i in range(seriesbuild.SMALL_DIR + 1):
			open(os.path.join(big, f'f{i}.c'), 'w').close()
		open(os.path.join(big, 'traps.c'), 'w').close()
		for d, names in (('arch/arm64/kernel', ['entry-common.c']), ('kernel/rcu', ['tree.c']),
				 ('kernel/gcov', ['base.c'])):
			os.makedirs(os.path.join(self.tree, d))
			for n in names:
				open(os.path.join(self.tree, d, n), 'w').close()

	def test_files_of_a_patch(self):
		files = series.patch_files(self.patch)
		self.assertEqual([(p, a) for p, a, _ in files], [
			('kernel/rcu/Kconfig.debug', False), ('kernel/rcu/tree.c', False),
			('kernel/rcu/rcu_foo.c', True), ('arch/x86/kernel/Makefile', False),
			('arch/arm64/kernel/Makefile', False), ('kernel/gcov/Makefile', False),
			('tools/testing/kunit/qemu_configs/x86_64.py', False)])
		self.assertEqual(files[1][2], '\trcu_foo_hook();')
		self.assertEqual(files[-1][2], 'a\nb')

	def test_production_config_turns_off_series_options_and_line_numbers(self):
		cfg = seriesbuild.production_config(
			'CONFIG_RCU_FOO_KUNIT_TEST=y\nCONFIG_PROVE_LOCKING=y\nCONFIG_KUNIT=y\n'
			'# CONFIG_RCU_BAR is not set\nCONFIG_KUNIT_ALL_TESTS=y\n', ['RCU_FOO_KUNIT_TEST', 'RCU_BAR'])
		lines = cfg.splitlines()
		self.assertIn('CONFIG_KUNIT=y', lines)
		for name in ('RCU_FOO_KUNIT_TEST', 'RCU_BAR', 'PROVE_LOCKING', 'KUNIT_ALL_TESTS'):
			self.assertIn(f'# CONFIG_{name} is not set', lines)
			self.assertNotIn(f'CONFIG_{name}=y', lines)
			self.assertEqual(sum(f'CONFIG_{name}' in l for l in lines), 1)

	def test_targets_per_arch(self):
		self.assertEqual(seriesbuild.targets([self.patch], 'x86_64', self.tree),
				 ['kernel/rcu/', 'arch/x86/kernel/traps.o', 'kernel/gcov/'])
		self.assertEqual(seriesbuild.targets([self.patch], 'arm64', self.tree),
				 ['kernel/rcu/', 'arch/arm64/kernel/', 'kernel/gcov/'])

	def _cc(self, name, text):
		src = os.path.join(self.tmp, name + '.c')
		with open(src, 'w') as f:
			f.write(text)
		obj = os.path.join(self.tmp, name + '.o')
		subprocess.run(['gcc', '-O2', '-c', src, '-o', obj], check=True)
		return obj

	@unittest.skipUnless(shutil.which('gcc') and shutil.which('objdump'), 'needs gcc and objdump')
	def test_compare_sees_code_but_not_line_numbers(self):
		body = ('static const int line __attribute__((used, section("__bug_table"))) = %d;\n'
			'int f(int x) { return x * %d; }\n')
		base = os.path.join(self.tmp, 'base')
		head = os.path.join(self.tmp, 'head')
		for d in (base, head):
			os.makedirs(d)
		for d, line, mul in ((base, 10, 3), (head, 11, 3)):
			shutil.move(self._cc('a', body % (line, mul)), os.path.join(d, 'a.o'))
		for d, mul in ((base, 3), (head, 5)):
			shutil.move(self._cc('b', body % (10, mul)), os.path.join(d, 'b.o'))
		objdump = shutil.which('objdump')
		self.assertEqual(seriesbuild.compare(objdump, base, head, ['a.o']), [])
		problems = seriesbuild.compare(objdump, base, head, ['a.o', 'b.o'])
		self.assertEqual(len(problems), 1)
		self.assertRegex(problems[0], r'^b\.o: sections differ: .*\.text')
		os.unlink(os.path.join(head, 'a.o'))
		self.assertEqual(seriesbuild.compare(objdump, base, head, ['a.o']),
				 ['a.o: built at pristine, missing now'])

	def test_declared_changes_must_name_series_patches(self):
		path = os.path.join(self.tmp, 'production-changes')
		with open(path, 'w') as f:
			f.write('# comment\n0009-fix.patch: fixes a deadlock\n')
		self.assertEqual(seriesbuild.declared_changes(['/p/0008-a.patch', '/p/0009-fix.patch'], path),
				 {'0009-fix.patch': 'fixes a deadlock'})
		with self.assertRaisesRegex(UserError, r'names 0009-fix\.patch, which patches/series '
					    r'does not list'):
			seriesbuild.declared_changes(['/p/0008-a.patch'], path)
		with open(path, 'w') as f:
			f.write('0009-fix.patch\n')
		with self.assertRaisesRegex(UserError, r'line 1: write "<patch file name>: <reason>"'):
			seriesbuild.declared_changes(['/p/0009-fix.patch'], path)
		self.assertEqual(seriesbuild.declared_changes([], os.path.join(self.tmp, 'none')), {})

	def test_snapshot_copies_the_objects_compared_later(self):
		build = os.path.join(self.tmp, 'build')
		ref = os.path.join(self.tmp, 'ref')
		os.makedirs(os.path.join(build, 'kernel', 'rcu'))
		for rel, text in (('kernel/rcu/tree.o', 'new'), ('kernel/rcu/other.o', 'x')):
			with open(os.path.join(build, rel), 'w') as f:
				f.write(text)
		os.makedirs(os.path.join(ref, 'stale'))
		seriesbuild.snapshot(build, ref, ['kernel/rcu/tree.o', 'kernel/rcu/gone.o'])
		self.assertEqual(sorted(os.listdir(os.path.join(ref, 'kernel', 'rcu'))), ['tree.o'])
		self.assertFalse(os.path.exists(os.path.join(ref, 'stale')))
		with open(os.path.join(ref, 'kernel', 'rcu', 'tree.o')) as f:
			self.assertEqual(f.read(), 'new')

	def test_a_declared_change_must_change_something_on_some_arch(self):
		def fake_run(changes_on):
			def run_arch(arch, results, unchanged):
				if arch not in changes_on:
					unchanged.add('0009-fix.patch')
				return 1, 0
			return run_arch
		both = sorted(seriesbuild.ARCHES)
		with mock.patch.object(seriesbuild.prepare, 'prepare'), \
		     mock.patch.object(seriesbuild, 'REPO', self.tmp):
			with mock.patch.object(seriesbuild, 'run_arch', fake_run({'x86_64'})):
				self.assertEqual(seriesbuild.main(both), (2, 0, 0))
			with mock.patch.object(seriesbuild, 'run_arch', fake_run(set())):
				self.assertEqual(seriesbuild.main(both), (2, 1, 0))
				# one arch alone cannot tell
				self.assertEqual(seriesbuild.main(['arm64']), (1, 0, 0))


if __name__ == '__main__':
	unittest.main()
