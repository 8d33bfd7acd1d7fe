# SPDX-License-Identifier: GPL-2.0
import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from kunit_rcu import common, prepare
from kunit_rcu.common import UserError


def sh(cwd, *cmd):
	subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)


class RepoFixture(unittest.TestCase):
	"""A fake kunit-rcu repository and a small git "kernel tree"."""

	def setUp(self):
		self.tmp = tempfile.mkdtemp()
		self.repo = os.path.join(self.tmp, 'repo')
		os.makedirs(os.path.join(self.repo, 'patches'))
		os.makedirs(os.path.join(self.repo, 'kernel', 'rcu'))
		self.write('kunitconfig', 'CONFIG_KUNIT=y\n')
		self.write('kernel/rcu/a_kunit.c', '// a\n')
		self.write('patches/0001-a.patch', 'x')
		self.write('patches/series', '# comment\n0001-a.patch\n\n')
		self.tree = os.path.join(self.tmp, 'tree')
		os.makedirs(self.tree)
		with open(os.path.join(self.tree, 'f.c'), 'w') as f:
			f.write('one\ntwo\nthree\n')
		env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
			   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
		os.environ.update({k: v for k, v in env.items() if k.startswith('GIT_')})
		sh(self.tree, 'git', 'init', '-q')
		sh(self.tree, 'git', 'add', '-A')
		sh(self.tree, 'git', 'commit', '-q', '-m', 'base')

	def tearDown(self):
		shutil.rmtree(self.tmp)

	def write(self, rel, text):
		path = os.path.join(self.repo, rel)
		os.makedirs(os.path.dirname(path), exist_ok=True)
		with open(path, 'w') as f:
			f.write(text)


class PrepareTest(RepoFixture):
	def test_series_order_and_comments(self):
		self.assertEqual([os.path.basename(p) for p in prepare.series_patches(self.repo)],
				 ['0001-a.patch'])

	def test_series_names_missing_patch(self):
		self.write('patches/series', '0001-a.patch\n0002-gone.patch\n')
		with self.assertRaisesRegex(UserError, 'line 2 names "0002-gone.patch"'):
			prepare.series_patches(self.repo)

	def test_digest_sees_every_input(self):
		base = prepare.input_digest(self.repo, '6.1.192-3')
		self.assertEqual(base, prepare.input_digest(self.repo, '6.1.192-3'))
		for rel, text in (('kunitconfig', 'CONFIG_KUNIT=y\nCONFIG_X=y\n'),
				  ('kunitconfig.x86_64', 'CONFIG_X86_ONLY=y\n'),
				  ('kunitconfig.x86_64', 'CONFIG_X86_ONLY=y\nCONFIG_MORE=y\n'),
				  ('kunitconfig.arm64', ''),
				  ('kernel/rcu/a_kunit.c', '// b\n'),
				  ('kernel/rcu/new.c', ''),
				  ('arch/arm64/kernel/new_kunit.c', ''),
				  ('patches/0001-a.patch', 'y')):
			with self.subTest(rel=rel):
				old = prepare.input_digest(self.repo, '6.1.192-3')
				self.write(rel, text)
				self.assertNotEqual(old, prepare.input_digest(self.repo, '6.1.192-3'))
		self.assertNotEqual(prepare.input_digest(self.repo, '6.1.192-3'),
				    prepare.input_digest(self.repo, '6.1.192-2'))

	def test_overlay_lists_files(self):
		self.assertEqual(prepare.overlay_files(self.repo), ['kernel/rcu/a_kunit.c'])

	def test_overlay_takes_every_arch_dir_and_skips_absent_ones(self):
		self.assertIn('arch/arm64/kernel', common.OVERLAY_DIRS)
		self.write('arch/arm64/kernel/arm_kunit.c', '// arm64\n')
		self.write('arch/arm64/kernel/README.md', 'not copied\n')
		self.write('arch/x86/kernel/x86_kunit.c', '// x86\n')
		self.assertEqual(prepare.overlay_files(self.repo),
				 ['kernel/rcu/a_kunit.c', 'arch/x86/kernel/x86_kunit.c',
				  'arch/arm64/kernel/arm_kunit.c'])
		shutil.rmtree(os.path.join(self.repo, 'arch'))
		self.assertEqual(prepare.overlay_files(self.repo), ['kernel/rcu/a_kunit.c'])
		prepare.input_digest(self.repo, '6.1.192-3')  # no overlay dir but one: fine

	def test_kunitconfig_paths_add_the_arch_file_if_any(self):
		top = os.path.join(self.repo, 'kunitconfig')
		for arch in common.ARCHES:
			self.assertEqual(prepare.kunitconfig_paths(arch, self.repo), [top])
		self.write('kunitconfig.x86_64', '# x86 only\nCONFIG_X86_ONLY=y\n')
		self.assertEqual(prepare.kunitconfig_paths('x86_64', self.repo), [top, top + '.x86_64'])
		self.assertEqual(prepare.kunitconfig_paths('arm64', self.repo), [top])
		self.assertEqual(prepare.kunitconfig_text('x86_64', self.repo),
				 'CONFIG_KUNIT=y\n# x86 only\nCONFIG_X86_ONLY=y\n')
		self.assertEqual(prepare.kunitconfig_text('arm64', self.repo), 'CONFIG_KUNIT=y\n')

	def test_kunitconfig_of_no_arch_is_refused_naming_file_and_arches(self):
		self.write('kunitconfig.x86', 'CONFIG_X86_ONLY=y\n')
		for call in (lambda: prepare.kunitconfig_paths('arm64', self.repo),
			     lambda: prepare.input_digest(self.repo, '6.1.192-3')):
			with self.assertRaises(UserError) as cm:
				call()
			msg = str(cm.exception)
			self.assertIn('kunitconfig.x86', msg)
			self.assertIn('"x86" is not a known arch (arm64, x86_64)', msg)

	def test_default_build_dirs_get_kunitconfig_and_the_arch_file(self):
		self.write('kunitconfig.arm64', 'CONFIG_ARM64_ONLY=y')  # no final newline
		with mock.patch.dict(os.environ, {'KUNIT_RCU_CACHE': os.path.join(self.tmp, 'cache')}):
			prepare._write_default_kunitconfig(self.repo)
			got = {}
			for arch in common.ARCHES:
				with open(os.path.join(common.build_dir(arch, 'default', False),
						       '.kunitconfig')) as f:
					got[arch] = f.read()
		self.assertEqual(got, {'x86_64': 'CONFIG_KUNIT=y\n',
				       'arm64': 'CONFIG_KUNIT=y\nCONFIG_ARM64_ONLY=y\n'})

	def _patch(self, name, old, new):
		with open(os.path.join(self.tree, 'f.c'), 'w') as f:
			f.write(new)
		sh(self.tree, 'git', 'commit', '-q', '-am', 'change ' + name)
		out = subprocess.run(['git', 'format-patch', '-1', '--stdout'], cwd=self.tree,
				     check=True, capture_output=True, text=True).stdout
		sh(self.tree, 'git', 'reset', '-q', '--hard', 'HEAD~1')
		path = os.path.join(self.tmp, name)
		with open(path, 'w') as f:
			f.write(out)
		return path

	def test_apply_makes_one_commit_per_patch(self):
		p = self._patch('p1.patch', '', 'one\nTWO\nthree\n')
		prepare.apply_patches(self.tree, [p], 'series')
		log = subprocess.run(['git', 'log', '--format=%s'], cwd=self.tree,
				     capture_output=True, text=True).stdout.split('\n')
		self.assertEqual(log[:2], ['change p1.patch', 'base'])

	def test_plain_diff_is_applied_too(self):
		with open(os.path.join(self.tmp, 'plain.diff'), 'w') as f:
			f.write('--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n')
		prepare.apply_patches(self.tree, [os.path.join(self.tmp, 'plain.diff')], 'EXTRA_PATCHES')
		with open(os.path.join(self.tree, 'f.c')) as f:
			self.assertIn('2\n', f.read())

	def test_patch_that_does_not_apply_is_named_with_its_hunk(self):
		p = self._patch('bad.patch', '', 'one\nTWO\nthree\n')
		with open(os.path.join(self.tree, 'f.c'), 'w') as f:
			f.write('completely\ndifferent\n')
		sh(self.tree, 'git', 'commit', '-q', '-am', 'diverge')
		with self.assertRaises(UserError) as cm:
			prepare.apply_patches(self.tree, [p], 'EXTRA_PATCHES')
		msg = str(cm.exception)
		self.assertIn('EXTRA_PATCHES patch bad.patch does not apply', msg)
		self.assertIn('f.c', msg)
		status = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'],
					cwd=self.tree, capture_output=True, text=True).stdout
		self.assertEqual(status, '')  # left clean

	def test_missing_extra_patch(self):
		with self.assertRaisesRegex(UserError, 'does not exist'):
			prepare.apply_patches(self.tree, ['/nonexistent.patch'], 'EXTRA_PATCHES')

	def test_build_dirs_survive_reset_and_clean_of_a_worktree(self):
		"""scratch/.kunit* must outlive prepare_scratch's reset of scratch/."""
		wt = os.path.join(self.tmp, 'scratch')
		sh(self.tree, 'git', 'worktree', 'add', '-q', '--detach', wt, 'HEAD')
		prepare.exclude_build_dirs(self.tree)
		prepare.exclude_build_dirs(self.tree)  # idempotent
		for d in ('.kunit', '.kunit-arm64', '.kunit-x86_64-nopreempt'):
			os.makedirs(os.path.join(wt, d, 'kernel'))
			with open(os.path.join(wt, d, 'kernel', 'x.o'), 'w') as f:
				f.write('object')
		os.makedirs(os.path.join(wt, 'stray'))
		with open(os.path.join(wt, 'stray', 'junk'), 'w') as f:
			f.write('junk')
		status = subprocess.run(['git', 'status', '--porcelain'], cwd=wt,
					capture_output=True, text=True).stdout
		self.assertEqual(status, '?? stray/\n')  # the build dirs are ignored
		prepare.reset_worktree(wt, 'HEAD')
		for d in ('.kunit', '.kunit-arm64', '.kunit-x86_64-nopreempt'):
			self.assertTrue(os.path.isfile(os.path.join(wt, d, 'kernel', 'x.o')), d)
		self.assertFalse(os.path.exists(os.path.join(wt, 'stray')))
		exclude = os.path.join(self.tree, '.git', 'info', 'exclude')
		with open(exclude) as f:
			self.assertEqual(f.read().splitlines().count(prepare.BUILD_DIR_PATTERN), 1)


class ProjectFilesTest(unittest.TestCase):
	"""The repository's own series and mutants are well-formed."""

	def test_series_lists_every_patch(self):
		repo = prepare.REPO
		listed = [os.path.basename(p) for p in prepare.series_patches(repo)]
		on_disk = sorted(n for n in os.listdir(os.path.join(repo, 'patches'))
				 if n.endswith('.patch'))
		self.assertEqual(sorted(listed), on_disk)
		for name in listed:
			with open(os.path.join(repo, 'patches', name)) as f:
				head = f.read()
			# The kernel's prefixes; arm64 patches use "arm64: <area>:".
			self.assertRegex(head, r'\nSubject: \[PATCH[^\]]*\] '
					 r'(rcu|rcu-tasks|srcu|x86/traps|gcov|kunit(: tool)?|arm64: \w+): ', name)


if __name__ == '__main__':
	unittest.main()
