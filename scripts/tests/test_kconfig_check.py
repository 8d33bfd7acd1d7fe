# SPDX-License-Identifier: GPL-2.0
"""CFG-1's check: which RCU options RCU_EXPERT gates, how a .config is judged (no kernel tree)."""
import json
import os
import tempfile
import unittest
from typing import Dict, Iterable, List, Optional, Tuple
from unittest import mock

from kunit_rcu import kconfig_check as kc

# Shaped like kernel/rcu/Kconfig, with every form of gate the parser knows.
KCONFIG = '''
menu "RCU Subsystem"

config TREE_RCU
	bool
	default y if SMP

config RCU_EXPERT
	bool "Make expert-level adjustments to RCU configuration"
	default n

config RCU_FANOUT
	int "Tree-based hierarchical RCU fanout value"
	range 2 64
	depends on TREE_RCU && RCU_EXPERT
	default 64
	help
	  Help text is no Kconfig: depends on NOT_A_DEPENDENCY
	  config NOT_A_SYMBOL

	  Take the default if unsure.

config RCU_BOOST
	bool "Enable RCU priority boosting"
	depends on (RT_MUTEXES && PREEMPT_RCU && RCU_EXPERT) || PREEMPT_RT

config RCU_BOOST_DELAY
	int "Milliseconds to delay boosting"
	depends on RCU_BOOST
	default 500

config RCU_NOCB_CPU
	bool "Offload RCU callback processing"
	depends on TREE_RCU
	depends on RCU_EXPERT || NO_HZ_FULL  # NO_HZ_FULL opens it too
	default n

config RCU_PROMPT_IF
	bool "Only experts are asked" if RCU_EXPERT
	default y

config RCU_OPEN
	bool "Anyone may say (no # comment here) \\"yes\\""
	depends on DEBUG_KERNEL

endmenu

if RCU_EXPERT
config RCU_IN_IF_BLOCK
	bool "Inside an if block"
endif

menu "Expert menu"
	depends on RCU_EXPERT

config RCU_IN_MENU
	tristate "Inside a menu that depends on RCU_EXPERT"

endmenu
'''

GATED = {'RCU_FANOUT': 'RCU_EXPERT', 'RCU_BOOST': 'RCU_EXPERT', 'RCU_BOOST_DELAY': 'RCU_BOOST',
	 'RCU_NOCB_CPU': 'RCU_EXPERT', 'RCU_PROMPT_IF': 'RCU_EXPERT',
	 'RCU_IN_IF_BLOCK': 'RCU_EXPERT', 'RCU_IN_MENU': 'RCU_EXPERT'}

PROJECT = ['KUNIT_RCU', 'RCU_KUNIT_TEST']

# A built .config with RCU_EXPERT=n: gated symbols at their defaults.
CONFIG = '''#
# Automatically generated file; DO NOT EDIT.
#
CONFIG_SMP=y
CONFIG_TREE_RCU=y
CONFIG_DEBUG_KERNEL=y
# CONFIG_RCU_EXPERT is not set
CONFIG_RCU_PROMPT_IF=y
# CONFIG_RCU_OPEN is not set
CONFIG_RCU_KUNIT_TEST=y
CONFIG_KUNIT=y
CONFIG_KUNIT_RCU=y
'''

# What olddefconfig gives a symbol without a line, with RCU_EXPERT=n (None: no line).
DEFAULTS = {'RCU_FANOUT': None, 'RCU_BOOST': None, 'RCU_BOOST_DELAY': None,
	    'RCU_NOCB_CPU': None, 'RCU_PROMPT_IF': 'y', 'RCU_IN_IF_BLOCK': None,
	    'RCU_IN_MENU': None, 'KUNIT': None, 'KUNIT_RCU': None, 'RCU_KUNIT_TEST': None}


def fake_kconfig(defaults: Dict[str, Optional[str]], visible: Iterable[str] = ()):
	"""Stands in for make listnewconfig / olddefconfig: fills in defaults, lists visible."""
	calls: List[Tuple[str, str]] = []

	def run(target: str, text: str) -> Tuple[str, str]:
		calls.append((target, text))
		values = kc.read_config(text)
		if target == 'listnewconfig':
			return ''.join(f'CONFIG_{n}=n\n' for n in visible if n not in values), ''
		lines = text.splitlines()
		for name, value in defaults.items():
			if name not in values and value is not None:
				lines.append(f'# CONFIG_{name} is not set' if value == 'n'
					     else f'CONFIG_{name}={value}')
		return '', '\n'.join(lines) + '\n'
	run.calls = calls
	return run


class ParseTest(unittest.TestCase):
	def setUp(self):
		self.entries = kc.parse_kconfig(KCONFIG)

	def test_gated_symbols_and_what_gates_them(self):
		self.assertEqual(kc.expert_gated(self.entries), GATED)

	def test_help_text_and_comments_are_no_kconfig(self):
		self.assertNotIn('NOT_A_SYMBOL', self.entries)
		self.assertEqual(kc.visibility(self.entries['RCU_FANOUT']), 'TREE_RCU && RCU_EXPERT')
		self.assertEqual(kc.visibility(self.entries['RCU_NOCB_CPU']),
				 '(TREE_RCU) && (RCU_EXPERT || NO_HZ_FULL)')
		self.assertEqual(kc.visibility(self.entries['RCU_OPEN']), 'DEBUG_KERNEL')
		self.assertEqual(kc.visibility(self.entries['TREE_RCU']), 'n')  # no prompt

	def test_expressions(self):
		values = kc.read_config('CONFIG_A=y\nCONFIG_M=m\n# CONFIG_B is not set\n'
					'CONFIG_NR_CPUS=64\nCONFIG_S="text"\n')
		for expr, want in (('A', 2), ('M', 1), ('B', 0), ('UNKNOWN', 0), ('!B', 2),
				   ('A && M', 1), ('B || M', 1), ('!(A && B) && A', 2),
				   ('NR_CPUS <= 4', 0), ('NR_CPUS > 0x20', 2), ('S = "text"', 2),
				   ('S != "text"', 0), ('S = text', 0), ('B = n', 2), ('(A || B) && !M', 1)):
			self.assertEqual(kc.evaluate(kc.parse_expr(expr), values), want, expr)
		for bad in ('A &&', '(A', 'A B', '&& A'):
			with self.assertRaises(ValueError, msg=bad):
				kc.parse_expr(bad)

	def test_added_configs_of_a_diff(self):
		diff = ('--- a/lib/Kconfig.debug\n+++ b/lib/Kconfig.debug\n@@ -1,3 +1,9 @@\n'
			' config KEPT\n+\n+config NEW_ONE\n+\tbool\n+menuconfig NEW_MENU\n'
			'-config MOVED\n+config MOVED\n+  # config NOT_ADDED\n')
		self.assertEqual(kc.added_configs(diff), ['NEW_MENU', 'NEW_ONE'])

	def test_config_lines(self):
		values = kc.read_config(CONFIG)
		self.assertEqual((values['RCU_EXPERT'], values['TREE_RCU']), ('n', 'y'))
		self.assertNotIn('RCU_FANOUT', values)
		text = kc.without(CONFIG, ['RCU_EXPERT', 'KUNIT'])
		self.assertNotIn('RCU_EXPERT', text)
		self.assertNotIn('CONFIG_KUNIT=y', text)
		self.assertIn('CONFIG_KUNIT_RCU=y', text)


class CheckConfigTest(unittest.TestCase):
	def check(self, text: str = CONFIG, defaults: Optional[dict] = None,
		  visible: Iterable[str] = ()) -> kc.Outcome:
		self.kconfig = fake_kconfig(dict(DEFAULTS, **(defaults or {})), visible)
		out = kc.Outcome('x86_64', 'default', '.kunit/.config')
		return kc.check_config(text, out, kc.parse_kconfig(KCONFIG), PROJECT, self.kconfig)

	def test_defaults_pass(self):
		out = self.check()
		self.assertEqual(out.problems, [])
		self.assertEqual(out.specialist, GATED)
		self.assertEqual(out.project, PROJECT)
		targets = [t for t, _ in self.kconfig.calls]
		self.assertEqual(targets, ['listnewconfig', 'olddefconfig', 'olddefconfig'])
		# The specialist options' lines go; without KUNIT, the project's go too.
		self.assertNotIn('RCU_PROMPT_IF', self.kconfig.calls[1][1])
		self.assertNotIn('CONFIG_KUNIT=y', self.kconfig.calls[2][1])
		self.assertNotIn('RCU_KUNIT_TEST', self.kconfig.calls[2][1])

	def test_a_non_default_specialist_value_fails(self):
		out = self.check(CONFIG + 'CONFIG_RCU_FANOUT=32\n')
		self.assertEqual(len(out.problems), 1, out.problems)
		self.assertEqual(out.problems[0],
				 'CONFIG_RCU_FANOUT (gated by RCU_EXPERT) is not at its default in '
				 'ARCH=x86_64 CONFIG=default (.kunit/.config): expected no '
				 'CONFIG_RCU_FANOUT line (the default with RCU_EXPERT=n), got '
				 'CONFIG_RCU_FANOUT=32')

	def test_a_changed_default_fails_through_its_gate(self):
		out = self.check(CONFIG.replace('CONFIG_RCU_PROMPT_IF=y', 'CONFIG_RCU_BOOST_DELAY=10'))
		self.assertEqual(len(out.problems), 2, out.problems)
		self.assertIn('CONFIG_RCU_BOOST_DELAY (gated by RCU_EXPERT through RCU_BOOST)',
			      out.problems[0])
		self.assertIn('CONFIG_RCU_PROMPT_IF (gated by RCU_EXPERT) is not at its default', out.problems[1])
		self.assertIn('expected CONFIG_RCU_PROMPT_IF=y', out.problems[1])
		self.assertIn('got no CONFIG_RCU_PROMPT_IF line', out.problems[1])

	def test_a_visible_specialist_prompt_fails(self):
		out = self.check(CONFIG + '# CONFIG_RCU_BOOST is not set\n', visible=['RCU_FANOUT'])
		self.assertEqual(out.problems, [
			'CONFIG_RCU_BOOST (gated by RCU_EXPERT) has a visible prompt in ARCH=x86_64 '
			'CONFIG=default (.kunit/.config) with RCU_EXPERT=n: expected none, but the '
			'.config has "# CONFIG_RCU_BOOST is not set"',
			'CONFIG_RCU_FANOUT (gated by RCU_EXPERT) has a visible prompt in ARCH=x86_64 '
			'CONFIG=default (.kunit/.config) with RCU_EXPERT=n: expected none, but make '
			'listnewconfig lists it'])

	def test_rcu_expert_on_fails(self):
		out = self.check(CONFIG.replace('# CONFIG_RCU_EXPERT is not set', 'CONFIG_RCU_EXPERT=y')
				 + 'CONFIG_RCU_FANOUT=32\n')
		self.assertEqual(len(out.problems), 1, out.problems)
		self.assertIn('CONFIG_RCU_EXPERT: ARCH=x86_64 CONFIG=default (.kunit/.config) has '
			      'CONFIG_RCU_EXPERT=y, expected "# CONFIG_RCU_EXPERT is not set"',
			      out.problems[0])

	def test_a_project_prompt_without_kunit_fails(self):
		out = self.check(defaults={'RCU_KUNIT_TEST': 'n'})
		self.assertEqual(out.problems, [
			"CONFIG_RCU_KUNIT_TEST (the project's) has a prompt without KUNIT in "
			'ARCH=x86_64 CONFIG=default (.kunit/.config): expected no CONFIG_RCU_KUNIT_TEST '
			'line after make olddefconfig without CONFIG_KUNIT, got '
			'"# CONFIG_RCU_KUNIT_TEST is not set"'])
		out = self.check(defaults={'KUNIT_RCU': 'y'})
		self.assertEqual(len(out.problems), 1)
		self.assertIn("CONFIG_KUNIT_RCU (the project's) gets a value without KUNIT",
			      out.problems[0])

	def test_kunit_that_stays_on_is_reported(self):
		out = self.check(defaults={'KUNIT': 'y', 'RCU_KUNIT_TEST': 'n'})
		self.assertEqual(len(out.problems), 1, out.problems)
		self.assertIn('CONFIG_KUNIT: stays CONFIG_KUNIT=y', out.problems[0])

	def test_another_dependency_that_opens_a_prompt_is_a_note(self):
		text = CONFIG + 'CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n'
		out = self.check(text, {'RCU_NOCB_CPU': 'y'}, visible=['RCU_NOCB_CPU'])
		self.assertEqual(out.problems, [])
		self.assertNotIn('RCU_NOCB_CPU', out.specialist)
		self.assertEqual(len(out.notes), 1)
		self.assertIn('CONFIG_RCU_NOCB_CPU has a prompt without RCU_EXPERT', out.notes[0])
		self.assertIn('(TREE_RCU) && (RCU_EXPERT || NO_HZ_FULL)', out.notes[0])

	def test_nothing_to_check_is_a_failure(self):
		out = kc.check_config(CONFIG, kc.Outcome('arm64', 'default', 'x'), {}, [],
				      fake_kconfig(DEFAULTS))
		self.assertEqual(len(out.problems), 2, out.problems)
		self.assertIn('is the tree prepared (make prepare)?', out.problems[0])


class CheckBuildsTest(unittest.TestCase):
	def setUp(self):
		tmp = tempfile.TemporaryDirectory()
		self.addCleanup(tmp.cleanup)
		self.tmp = tmp.name
		env = mock.patch.dict(os.environ, {'KUNIT_RCU_CACHE': os.path.join(self.tmp, 'cache'),
						   'KUNIT_RCU_RESULTS': os.path.join(self.tmp, 'results')})
		env.start()
		self.addCleanup(env.stop)
		for name, value in (('log', mock.Mock()), ('_stale', mock.Mock(return_value=False)),
				    ('pristine_entries', mock.Mock(return_value=kc.parse_kconfig(KCONFIG))),
				    ('project_options', mock.Mock(return_value=PROJECT)),
				    ('make_kconfig', mock.Mock(return_value=fake_kconfig(DEFAULTS)))):
			patcher = mock.patch.object(kc, name, value)
			patcher.start()
			self.addCleanup(patcher.stop)

	def result(self, arch: str, config: str) -> dict:
		with open(os.path.join(self.tmp, 'results', f'{arch}-{config}', kc.RESULT_FILE)) as f:
			return json.load(f)

	def test_one_result_per_build_and_a_hint_for_a_missing_one(self):
		build = kc.build_dir('x86_64', 'default', False)
		os.makedirs(build)
		with open(os.path.join(build, '.config'), 'w') as f:
			f.write(CONFIG)
		self.assertEqual(kc.check_builds([('x86_64', 'default'), ('arm64', 'default')]),
				 (1, 1, 0))
		fails = [c.args[0] for c in kc.log.call_args_list if c.args[0].startswith('FAIL')]
		self.assertEqual(len(fails), 1, fails)
		self.assertIn('.kunit-arm64/.config for ARCH=arm64 CONFIG=default: '
			      'make run ARCH=arm64 creates it', fails[0])
		self.assertEqual(self.result('x86_64', 'default')['status'], 'passed')
		self.assertEqual(self.result('x86_64', 'default')['covers'], ['CFG-1'])
		self.assertEqual(self.result('arm64', 'default')['status'], 'failed')
		self.assertEqual(kc.load_result('arm64')['problems'], [fails[0][len('FAIL: '):]])

	def test_a_make_failure_is_a_failed_result(self):
		def broken(target: str, text: str):
			raise kc.UserError('make olddefconfig failed')
		build = kc.build_dir('x86_64', 'nopreempt', False)
		os.makedirs(build)
		with open(os.path.join(build, '.config'), 'w') as f:
			f.write(CONFIG)
		kc.make_kconfig.return_value = broken
		self.assertEqual(kc.check_builds([('x86_64', 'nopreempt')]), (0, 1, 0))
		self.assertIn('make olddefconfig failed', self.result('x86_64', 'nopreempt')['problems'][0])


if __name__ == '__main__':
	unittest.main()
