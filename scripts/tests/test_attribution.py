# SPDX-License-Identifier: GPL-2.0
import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from kunit_rcu import attribution
from kunit_rcu.attribution import (PatchLines, is_test_file, noinstr_lines,
				   parse_unified_zero, patch_lines, since_rev)
from kunit_rcu.common import UserError

GIT_ENV = {'GIT_AUTHOR_NAME': 't', 'GIT_AUTHOR_EMAIL': 't@t',
	   'GIT_COMMITTER_NAME': 't', 'GIT_COMMITTER_EMAIL': 't@t',
	   'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1'}


def sh(cwd, *cmd):
	return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout


def write(top, rel, text):
	path = os.path.join(top, rel)
	os.makedirs(os.path.dirname(path), exist_ok=True)
	with open(path, 'w') as f:
		f.write(text)


def lines(*words):
	return ''.join(w + '\n' for w in words)


class GitFixture(unittest.TestCase):
	"""Git repositories built once per class (build() in setUpClass); tests read them."""

	@classmethod
	def setUpClass(cls):
		cls.tmp = tempfile.mkdtemp()
		cls.env = mock.patch.dict(os.environ, GIT_ENV)
		cls.env.start()
		try:
			cls.build()
		except BaseException:
			cls.tearDownClass()
			raise

	@classmethod
	def tearDownClass(cls):
		cls.env.stop()
		shutil.rmtree(cls.tmp)

	@classmethod
	def build(cls):
		pass

	@classmethod
	def init(cls, name):
		path = os.path.join(cls.tmp, name)
		os.makedirs(path)
		sh(path, 'git', 'init', '-q', '-b', 'main')
		return path

	@classmethod
	def commit(cls, top, msg, files, delete=()):
		for rel, text in files.items():
			write(top, rel, text)
		for rel in delete:
			sh(top, 'git', 'rm', '-q', rel)
		sh(top, 'git', 'add', '-A')
		sh(top, 'git', 'commit', '-q', '-m', msg)
		return sh(top, 'git', 'rev-parse', 'HEAD').strip()


class PatchLinesTest(GitFixture):
	"""pristine, then three commits; the third rewrites and deletes lines of the first."""

	@classmethod
	def build(cls):
		cls.tree = t = cls.init('tree')
		cls.commit(t, 'pristine', {'a.c': lines('p1', 'p2', 'p3'), 'Makefile': 'all:\n'})
		sh(t, 'git', 'tag', 'pristine')
		cls.c1 = cls.commit(t, 'rcu: first', {
			'a.c': lines('p1', 'A1', 'A2', 'p2', 'p3'),
			'inc/b.h': lines('x', 'y'),
			'gone.c': lines('soon deleted'),
			'Makefile': 'all: a\n'})
		cls.c2 = cls.commit(t, 'doc: no C', {'README': 'text\n'})
		cls.c3 = cls.commit(t, 'rcu: third', {
			'a.c': lines('p1', 'A1 rewritten', 'p2', 'P3')}, delete=['gone.c'])

	def test_attribution(self):
		got = patch_lines(self.tree)
		self.assertEqual(got, [
			PatchLines(self.c1, 'rcu: first', {'inc/b.h': {1, 2}}),
			PatchLines(self.c2, 'doc: no C', {}),
			PatchLines(self.c3, 'rcu: third', {'a.c': {2, 4}}),
		])
		self.assertEqual([p.count() for p in got], [2, 0, 2])

	def test_other_range(self):
		got = patch_lines(self.tree, base=self.c1, head=self.c2)
		self.assertEqual(got, [PatchLines(self.c2, 'doc: no C', {})])

	def test_unknown_base(self):
		with self.assertRaisesRegex(UserError, 'no commit "nope"'):
			patch_lines(self.tree, base='nope')


class SinceRevTest(GitFixture):
	"""A fake kunit-rcu repository with two revisions and a tree prepared from the second."""

	@classmethod
	def build(cls):
		cls.tree = t = cls.init('tree')
		cls.commit(t, 'pristine', {'f.c': lines('one', 'two', 'three'),
					   'kernel/rcu/tree.c': lines('int x;'),
					   'other/untouched.c': lines('u')})
		sh(t, 'git', 'tag', 'pristine')
		p1, p2 = cls.patches(('rcu: p1', {'f.c': lines('one', 'TWO', 'three')}),
				     ('rcu: p2', {'f.c': lines('one', 'TWO', 'three', 'four')}))
		cls.repo = r = cls.init('repo')
		cls.rev_a = cls.commit(r, 'rev A', {
			'patches/series': '0001-p1.patch\n', 'patches/0001-p1.patch': p1,
			'patches/overlay-message': 'overlay\n', 'kunitconfig': 'CONFIG_KUNIT=y\n',
			'kernel/rcu/t_kunit.c': lines('a', 'b'), 'scripts/x.py': 'ignored\n'})
		cls.rev_b = cls.commit(r, 'rev B', {
			'patches/series': '0001-p1.patch\n0002-p2.patch\n', 'patches/0002-p2.patch': p2,
			'kernel/rcu/t_kunit.c': lines('a', 'B', 'c'),
			'lib/kunit-rcu/core.c': lines('core')})
		# The prepared tree of rev B: its series, then its overlay commit.
		for name in ('0001-p1.patch', '0002-p2.patch'):
			sh(t, 'git', 'am', '-q', os.path.join(r, 'patches', name))
		cls.commit(t, 'overlay', {'kernel/rcu/t_kunit.c': lines('a', 'B', 'c'),
					  'lib/kunit-rcu/core.c': lines('core'),
					  'kernel/rcu/.kunitconfig': 'CONFIG_KUNIT=y\n'})
		cls.head = sh(t, 'git', 'rev-parse', 'HEAD')

	@classmethod
	def patches(cls, *changes):
		"""format-patch texts of (subject, files) commits onto the tree's HEAD, which stays put."""
		out = []
		for subject, files in changes:
			cls.commit(cls.tree, subject, files)
			out.append(sh(cls.tree, 'git', 'format-patch', '-1', '--stdout'))
		sh(cls.tree, 'git', 'reset', '-q', '--hard', f'HEAD~{len(changes)}')
		return out

	def worktrees(self):
		return sh(self.tree, 'git', 'worktree', 'list', '--porcelain').count('worktree ')

	def test_lines_since_each_rev(self):
		self.assertEqual(since_rev(self.rev_a[:10], self.repo, self.tree),
				 {'f.c': {4}, 'kernel/rcu/t_kunit.c': {2, 3},
				  'lib/kunit-rcu/core.c': {1}})
		self.assertEqual(since_rev(self.rev_b, self.repo, self.tree), {})
		# Nothing left behind, the tree untouched.
		self.assertEqual(self.worktrees(), 1)
		self.assertEqual(sh(self.tree, 'git', 'rev-parse', 'HEAD'), self.head)
		self.assertEqual(sh(self.tree, 'git', 'status', '--porcelain'), '')

	def test_unknown_rev_says_how_to_list_them(self):
		with self.assertRaises(UserError) as cm:
			since_rev('no-such-rev', self.repo, self.tree)
		self.assertIn('no-such-rev', str(cm.exception))
		self.assertIn(f'git -C {self.repo} log --oneline', str(cm.exception))

	def test_series_that_does_not_apply_names_the_patch(self):
		bad, = self.patches(('rcu: bad', {'f.c': lines('one', 'TWO', 'three', 'four', 'x')}))
		bad = bad.replace(' four', ' not in the tree')
		rev = self.commit(self.repo, 'rev C', {
			'patches/series': '0001-p1.patch\n0009-bad.patch\n',
			'patches/0009-bad.patch': bad})
		with self.assertRaises(UserError) as cm:
			since_rev(rev, self.repo, self.tree)
		msg = str(cm.exception)
		self.assertIn(f'REV={rev}: series patch 0009-bad.patch does not apply', msg)
		self.assertIn('f.c', msg)  # what git says about it
		self.assertEqual(sh(self.tree, 'git', 'status', '--porcelain'), '')

	def test_rebuilt_tree_of_the_prepared_rev_is_head(self):
		with tempfile.TemporaryDirectory() as tmp:
			attribution._export(self.repo, self.rev_b, tmp)
			got = attribution.rev_tree(self.tree, tmp, 'B', os.path.join(tmp, 'index'))
		# Files the series does not touch are in it too.
		self.assertEqual(got, sh(self.tree, 'git', 'rev-parse', 'HEAD^{tree}').strip())


class ParseUnifiedZeroTest(unittest.TestCase):
	def test_hunks(self):
		diff = '''diff --git a/kernel/rcu/tree.c b/kernel/rcu/tree.c
index d39d7ef..f3ed0ac 100644
--- a/kernel/rcu/tree.c
+++ b/kernel/rcu/tree.c
@@ -4570,0 +4571 @@ void rcu_scheduler_starting(void)
+	rcu_boot_kunit_record(RCU_BOOT_SCHED_STARTING);
@@ -4581,0 +4583 @@ void rcu_scheduler_starting(void)
+	rcu_boot_kunit_record(RCU_BOOT_SCHED_INIT);
@@ -4600,2 +4601,3 @@ void __init rcu_init(void)
-	old();
-	older();
+	new();
+	newer();
+	newest();
@@ -4700,3 +4702,0 @@
-	a();
-	b();
-	c();
@@ -4800 +4799 @@
-	x;
+	y;
diff --git a/kernel/rcu/new.c b/kernel/rcu/new.c
new file mode 100644
index 0000000..1234567
--- /dev/null
+++ b/kernel/rcu/new.c
@@ -0,0 +1,3 @@
+// SPDX-License-Identifier: GPL-2.0
+
+int x;
\\ No newline at end of file
diff --git a/kernel/rcu/gone.c b/kernel/rcu/gone.c
deleted file mode 100644
index 1234567..0000000
--- a/kernel/rcu/gone.c
+++ /dev/null
@@ -1,2 +0,0 @@
-int gone;
--- not a header: a deleted line
diff --git a/kernel/rcu/only_deletes.c b/kernel/rcu/only_deletes.c
--- a/kernel/rcu/only_deletes.c
+++ b/kernel/rcu/only_deletes.c
@@ -3,2 +2,0 @@
-a
-b
'''
		self.assertEqual(parse_unified_zero(diff), {
			'kernel/rcu/tree.c': {4571, 4583, 4601, 4602, 4603, 4799},
			'kernel/rcu/new.c': {1, 2, 3}})

	def test_context_lines_and_lines_looking_like_headers(self):
		diff = ('--- a/f.c\n+++ b/f.c\n@@ -1,4 +1,4 @@\n ctx\n-old\n+++x;\n'
			' ctx\n\n--- a/g.h\n+++ b/g.h\n@@ -0,0 +1 @@\n+only\n')
		self.assertEqual(parse_unified_zero(diff), {'f.c': {2}, 'g.h': {1}})

	def test_quoted_path(self):
		diff = '+++ "b/dir/t\\303\\244b\\tx.c"\n@@ -1,0 +2 @@\n+x\n'
		self.assertEqual(parse_unified_zero(diff), {'dir/t\u00e4b\tx.c': {2}})

	def test_empty(self):
		self.assertEqual(parse_unified_zero(''), {})


class IsTestFileTest(unittest.TestCase):
	def test_rule(self):
		for path in ('kernel/rcu/rcu_kunit.c', 'arch/x86/kernel/ist_kunit.c',
			     'lib/test_foo_test.c', 'mm/kasan/kasan-test.c', 'include/kunit/test.h', 'lib/kunit/test.c',
			     'kernel/rcu/rcu_kunit_helpers.h', 'tools/testing/kunit/qemu_configs/x86_64.py',
			     './kernel/rcu/rcu_boot_kunit.c'):
			self.assertTrue(is_test_file(path), path)
		for path in ('kernel/rcu/tree.c', 'kernel/rcu/rcu.h', 'lib/kunit_helpers.c',
			     'kernel/rcu/kunit.c.orig', 'arch/x86/kernel/traps.c', 'mytools/x.c',
			     'kernel/rcu/testing.c', 'lib/kunit-rcu/core.c', 'lib/kunit-rcu/kunit_rcu.h'):
			self.assertFalse(is_test_file(path), path)


# Shaped like 6.1's arch/x86/kernel/traps.c and nmi.c and arm64's entry-common.c.
KERNEL_C = r'''// SPDX-License-Identifier: GPL-2.0
#include <linux/kernel.h>
#define BRACE_MACRO(x) { x }	/* not code: "{" */

static __always_inline bool is_int3(unsigned long ip)
{
	return *(u8 *)ip == 0xcc;
}

noinstr void exc_nmi(struct pt_regs *regs)
{
	if (is_int3(regs->ip))
		pr_info("} not a brace\n");
	/* } nor this */
}

DEFINE_IDTENTRY_RAW(exc_int3)
{
	char c = '}';

	if (c == '{')
		return;
}

static void __always_inline
not_noinstr(struct pt_regs *regs,
	    unsigned long code)
{
	/* noinstr in a comment does not count */
}

static noinstr bool
handle_bug(struct pt_regs *regs,
	   unsigned long code)	// the body starts on the next line
{
	struct bug_entry e = { .x = 1 };

	return e.x;
}

static const struct kunit_case cases[] = {
	{ .name = "noinstr" },
	{}
};

UNHANDLED(el1t, 64, sync)
UNHANDLED(el1t, 64, irq)

static void noinstr el1_dbg(struct pt_regs *regs, unsigned long esr) __acquires(x)
{
#if 1
	arm64_enter_el1_dbg(regs);
#endif
}
__no_profile int counted(void) { return 0; }
struct s { int (*f)(void); };
noinstr void declared_only(void);
void plain(void)
{
}
'''


class NoinstrLinesTest(unittest.TestCase):
	def function_lines(self, text, first):
		"""The line range of the function whose declaration starts on line first."""
		rows = text.splitlines()
		for end in range(first, len(rows) + 1):
			if rows[end - 1].startswith('}') or rows[end - 1].endswith('}'):
				return set(range(first, end + 1))
		raise AssertionError(first)

	def test_kernel_shaped_code(self):
		rows = KERNEL_C.splitlines()
		start = {name: next(i for i, r in enumerate(rows, 1) if r.startswith(name))
			 for name in ('noinstr void exc_nmi', 'DEFINE_IDTENTRY_RAW(exc_int3)',
				      'static noinstr bool', 'static void noinstr el1_dbg',
				      '__no_profile int counted')}
		want = set()
		for first in start.values():
			want |= self.function_lines(KERNEL_C, first)
		got = noinstr_lines(KERNEL_C)
		self.assertEqual(got, want)
		self.assertIn(start['noinstr void exc_nmi'] + 5, got)  # its closing brace
		self.assertNotIn(start['noinstr void exc_nmi'] + 6, got)

	def test_each_idtentry_macro_that_expands_to_noinstr(self):
		for name in attribution.NOINSTR_MACROS:
			with self.subTest(name=name):
				self.assertEqual(noinstr_lines(f'{name}(exc_x)\n{{\n\tf();\n}}\n'), {1, 2, 3, 4})
		for name in ('DEFINE_IDTENTRY', 'DEFINE_IDTENTRY_ERRORCODE', 'DEFINE_IDTENTRY_IRQ',
			     'DEFINE_IDTENTRY_SYSVEC', 'DEFINE_IDTENTRY_SYSVEC_SIMPLE'):
			with self.subTest(name=name):
				self.assertEqual(noinstr_lines(f'{name}(exc_x)\n{{\n\tf();\n}}\n'), set())

	def test_multiline_comment_and_continued_preprocessor_line(self):
		text = ('/* a comment { with\n a brace */\n#define X(a) \\\n\tdo { a; } \\\n'
			'\twhile (0)\nnoinstr\nvoid f(void)\n{\n}\n')
		self.assertEqual(noinstr_lines(text), {6, 7, 8, 9})

	def test_stray_quote_in_preprocessor_line(self):
		text = "#error don't\nnoinstr void f(void)\n{\n}\nvoid g(void)\n{\n}\n"
		self.assertEqual(noinstr_lines(text), {2, 3, 4})

	def test_plain_function_is_not_noinstr(self):
		self.assertEqual(noinstr_lines('static void f(void)\n{\n}\n'), set())


if __name__ == '__main__':
	unittest.main()
