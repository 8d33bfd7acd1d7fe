# SPDX-License-Identifier: GPL-2.0
"""junit.xml (ElementTree) and the typed case status behind results.json."""

import copy
import json
import unittest
import xml.etree.ElementTree as ET

from kunit_rcu import ktap, report, verdict
from tests.helpers import EXPECTED, PASSING, SKIP_CONFIG

META = {'arch': 'x86_64', 'config': SKIP_CONFIG}
FAILING = PASSING.replace('    ok 2 rcu_poll_get_state',
			  '    # rcu_poll_get_state: EXPECTATION FAILED at x.c:1\n'
			  '    Expected a < b && "c"\n'
			  '    not ok 2 rcu_poll_get_state')


def junit(console: str, expected=EXPECTED, **judge) -> ET.Element:
	v = verdict.judge(console, expected, **dict({'config': SKIP_CONFIG}, **judge))
	text = report.to_junit(v, META)
	assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n'), text[:80]
	return ET.fromstring(text)


def case(root: ET.Element, name: str) -> ET.Element:
	(el,) = root.findall(f".//testcase[@name='{name}']")
	return el


class JunitTest(unittest.TestCase):
	def test_passing_run(self):
		root = junit(PASSING)
		self.assertEqual((root.tag, root.attrib),
				 ('testsuites', {'name': f'kunit-rcu.x86_64.{SKIP_CONFIG}', 'tests': '4',
						 'failures': '0'}))
		suites = root.findall('testsuite')
		self.assertEqual([s.attrib for s in suites],
				 [{'name': 'rcu_core', 'tests': '3', 'failures': '0', 'skipped': '1'},
				  {'name': 'run', 'tests': '1'}])
		self.assertEqual([(c.get('classname'), c.get('name')) for c in suites[0]],
				 [('rcu_core', 'rcu_read_lock_nesting'), ('rcu_core', 'rcu_poll_get_state'),
				  ('rcu_core', 'rcu_poll_start')])
		props = case(root, 'rcu_read_lock_nesting').findall('properties/property')
		self.assertEqual([p.attrib for p in props], [{'name': 'requirement', 'value': 'SCH-1'}])
		self.assertEqual(case(root, 'rcu_poll_start').find('skipped').get('message'),
				 'not this config')
		self.assertEqual(list(case(root, 'verdict')), [])

	def test_failure_text_and_escaping(self):
		expected = copy.deepcopy(EXPECTED)
		expected[0].cases[0].requirements = ['A&B "q" <x>']
		root = junit(FAILING.replace('not this config', 'it\'s <not> "this"'), expected)
		self.assertEqual(root.get('failures'), '2')
		failure = case(root, 'rcu_poll_get_state').find('failure')
		self.assertEqual((failure.get('message'), failure.text),
				 ('failed', '    # rcu_poll_get_state: EXPECTATION FAILED at x.c:1\n'
					    '    Expected a < b && "c"'))
		self.assertEqual(case(root, 'rcu_read_lock_nesting').find('properties/property')
				 .get('value'), 'A&B "q" <x>')
		self.assertEqual(case(root, 'rcu_poll_start').find('skipped').get('message'),
				 'it\'s <not> "this"')
		run = case(root, 'verdict').find('failure')
		self.assertEqual(run.get('message'), 'run failed')
		self.assertTrue(run.text.startswith('1 case(s) failed: rcu_core.rcu_poll_get_state\n'))

	def test_missing_case(self):
		root = junit(PASSING.split('    ok 2')[0])
		self.assertEqual(case(root, 'rcu_poll_get_state').find('failure').get('message'),
				 'did not report (crash, hang or truncated output)')
		self.assertEqual(root.find('testsuite').get('failures'), '2')

	def test_characters_xml_cannot_hold(self):
		console = FAILING.replace('Expected a < b', 'Expected \x1b[31ma\x1b[0m\x00 < b')
		failure = case(junit(console), 'rcu_poll_get_state').find('failure')
		self.assertIn('Expected \ufffd[31ma\ufffd[0m\ufffd < b', failure.text)


class StatusTest(unittest.TestCase):
	def test_summary_shows_why_a_case_failed(self):
		log = [f'# info {i}' for i in range(30)] + ['# c: EXPECTATION FAILED at x.c:1',
							     'Expected x']
		self.assertEqual(report.failure_excerpt(log), log[30:])
		self.assertEqual(report.failure_excerpt(log[:30]), log[10:30])
		v = verdict.judge(FAILING, EXPECTED, config=SKIP_CONFIG)
		self.assertIn('      Expected a < b && "c"', report.table(v).splitlines())

	def test_statuses_are_their_strings(self):
		self.assertEqual([s.value for s in ktap.Status], ['passed', 'failed', 'skipped', 'missing'])
		self.assertEqual((ktap.PASSED, f'{ktap.MISSING}', str(ktap.FAILED)),
				 ('passed', 'missing', 'failed'))
		self.assertIs(ktap.Status('skipped'), ktap.SKIPPED)

	def test_results_json_keeps_the_strings(self):
		v = verdict.judge(FAILING, EXPECTED, config=SKIP_CONFIG)
		self.assertIsInstance(v.cases[0].status, ktap.Status)
		text = json.dumps(report.to_json(v, META), indent=1)
		self.assertEqual([c['status'] for c in json.loads(text)['cases']],
				 ['passed', 'failed', 'skipped'])
		self.assertIn('"status": "failed"', text)


if __name__ == '__main__':
	unittest.main()
