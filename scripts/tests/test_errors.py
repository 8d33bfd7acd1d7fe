# SPDX-License-Identifier: GPL-2.0
"""Bad input gets a message that names what is wrong and how to fix it."""
import fnmatch
import os
import tempfile
import unittest
from unittest import mock

from kunit_rcu import cli, common, kbuild, mutants, packages, prepare, run
from kunit_rcu.common import UserError


class ErrorTest(unittest.TestCase):
	def test_unknown_arch(self):
		with self.assertRaisesRegex(UserError, r'unknown ARCH "riscv": use one of arm64, x86_64'):
			common.check_arch('riscv')

	def test_unknown_config(self):
		with self.assertRaisesRegex(UserError, r'unknown CONFIG "nope": no configs/nope.config; '
					    r'use one of default, '):
			common.load_config('nope')
		with self.assertRaisesRegex(UserError, r'unknown CONFIG "nope": no configs/nope.config'):
			common.load_config('nope')
		with self.assertRaisesRegex(UserError, r'unknown CONFIG "\.\./configs/default"'):
			common.load_config('../configs/default')

	def test_wrong_source_version(self):
		with mock.patch.object(packages.os.path, 'isfile', return_value=True):
			with self.assertRaises(UserError) as cm:
				packages.check_source_version('6.1.190-1')
		msg = str(cm.exception)
		self.assertIn('linux-source-6.1 6.1.190-1 is installed', msg)
		self.assertIn('apt-get install linux-source-6.1=' + common.expected_version(), msg)
		self.assertIn('KUNIT_RCU_ALLOW_VERSION=6.1.190-1', msg)

	def test_wrong_version_allowed_explicitly(self):
		with mock.patch.dict(os.environ, {'KUNIT_RCU_ALLOW_VERSION': '6.1.190-1'}), \
		     mock.patch.object(packages.os.path, 'isfile', return_value=True), \
		     mock.patch.object(packages, 'log') as log:
			self.assertEqual(packages.check_source_version('6.1.190-1'), '6.1.190-1')
		self.assertIn('warning: using linux-source-6.1 6.1.190-1', log.call_args.args[0])

	def test_missing_packages_are_listed(self):
		missing = packages.missing_packages(lambda probe: 'qemu' not in probe)
		self.assertEqual(missing, ['qemu-system-x86', 'qemu-system-arm'])

	def test_package_that_cannot_be_installed(self):
		failed = mock.Mock(returncode=100, stdout='',
				   stderr='E: Unable to locate package qemu-system-arm\n')
		with mock.patch.object(packages.os, 'geteuid', return_value=0), \
		     mock.patch.object(packages.subprocess, 'run', return_value=failed), \
		     mock.patch.object(packages, 'log') as log:
			with self.assertRaises(UserError) as cm:
				packages._apt_install(['qemu-system-arm'])
		self.assertIn('warning: apt-get update failed', log.call_args_list[-1].args[0])
		msg = str(cm.exception)
		self.assertIn('could not install Debian packages: qemu-system-arm', msg)
		self.assertIn('Unable to locate package qemu-system-arm', msg)

	def test_not_root_without_sudo(self):
		with mock.patch.object(packages.os, 'geteuid', return_value=1000), \
		     mock.patch.object(packages.shutil, 'which', return_value=None):
			with self.assertRaisesRegex(UserError, 'as root: apt-get install ccache'):
				packages._apt_install(['ccache'])

	def test_run_rejects_bad_arch_before_doing_anything(self):
		with self.assertRaisesRegex(UserError, 'unknown ARCH'):
			run.run('mips', 'default', install=False)

	def test_cli_exit_code_and_message(self):
		with mock.patch('sys.stderr') as err:
			self.assertEqual(cli.main(['run', '--arch=mips']), 2)
		self.assertIn('unknown ARCH "mips"', ''.join(c.args[0] for c in err.write.call_args_list))


class BuildTest(unittest.TestCase):
	def test_compiler_errors_show_the_error(self):
		log = '\n'.join(['CC a.o'] * 50 + ['kernel/rcu/rcu_kunit.c:12:1: error: expected ;',
						   'make[3]: *** [x] Error 1'] + ['tail'] * 5)
		out = kbuild.compiler_errors(log)
		self.assertTrue(out.splitlines()[3].startswith('kernel/rcu/rcu_kunit.c:12:1: error'))

	def test_stale_kernel_is_not_booted(self):
		cfg = common.load_config('default')
		with tempfile.TemporaryDirectory() as build, \
		     mock.patch.object(kbuild, 'build_fingerprint', return_value='new'):
			with self.assertRaisesRegex(UserError, 'stale or failed build'):
				kbuild.check_built('/tree', 'x86_64', cfg, build)
			with open(os.path.join(build, kbuild.STAMP), 'w') as f:
				f.write('old\n')
			with self.assertRaisesRegex(UserError, 'stale or failed build'):
				kbuild.check_built('/tree', 'x86_64', cfg, build)
			with open(os.path.join(build, kbuild.STAMP), 'w') as f:
				f.write('new\n')
			kbuild.check_built('/tree', 'x86_64', cfg, build)

	def test_make_variables_do_not_leak_into_the_kernel_build(self):
		# without ccache's shims: this must pass before make check installs ccache
		with mock.patch.dict(os.environ, {'MAKEFLAGS': ' -- ARCH=arm64', 'ARCH': 'arm64',
						  'KUNIT_RCU_NO_CCACHE': '1'}):
			env = kbuild.build_env()
		self.assertNotIn('MAKEFLAGS', env)
		self.assertNotIn('ARCH', env)


class LayoutTest(unittest.TestCase):
	def test_default_build_dirs_are_shared_with_plain_kunit_py(self):
		tree = common.tree_dir()
		self.assertEqual(common.build_dir('x86_64', 'default', False), os.path.join(tree, '.kunit'))
		self.assertEqual(common.build_dir('arm64', 'default', False),
				 os.path.join(tree, '.kunit-arm64'))

	def test_scratch_build_dirs_mirror_the_prepared_trees(self):
		"""Same place relative to their tree: the same relative paths for ccache."""
		src, scratch = common.tree_dir(), common.scratch_dir()
		dirs = set()
		for arch in common.ARCHES:
			for config in ('default', 'nopreempt', 'debug'):
				plain = common.build_dir(arch, config, False)
				extra = common.build_dir(arch, config, True)
				with self.subTest(arch=arch, config=config):
					# a direct child of its tree: kbuild's srctree is ".."
					self.assertEqual(os.path.dirname(plain), src)
					self.assertEqual(os.path.dirname(extra), scratch)
					self.assertEqual(os.path.basename(plain), os.path.basename(extra))
					# git ignores them there (prepare.exclude_build_dirs)
					self.assertTrue(fnmatch.fnmatch(os.path.basename(plain),
									prepare.BUILD_DIR_PATTERN.strip('/')))
				dirs |= {plain, extra}
		self.assertEqual(len(dirs), 2 * 3 * len(common.ARCHES))
		self.assertEqual(common.build_dir('arm64', 'nopreempt', True),
				 os.path.join(scratch, '.kunit-arm64-nopreempt'))

	def test_allowed_version_gets_its_own_cache(self):
		with mock.patch.dict(os.environ, {'KUNIT_RCU_ALLOW_VERSION': '6.1.190-1'}):
			self.assertTrue(common.version_dir().endswith('/6.1.190-1'))
		self.assertTrue(common.version_dir().endswith('/' + common.expected_version()))


class MutantJudgeTest(unittest.TestCase):
	def out(self, ok=False, failed=(), splats=(), reasons=('x',)):
		return run.RunOutcome(ok=ok, failed_cases=list(failed), splat_kinds=list(splats),
				      reasons=list(reasons))

	def test_case_mutant(self):
		want = ['s.a']
		self.assertTrue(mutants.judge(want, self.out(failed=['s.a', 's.b']))[0])
		self.assertFalse(mutants.judge(want, self.out(failed=['s.b']))[0])
		self.assertFalse(mutants.judge(want, self.out(ok=True))[0])

	def test_mutant_arches_default_and_named(self):
		with tempfile.TemporaryDirectory() as d:
			plain, arm = os.path.join(d, 'a.patch'), os.path.join(d, 'b.patch')
			bad = os.path.join(d, 'c.patch')
			with open(plain, 'w') as f:
				f.write('Subject: x\n\nKills: s.a\n')
			with open(arm, 'w') as f:
				f.write('Subject: x\n\nArch: arm64\nKills: s.a\n')
			with open(bad, 'w') as f:
				f.write('Subject: x\n\nArch: riscv\nKills: s.a\n')
			self.assertEqual(mutants.arches(plain), ['x86_64'])
			self.assertEqual(mutants.arches(arm), ['arm64'])
			with self.assertRaises(common.UserError):
				mutants.arches(bad)

	def test_project_mutants_name_known_arches_and_configs(self):
		for path in mutants.mutant_files():
			self.assertTrue(mutants.arches(path), path)
			common.load_config(mutants.mutant_config(path))

	def test_kills_only_suites_built_on_the_arch(self):
		want = ['rcu_irq.rcu_irq_nmi_nesting', 'rcu_ist.rcu_ist_nesting',
			'rcu_el1_dbg.rcu_el1_dbg_nesting']
		self.assertEqual(mutants.kills_on(want, 'x86_64'), want[:2])
		self.assertEqual(mutants.kills_on(want, 'arm64'), [want[0], want[2]])
		self.assertEqual(mutants.kills_on(['splat'], 'arm64'), ['splat'])

	def test_one_suite_boots_alone(self):
		self.assertEqual(mutants.only_suite(['s.a', 's.b']), 's')
		self.assertIsNone(mutants.only_suite(['s.a', 't.b']))
		self.assertIsNone(mutants.only_suite(['splat']))

	def test_project_mutants_kill_a_case_on_each_of_their_arches(self):
		for path in mutants.mutant_files():
			for arch in mutants.arches(path):
				self.assertTrue(mutants.kills_on(mutants.kills(path), arch),
						f'{os.path.basename(path)} names no case built on {arch}')

	def test_mutant_config_line(self):
		with tempfile.TemporaryDirectory() as d:
			plain, nohz = os.path.join(d, 'a.patch'), os.path.join(d, 'b.patch')
			with open(plain, 'w') as f:
				f.write('Subject: x\n\nKills: s.a\n')
			with open(nohz, 'w') as f:
				f.write('Subject: x\n\nConfig: nopreempt\nKills: s.a\n')
			self.assertEqual(mutants.mutant_config(plain), 'default')
			self.assertEqual(mutants.mutant_config(nohz), 'nopreempt')

	def test_splat_mutant_needs_a_splat_and_no_failed_case(self):
		self.assertTrue(mutants.judge(['splat'], self.out(splats=['warning']))[0])
		self.assertFalse(mutants.judge(['splat'], self.out())[0])
		self.assertFalse(mutants.judge(['splat'], self.out(splats=['warning'], failed=['s.a']))[0])

	def test_every_mutant_names_its_killer(self):
		for path in mutants.mutant_files():
			with self.subTest(mutant=os.path.basename(path)):
				self.assertTrue(mutants.kills(path))

	def test_closing_counts_include_the_run_check(self):
		good = run.RunOutcome(ok=True, counts={'passed': 4, 'failed': 0, 'skipped': 1},
				      integrity_ok=True)
		self.assertEqual(cli.run_counts(good), cli.Counts(5, 0, 1))
		splat = run.RunOutcome(ok=False, counts={'passed': 4, 'failed': 0, 'skipped': 0})
		self.assertEqual(cli.run_counts(splat), cli.Counts(4, 1, 0))

	def test_make_check_skips_a_mutant_of_a_shared_header(self):
		"""A mutant of include/ rebuilds the kernel: make check counts it skipped, make mutants runs it."""
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'hdr.patch')
			with open(path, 'w') as f:
				f.write('Subject: x\n\nKills: rcu_core.rcu_poll_full\n---\n'
					'diff --git a/include/linux/rcupdate.h b/include/linux/rcupdate.h\n')
			self.assertEqual(mutants.shared_headers(path), ['include/linux/rcupdate.h'])
			failed = run.RunOutcome(ok=False, failed_cases=['rcu_core.rcu_poll_full'],
						reasons=['x'])
			with mock.patch.object(mutants, 'mutant_files', return_value=[path]), \
			     mock.patch.object(run, 'run', return_value=failed) as boot:
				self.assertEqual(mutants.run_all('default', 30, all_arches=False), (0, 0, 1))
				boot.assert_not_called()
				self.assertEqual(mutants.run_all('default', 30), (1, 0, 0))

	def test_survivors_are_named_for_the_summary(self):
		"""make check's summary names what was not killed: a CI log's tail says which."""
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'weak.patch')
			with open(path, 'w') as f:
				f.write('Subject: x\n\nKills: rcu_core.rcu_poll_full\n')
			passed = run.RunOutcome(ok=True, reasons=[])
			survivors = []
			with mock.patch.object(mutants, 'mutant_files', return_value=[path]), \
			     mock.patch.object(run, 'run', return_value=passed):
				self.assertEqual(mutants.run_all('default', 30, not_killed=survivors), (0, 1, 0))
		self.assertEqual(survivors, ['weak.patch ARCH=x86_64: survived: the run passed'])
		lines = cli.failure_lines(survivors + ['x' * 300] * 7)
		self.assertEqual(lines[0], '      weak.patch ARCH=x86_64: survived: the run passed')
		self.assertTrue(lines[1].endswith('...') and len(lines[1]) == 206)
		self.assertEqual(lines[-1], '      ... and 2 more above')

	def test_a_failed_run_is_explained_under_its_row(self):
		bad = run.RunOutcome(ok=False, reasons=['1 case(s) failed: s.a'])
		self.assertEqual(cli.run_failures(bad), ['1 case(s) failed: s.a'])
		self.assertEqual(cli.run_failures(run.RunOutcome(ok=True, reasons=[])), [])


if __name__ == '__main__':
	unittest.main()


class BootedOtherKernelTest(unittest.TestCase):
	BANNER = ('Linux version 6.1.192-gabc (root@vm) (gcc 12.2.0) #3 SMP PREEMPT_DYNAMIC '
		  '{}\n')

	def stamp(self, d, lines):
		with open(os.path.join(d, kbuild.STAMP), 'w') as f:
			f.write(''.join(l + '\n' for l in lines))

	def test_banner_with_this_build_id_is_this_kernel(self):
		with tempfile.TemporaryDirectory() as d:
			self.stamp(d, ['f' * 64, 'kunit-rcu-0123456789ab'])
			console = 'x\n' + self.BANNER.format('kunit-rcu-0123456789ab') + 'y\n'
			self.assertIsNone(kbuild.booted_other_kernel(console, d))

	def test_banner_with_another_build_id_is_a_stale_image(self):
		with tempfile.TemporaryDirectory() as d:
			self.stamp(d, ['f' * 64, 'kunit-rcu-0123456789ab'])
			console = self.BANNER.format('kunit-rcu-ffffffffffff')
			why = kbuild.booted_other_kernel(console, d)
			self.assertIn('stale boot image', why)
			self.assertIn('kunit-rcu-0123456789ab', why)

	def test_no_evidence_either_way(self):
		with tempfile.TemporaryDirectory() as d:
			self.stamp(d, ['f' * 64])  # stamp of a build before build ids
			self.assertIsNone(kbuild.booted_other_kernel(self.BANNER.format('Fri Dec 4'), d))
			self.stamp(d, ['f' * 64, 'kunit-rcu-0123456789ab'])
			self.assertIsNone(kbuild.booted_other_kernel('no banner at all\n', d))


class MutantTimeoutTest(unittest.TestCase):
	def test_timeout_line_lowers_the_bound_only(self):
		with tempfile.TemporaryDirectory() as d:
			plain, short, long_ = (os.path.join(d, n) for n in ('a.patch', 'b.patch', 'c.patch'))
			for path, extra in ((plain, ''), (short, 'Timeout: 90\n'), (long_, 'Timeout: 900\n')):
				with open(path, 'w') as f:
					f.write('Subject: x\n\n' + extra + 'Kills: s.a\n')
			self.assertEqual(mutants.mutant_timeout(plain, 240), 240)
			self.assertEqual(mutants.mutant_timeout(short, 240), 90)
			self.assertEqual(mutants.mutant_timeout(long_, 240), 240)


# A kunit.py that reports one failed case, then hangs like a wedged guest.
_HANGING_KUNIT = """import os, time
print('KTAP version 1')
print('1..1')
print('    KTAP version 1')
print('    # Subtest: s')
print('    1..2')
print('    not ok 1 a')
time.sleep(float(os.environ.get('HANG', '60')))
"""


class EarlyStopTest(unittest.TestCase):
	KTAP = ('KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: s\n    1..3\n'
		'    not ok 1 a\n        # b: param\n    ok 2 b\n')

	def test_stop_once_every_named_case_failed(self):
		stop = mutants.stop_when_killed(['s.a'])
		self.assertFalse(stop(self.KTAP.split('    not ok')[0]))
		self.assertTrue(stop(self.KTAP))
		self.assertFalse(mutants.stop_when_killed(['s.a', 's.b'])(self.KTAP))
		self.assertIsNone(mutants.stop_when_killed(['splat']))

	def test_a_stopped_boot_is_not_a_timeout_and_ends_early(self):
		cfg = common.load_config('default')
		with tempfile.TemporaryDirectory() as tree, \
		     mock.patch.dict(os.environ, {'KUNIT_RCU_NO_CCACHE': '1'}), \
		     mock.patch.object(kbuild, 'check_built'), mock.patch.object(kbuild, 'log'):
			os.makedirs(os.path.join(tree, 'tools/testing/kunit'))
			with open(os.path.join(tree, 'tools/testing/kunit/kunit.py'), 'w') as f:
				f.write(_HANGING_KUNIT)
			console = os.path.join(tree, 'console.log')
			b = kbuild.boot(tree, 'x86_64', cfg, tree, console, timeout=50,
					stop_when=mutants.stop_when_killed(['s.a']))
			self.assertTrue(b.stopped)
			self.assertFalse(b.timed_out)
			self.assertLess(b.seconds, 20)
			self.assertIn('not ok 1 a', b.console)
			with mock.patch.dict(os.environ, {'HANG': '2'}):
				b = kbuild.boot(tree, 'x86_64', cfg, tree, console, timeout=1)
			self.assertTrue(b.timed_out)
			self.assertFalse(b.stopped)


class StaleRetryTest(unittest.TestCase):
	def test_a_stale_boot_is_run_once_more(self):
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'm.patch')
			with open(path, 'w') as f:
				f.write('Subject: x\n\nKills: s.a\n')
			stale = run.RunOutcome(ok=False, reasons=['older kernel'], stale=True)
			killed = run.RunOutcome(ok=False, failed_cases=['s.a'], reasons=['x'])
			with mock.patch.object(mutants, 'mutant_files', return_value=[path]), \
			     mock.patch.object(mutants, 'kills_on', return_value=['s.a']), \
			     mock.patch.object(mutants, 'log'), \
			     mock.patch.object(run, 'run', side_effect=[stale, killed]) as one:
				self.assertEqual(mutants.run_all('default', 60), (1, 0, 0))
			self.assertEqual(one.call_count, 2)


class CheckArchesTest(unittest.TestCase):
	def mutant(self, d, text):
		path = os.path.join(d, 'm.patch')
		with open(path, 'w') as f:
			f.write('Subject: x\n\n' + text)
		return path

	def test_shared_suites_boot_on_the_first_arch_only(self):
		with tempfile.TemporaryDirectory() as d:
			path = self.mutant(d, 'Arch: x86_64 arm64\nKills: rcu_irq.rcu_irq_nmi_nesting\n')
			self.assertEqual(mutants.check_arches(path), ['x86_64'])
			self.assertEqual(mutants.arches(path), ['x86_64', 'arm64'])

	def test_an_arch_suite_keeps_its_arch(self):
		with tempfile.TemporaryDirectory() as d:
			path = self.mutant(d, 'Arch: x86_64 arm64\nKills: rcu_irq.rcu_irq_nmi_nesting '
					   'rcu_el1_dbg.rcu_el1_dbg_nesting\n')
			self.assertEqual(mutants.check_arches(path), ['x86_64', 'arm64'])
			path = self.mutant(d, 'Arch: arm64\nKills: rcu_irq.rcu_irq_nmi_nesting\n')
			self.assertEqual(mutants.check_arches(path), ['arm64'])
