# SPDX-License-Identifier: GPL-2.0
"""kbuild.seed_build / check_rebuilt: a mutant's first build starts from a copy, and still holds the mutant."""

import os
import subprocess
import tempfile
import time
import unittest
from unittest import mock

from kunit_rcu import kbuild
from kunit_rcu.common import UserError

# Rules shaped like kbuild's: objects in a build dir below the tree, sources
# as "../", every object depending on a host tool that "make prepare" in the
# tree rebuilds (x86's objtool, whose command line names the tree).
MAKEFILE = '''all: rcu/tree.o rcu/srcutree.o
rcu/tree.o: ../rcu/tree.c ../rcu/tree_plugin.h tools/objtool
\tmkdir -p rcu && cat $^ > $@
rcu/srcutree.o: ../rcu/srcutree.c tools/objtool
\tmkdir -p rcu && cat $^ > $@
tools/objtool: FORCE
\tmkdir -p tools && grep -qx $(CURDIR) $@ 2>/dev/null || echo $(CURDIR) > $@
FORCE:
'''
TREE_MAKEFILE = '''prepare:
\tmkdir -p $(O)/tools && grep -qx $(O) $(O)/tools/objtool || echo $(O) > $(O)/tools/objtool
'''

CMD = {'tree': ['../rcu/tree.c', '../rcu/tree_plugin.h'], 'srcutree': ['../rcu/srcutree.c']}


def write(path: str, text: str) -> None:
	os.makedirs(os.path.dirname(path), exist_ok=True)
	with open(path, 'w') as f:
		f.write(text)


class SeedTest(unittest.TestCase):
	ARGS = ('x86_64', None)

	def setUp(self) -> None:
		self.env = mock.patch.dict(os.environ, {'KUNIT_RCU_NO_CCACHE': '1'})
		self.env.start()
		self.addCleanup(self.env.stop)
		self.tmp = tempfile.TemporaryDirectory()
		self.tree = os.path.join(self.tmp.name, 'tree')
		for name in ('tree.c', 'tree_plugin.h', 'srcutree.c'):
			write(os.path.join(self.tree, 'rcu', name), name + '\n')
		self.seed = os.path.join(self.tree, '.kunit')
		self.build = os.path.join(self.tree, '.kunit-scratch')
		write(os.path.join(self.seed, 'Makefile'), MAKEFILE)
		write(os.path.join(self.tree, 'Makefile'), TREE_MAKEFILE)
		for obj, deps in CMD.items():
			text = f'source_rcu/{obj}.o := {deps[0]}\n\ndeps_rcu/{obj}.o := \\\n' + \
				''.join(f'  {d} \\\n' for d in deps) + '\n'
			write(os.path.join(self.seed, 'rcu', f'.{obj}.o.cmd'), text)
		self.make(self.seed)
		write(os.path.join(self.seed, kbuild.STAMP), 'fingerprint\nid\n')

	def tearDown(self) -> None:
		self.tmp.cleanup()

	def make(self, build: str) -> str:
		return subprocess.run(['make', '-C', build], check=True, capture_output=True,
				      text=True).stdout

	def test_only_the_changed_source_rebuilds(self) -> None:
		# The scratch checkout is younger than the seed's objects, as in CI.
		time.sleep(0.02)
		for name in ('tree.c', 'tree_plugin.h', 'srcutree.c'):
			os.utime(os.path.join(self.tree, 'rcu', name))
		write(os.path.join(self.tree, 'rcu', 'tree_plugin.h'), 'mutated\n')
		self.assertTrue(kbuild.seed_build(self.tree, *self.ARGS, self.build, self.seed,
						  ['rcu/tree_plugin.h']))
		self.assertFalse(os.path.exists(os.path.join(self.build, kbuild.STAMP)))
		out = self.make(self.build)
		self.assertIn('rcu/tree.o', out)
		self.assertNotIn('rcu/srcutree.o', out)
		with open(os.path.join(self.build, 'rcu', 'tree.o')) as f:
			self.assertIn('mutated', f.read())
		kbuild.check_rebuilt(self.tree, self.build, ['rcu/tree_plugin.h'])

	def test_a_built_dir_is_not_seeded_again(self) -> None:
		self.assertTrue(kbuild.seed_build(self.tree, *self.ARGS, self.build, self.seed, []))
		write(os.path.join(self.build, kbuild.STAMP), 'fingerprint\nid\n')
		self.assertFalse(kbuild.seed_build(self.tree, *self.ARGS, self.build, self.seed, []))

	def test_an_unbuilt_seed_is_not_copied(self) -> None:
		os.unlink(os.path.join(self.seed, kbuild.STAMP))
		self.assertFalse(kbuild.seed_build(self.tree, *self.ARGS, self.build, self.seed, []))
		self.assertFalse(os.path.exists(self.build))

	def test_dependents_reads_kbuild_cmd_files(self) -> None:
		self.assertEqual(kbuild.dependents(self.seed, 'rcu/tree_plugin.h'),
				 [os.path.join(self.seed, 'rcu', 'tree.o')])
		self.assertEqual(sorted(kbuild.dependents(self.seed, 'rcu/srcutree.c')),
				 [os.path.join(self.seed, 'rcu', 'srcutree.o')])
		self.assertEqual(kbuild.dependents(self.seed, 'rcu/other.c'), [])

	def test_an_object_older_than_its_changed_source_is_refused(self) -> None:
		time.sleep(0.02)
		write(os.path.join(self.tree, 'rcu', 'srcutree.c'), 'mutated\n')
		with self.assertRaisesRegex(UserError, r'srcutree.o was not rebuilt after '
					    r'rcu/srcutree.c changed'):
			kbuild.check_rebuilt(self.tree, self.seed, ['rcu/srcutree.c'])
		kbuild.check_rebuilt(self.tree, self.seed, ['rcu/tree.c'])


class OwnWarningsTest(unittest.TestCase):
	LOG = ('''../kernel/rcu/rcu_hotplug_kunit.c:71:13: warning: 'hp_queue_on' defined but not used [-Wunused-function]
../kernel/rcu/tree.c:10:2: warning: a mutant's own business
../lib/kunit-rcu/core.c: In function 'kunit_rcu_x':
../lib/kunit-rcu/core.c:5:1: warning: unused variable 'y'
''')

	def test_only_the_overlay_files_count(self) -> None:
		self.assertEqual([p for p, _ in kbuild.own_warnings(self.LOG)],
				 ['kernel/rcu/rcu_hotplug_kunit.c', 'lib/kunit-rcu/core.c'])

	def test_a_clean_log_has_none(self) -> None:
		self.assertEqual(kbuild.own_warnings('  CC      kernel/rcu/tree.o\n'), [])


if __name__ == '__main__':
	unittest.main()
