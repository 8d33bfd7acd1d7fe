# SPDX-License-Identifier: GPL-2.0
"""configs/<name>.config: one resolved value, taken by build and boot alike."""
import contextlib
import io
import os
import re
import shlex
import tempfile
import unittest
from unittest import mock

from kunit_rcu import cli, common, kbuild, locks, prepare, run
from kunit_rcu.common import Config, UserError

SAMPLE = '''# A sample: header directives, then Kconfig lines.
# Note: a plain comment with a colon is no directive.
# arches: x86_64, arm64
# kernel-args: nohz_full=1-3 rcu_nocbs=1-3
# kernel-args[arm64]: irqchip.gicv3_pseudo_nmi=1
# qemu-args[arm64]: -machine virt,gic-version=3 -append "a b"
CONFIG_PREEMPT_NONE=y
# CONFIG_PREEMPT is not set

CONFIG_CMDLINE="x y"
'''


def parse(text: str, name: str = 'sample') -> Config:
	return common.parse_config(name, os.path.join(common.REPO, 'configs', name + '.config'), text)


def kconfig(lines):
	"""name -> value as kunit.py's kunit_config.py reads Kconfig lines ('n' for not set)."""
	out = {}
	for line in lines:
		m = re.match(r'^CONFIG_(\w+)=(\S+|".*")$', line) or \
			re.match(r'^# CONFIG_(\w+) is (not set)$', line)
		if m:
			out[m.group(1)] = 'n' if m.group(2) == 'not set' else m.group(2)
	return out


class ParseTest(unittest.TestCase):
	def test_directives_and_kconfig_lines(self):
		cfg = parse(SAMPLE)
		self.assertEqual(cfg.kconfig, ['CONFIG_PREEMPT_NONE=y', '# CONFIG_PREEMPT is not set',
					       'CONFIG_CMDLINE="x y"'])
		self.assertEqual(cfg.arches, ['x86_64', 'arm64'])
		self.assertEqual(cfg.kernel_args_for('x86_64'), ['nohz_full=1-3', 'rcu_nocbs=1-3'])
		self.assertEqual(cfg.kernel_args_for('arm64'), ['nohz_full=1-3', 'rcu_nocbs=1-3',
								'irqchip.gicv3_pseudo_nmi=1'])
		self.assertEqual(cfg.qemu_args_for('x86_64'), [])
		self.assertEqual(cfg.qemu_args_for('arm64'), ['-machine', 'virt,gic-version=3',
							      '-append', 'a b'])

	def test_without_directives_every_arch_and_no_args(self):
		cfg = parse('CONFIG_X=y\n')
		self.assertEqual(cfg.arches, list(common.ARCHES))
		for arch in common.ARCHES:
			self.assertEqual((cfg.kernel_args_for(arch), cfg.qemu_args_for(arch)), ([], []))

	def test_arch_specific_words_follow_the_general_ones_wherever_they_are(self):
		cfg = parse('# kernel-args[x86_64]: b=2\n# kernel-args: a=1\n')
		self.assertEqual(cfg.kernel_args_for('x86_64'), ['a=1', 'b=2'])

	def test_bad_lines_name_file_line_and_fix(self):
		cases = [
			('CONFIG_X=y\nFOO=1\n', r'configs/bad.config line 2: not a Kconfig line'),
			('# kernel_args: a=1\n', r'line 1: unknown directive "kernel_args"'),
			('# arch: x86_64\n', r'unknown directive "arch"'),
			('# kernel-args[riscv]: a=1\n', r'unknown ARCH "riscv"'),
			('# arches: x86_64 mips\n', r'"arches" must name some of arm64, x86_64'),
			('# arches:\n', r'"arches" must name'),
			('# arches: x86_64\n# arches: arm64\n', r'line 2: one "# arches:" line'),
			('# arches: x86_64\n# qemu-args[arm64]: -s\n',
			 r'line 2: qemu-args\[arm64\], but the config applies only to x86_64'),
			('# qemu-args: -append "a\n', r'line 1: No closing quotation'),
		]
		for text, msg in cases:
			with self.subTest(text=text):
				with self.assertRaisesRegex(UserError, msg):
					parse(text, 'bad')

	def test_arch_outside_the_config_is_refused_naming_both(self):
		cfg = parse('# arches: x86_64\n', 'x86only')
		cfg.check_arch('x86_64')
		with self.assertRaisesRegex(UserError, r'CONFIG=x86only does not apply to ARCH=arm64: '
					    r'configs/x86only.config says "# arches: x86_64"'):
			cfg.check_arch('arm64')
		with self.assertRaisesRegex(UserError, 'unknown ARCH "mips"'):
			cfg.check_arch('mips')


class ProjectConfigsTest(unittest.TestCase):
	"""configs/ as kunit.py will merge it over the kunitconfig."""

	def merged(self, name):
		with open(os.path.join(common.REPO, 'kunitconfig')) as f:
			base = kconfig(f.read().splitlines())
		cfg = common.load_config(name)
		return dict(base, **kconfig(cfg.kconfig)), cfg

	def test_every_config_loads_and_its_lines_all_parse(self):
		for name in common.config_names():
			with self.subTest(config=name):
				cfg = common.load_config(name)
				self.assertEqual(len(kconfig(cfg.kconfig)), len(cfg.kconfig))
				self.assertTrue(cfg.arches)

	def test_nopreempt_overrides_preempt_and_rules_out_preempt_rcu(self):
		merged, cfg = self.merged('nopreempt')
		self.assertEqual(cfg.arches, ['x86_64', 'arm64'])
		self.assertEqual(merged['PREEMPT_NONE'], 'y')
		# kunitconfig's CONFIG_PREEMPT=y must not survive: a choice with two y.
		self.assertEqual(merged['PREEMPT'], 'n')
		# x86_64 defaults PREEMPT_DYNAMIC=y, which selects PREEMPT_BUILD.
		self.assertEqual(merged['PREEMPT_DYNAMIC'], 'n')
		# kunit.py fails the build if the .config has these set.
		self.assertEqual((merged['PREEMPTION'], merged['PREEMPT_RCU']), ('n', 'n'))

	def test_nohz_is_full_dynticks_on_both_arches(self):
		merged, cfg = self.merged('nohz')
		self.assertEqual(cfg.arches, ['x86_64', 'arm64'])
		self.assertEqual((merged['NO_HZ_FULL'], merged['NO_HZ_COMMON']), ('y', 'y'))
		self.assertNotEqual(merged.get('HZ_PERIODIC'), 'y')
		for arch in cfg.arches:
			self.assertIn('nohz_full=2-3', cfg.kernel_args_for(arch))

	def test_arch_kunitconfigs_are_kconfig_lines_that_agree_with_kunitconfig(self):
		"""kunit.py refuses two --kunitconfig files that set one option differently."""
		with open(prepare.kunitconfig_path()) as f:
			base = kconfig(f.read().splitlines())
		for arch, path in prepare.arch_kunitconfigs().items():
			with self.subTest(file=os.path.basename(path)):
				with open(path) as f:
					lines = [l.strip() for l in f if l.strip()]
				kc = [l for l in lines if not l.startswith('#') or kconfig([l])]
				self.assertEqual(len(kconfig(kc)), len(kc), 'a line that is neither '
						 'a Kconfig line nor a comment')
				self.assertEqual({k: v for k, v in kconfig(kc).items() if base.get(k, v) != v},
						 {}, 'set otherwise in kunitconfig')

	def test_make_check_configs_exist_and_apply(self):
		for arch, name in cli.CHECK_CONFIG_RUNS:
			common.load_config(name).check_arch(arch)


class KbuildArgsTest(unittest.TestCase):
	cfg = parse(SAMPLE)

	def test_build_takes_the_kconfig_lines_and_no_boot_arguments(self):
		args = kbuild.kunit_args('arm64', self.cfg, '/b')
		self.assertIn('--kconfig_add=# CONFIG_PREEMPT is not set', args)
		self.assertIn('--kconfig_add=CONFIG_CMDLINE="x y"', args)
		self.assertIn('--cross_compile=aarch64-linux-gnu-', args)
		self.assertFalse([a for a in args if a.startswith(('--kernel_args', '--qemu_args'))])

	def test_boot_takes_kernel_and_qemu_arguments_of_the_arch(self):
		self.assertEqual(kbuild.boot_args('x86_64', self.cfg),
				 ['--kernel_args=nohz_full=1-3', '--kernel_args=rcu_nocbs=1-3'])
		args = kbuild.boot_args('arm64', self.cfg)
		self.assertEqual(args[-1], '--qemu_args=-machine virt,gic-version=3 -append \'a b\'')
		# kunit.py shlex-splits each --qemu_args value
		self.assertEqual(shlex.split(args[-1].split('=', 1)[1]),
				 self.cfg.qemu_args_for('arm64'))

	def test_fingerprint_sees_the_kernel_not_the_boot(self):
		with mock.patch.object(kbuild, 'git', return_value='abc\n'):
			base = kbuild.build_fingerprint('/t', 'x86_64', self.cfg)
			boot_only = Config('sample', self.cfg.path, list(self.cfg.kconfig), ['x86_64'],
					   {'x86_64': ['other=1']}, {'x86_64': ['-smp', '2']})
			self.assertEqual(base, kbuild.build_fingerprint('/t', 'x86_64', boot_only))
			more = Config('sample', self.cfg.path, self.cfg.kconfig + ['CONFIG_KASAN=y'])
			self.assertNotEqual(base, kbuild.build_fingerprint('/t', 'x86_64', more))
			self.assertNotEqual(base, kbuild.build_fingerprint('/t', 'arm64', self.cfg))

	@contextlib.contextmanager
	def repo(self, files):
		"""kbuild reading the kunitconfig files of a repository holding files (name -> text)."""
		with tempfile.TemporaryDirectory() as repo:
			for name, text in files.items():
				with open(os.path.join(repo, name), 'w') as f:
					f.write(text)
			with mock.patch.object(kbuild, 'kunitconfig_paths',
					       lambda arch: prepare.kunitconfig_paths(arch, repo)), \
			     mock.patch.object(kbuild, 'kunitconfig_path',
					       lambda: prepare.kunitconfig_path(repo)), \
			     mock.patch.object(kbuild, 'arch_kunitconfigs',
					       lambda: prepare.arch_kunitconfigs(repo)), \
			     mock.patch.object(kbuild, 'git', return_value='abc\n'):
				yield repo

	def test_arch_kunitconfig_is_a_second_kunitconfig_of_its_arch_only(self):
		with self.repo({'kunitconfig': 'CONFIG_KUNIT=y\n',
				'kunitconfig.x86_64': 'CONFIG_X86_ONLY=y\n'}) as repo:
			top = os.path.join(repo, 'kunitconfig')
			for arch, want in (('x86_64', [top, top + '.x86_64']), ('arm64', [top])):
				args = kbuild.kunit_args(arch, self.cfg, '/b')
				self.assertEqual([a for a in args if a.startswith('--kunitconfig')],
						 ['--kunitconfig=' + p for p in want], arch)

	def test_fingerprint_sees_the_arch_kunitconfig_of_its_arch(self):
		files = {'kunitconfig': 'CONFIG_KUNIT=y\n'}
		with self.repo(files):
			before = {a: kbuild.build_fingerprint('/t', a, self.cfg) for a in common.ARCHES}
		files['kunitconfig.x86_64'] = 'CONFIG_X86_ONLY=y\n'
		with self.repo(files):
			after = {a: kbuild.build_fingerprint('/t', a, self.cfg) for a in common.ARCHES}
		self.assertNotEqual(before['x86_64'], after['x86_64'])
		self.assertEqual(before['arm64'], after['arm64'])
		files['kunitconfig.x86_64'] = 'CONFIG_X86_ONLY=y\nCONFIG_MORE=y\n'
		with self.repo(files):
			self.assertNotEqual(after['x86_64'], kbuild.build_fingerprint('/t', 'x86_64', self.cfg))

	def test_debug_info_in_an_arch_kunitconfig(self):
		with self.repo({'kunitconfig': 'CONFIG_KUNIT=y\n',
				'kunitconfig.arm64': 'CONFIG_DEBUG_INFO_DWARF5=y\n'}):
			self.assertTrue(kbuild.debug_info(None, 'arm64'))
			self.assertFalse(kbuild.debug_info(None, 'x86_64'))
			self.assertTrue(kbuild.debug_info(None))  # arch unknown: any arch's file
			with mock.patch.dict(os.environ, {'KUNIT_RCU_NO_CCACHE': '1'}):
				os.environ.pop('CCACHE_NOHASHDIR', None)
				self.assertNotIn('CCACHE_NOHASHDIR', kbuild.build_env(arch='arm64'))
				self.assertIn('CCACHE_NOHASHDIR', kbuild.build_env(arch='x86_64'))

	def test_ccache_base_dir_and_hash_dir(self):
		with mock.patch.dict(os.environ, {'KUNIT_RCU_NO_CCACHE': '1'}):
			for var in ('CCACHE_BASEDIR', 'CCACHE_NOHASHDIR'):
				os.environ.pop(var, None)
			env = kbuild.build_env(config=self.cfg)
			self.assertEqual(env['CCACHE_BASEDIR'], os.path.realpath(common.version_dir()))
			self.assertEqual(env['CCACHE_NOHASHDIR'], '1')
			debug = Config('debug', '', ['CONFIG_DEBUG_INFO_DWARF5=y'])
			self.assertNotIn('CCACHE_NOHASHDIR', kbuild.build_env(config=debug))
			none = Config('nodebug', '', ['CONFIG_DEBUG_INFO_NONE=y'])
			self.assertIn('CCACHE_NOHASHDIR', kbuild.build_env(config=none))


class CcacheShimTest(unittest.TestCase):
	"""The compiler shim bypasses ccache for sources that .incbin a file."""

	def test_incbin_bypasses_ccache(self):
		import subprocess
		with tempfile.TemporaryDirectory() as d:
			for name in ('real', 'ccache'):
				with open(os.path.join(d, name), 'w') as f:
					f.write('#!/bin/sh\necho ' + name + '\n')
				os.chmod(os.path.join(d, name), 0o755)
			shim = os.path.join(d, 'gcc')
			with open(shim, 'w') as f:
				f.write(kbuild._SHIM.format(cc='gcc', real=os.path.join(d, 'real'),
							    ccache=os.path.join(d, 'ccache')))
			os.chmod(shim, 0o755)
			with open(os.path.join(d, 'piggy.S'), 'w') as f:
				f.write('.section .rodata\n.incbin "vmlinux.bin.gz"\n')
			with open(os.path.join(d, 'plain.c'), 'w') as f:
				f.write('int x;\n')

			def via(*args):
				return subprocess.run([shim, *args], cwd=d, capture_output=True,
						      text=True, check=True).stdout.strip()
			self.assertEqual(via('-c', 'piggy.S', '-o', 'piggy.o'), 'real')
			self.assertEqual(via('-c', 'plain.c', '-o', 'plain.o'), 'ccache')
			self.assertEqual(via('-x', 'c', '/dev/null'), 'ccache')


class ConfigDirTest(unittest.TestCase):
	"""run and the CLI against a configs/ of our own."""

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		for name, text in (('default', ''), ('x86only', '# arches: x86_64\n'),
				   ('both', 'CONFIG_X=y\n')):
			with open(os.path.join(self.tmp.name, name + '.config'), 'w') as f:
				f.write(text)
		for patch in (mock.patch.object(common, 'configs_dir', return_value=self.tmp.name),
			      mock.patch.dict(os.environ, {'KUNIT_RCU_CACHE': self.tmp.name})):
			patch.start()
			self.addCleanup(patch.stop)

	def test_run_refuses_an_arch_outside_the_config_before_doing_anything(self):
		with mock.patch.object(run, '_run') as body:
			with self.assertRaisesRegex(UserError, 'CONFIG=x86only does not apply to ARCH=arm64'):
				run.run('arm64', 'x86only', install=False)
		body.assert_not_called()

	def test_make_run_checks_every_arch_before_the_first_build(self):
		with mock.patch.object(run, 'run') as one, mock.patch('sys.stderr', io.StringIO()) as err:
			code = cli.main(['run', '--arch=x86_64 arm64', '--config=x86only'])
		self.assertEqual(code, 2)
		self.assertIn('CONFIG=x86only does not apply to ARCH=arm64', err.getvalue())
		one.assert_not_called()

	def outcome(self, *args, **kw):
		return run.RunOutcome(ok=True, counts={'passed': 3, 'failed': 0, 'skipped': 0},
				      integrity_ok=True)

	def test_check_configs_runs_every_config_on_its_arches(self):
		out = io.StringIO()
		with mock.patch.object(run, 'run', side_effect=self.outcome) as one, \
		     contextlib.redirect_stdout(out):
			self.assertEqual(cli.main(['check-configs']), 0)
		self.assertEqual([c.args[:2] for c in one.call_args_list],
				 [('x86_64', 'both'), ('arm64', 'both'), ('x86_64', 'default'),
				  ('arm64', 'default'), ('x86_64', 'x86only')])
		self.assertIn('ARCH=arm64 CONFIG=both', out.getvalue())
		self.assertEqual(out.getvalue().splitlines()[-1], '20 passed, 0 failed, 0 skipped')

	def test_check_runs_the_matrix_configs_after_the_default_runs(self):
		with open(os.path.join(self.tmp.name, 'nopreempt.config'), 'w') as f:
			f.write('CONFIG_PREEMPT_NONE=y\n')
		with open(os.path.join(self.tmp.name, 'nohz.config'), 'w') as f:
			f.write('CONFIG_NO_HZ_FULL=y\n')
		with open(os.path.join(self.tmp.name, 'ghost.config'), 'w') as f:
			f.write('# kernel-args: maxcpus=2\n')
		out = io.StringIO()
		with mock.patch.object(run, 'run', side_effect=self.outcome) as one, \
		     mock.patch.object(cli, 'selftest', return_value=(1, 0, 0)), \
		     mock.patch.object(cli, '_prepared'), \
		     mock.patch.object(cli.series, 'check', return_value=(1, 0, 0)), \
		     mock.patch.object(cli.ktap_check, 'check', return_value=(1, 0, 0)), \
		     mock.patch.object(cli.kunit_tool_check, 'check', return_value=(1, 0, 0)), \
		     mock.patch.object(cli.matrix, 'check', create=True, return_value=(1, 0, 0)), \
		     mock.patch.object(cli.kconfig_check, 'check_builds',
				       return_value=(3, 0, 0)) as kconfig, \
		     mock.patch.object(cli.flavor_api, 'check_tree', return_value=(1, 0, 0)), \
		     mock.patch.object(cli.coverage, 'gate', return_value=(2, 0, 7)) as gate, \
		     contextlib.redirect_stdout(out):
			self.assertEqual(cli.main(['check', '--no-mutants']), 0)
		runs = [('x86_64', 'default'), ('arm64', 'default'), ('x86_64', 'ghost'),
			('arm64', 'ghost'), ('x86_64', 'nopreempt'), ('arm64', 'nopreempt'),
			('x86_64', 'nohz'), ('arm64', 'nohz')]
		self.assertEqual([c.args[:2] for c in one.call_args_list], runs)
		self.assertRegex(out.getvalue(), r'KUnit ARCH=arm64 CONFIG=ghost +4 passed')
		self.assertRegex(out.getvalue(), r'KUnit ARCH=arm64 CONFIG=nohz +4 passed')
		# A config without Kconfig lines boots the default build.
		self.assertEqual(common.build_dir('arm64', 'ghost', False),
				 common.build_dir('arm64', 'default', False))
		self.assertNotEqual(common.build_dir('x86_64', 'nopreempt', False),
				    common.build_dir('x86_64', 'default', False))
		# CFG-1 on the .config of each of those builds, one result each.
		kconfig.assert_called_once_with(runs)
		# The coverage gate on the two default runs' dumps.
		gate.assert_called_once_with(['x86_64', 'arm64'])
		self.assertRegex(out.getvalue(), r'coverage gate +2 passed, 0 failed, 7 skipped')
		self.assertRegex(out.getvalue(), r'Kconfig rules \(CFG-1\) +3 passed')
		self.assertRegex(out.getvalue(), r'flavor APIs \(FUT-6\) +1 passed')
		self.assertFalse(locks.held())


if __name__ == '__main__':
	unittest.main()
