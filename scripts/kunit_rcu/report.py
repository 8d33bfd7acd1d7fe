# SPDX-License-Identifier: GPL-2.0
"""Writes a run's results (JSON, JUnit XML, KCIDB JSON, KTAP, console) and prints its table."""

import json
import os
import re
import xml.etree.ElementTree as ET
from typing import Dict, List

from . import kcidb, ktap
from .verdict import CaseResult, Verdict


def summary(v: Verdict) -> Dict[str, int]:
	failed = v.count(ktap.FAILED) + v.count(ktap.MISSING)
	return {'passed': v.count(ktap.PASSED), 'failed': failed, 'skipped': v.count(ktap.SKIPPED)}


def to_json(v: Verdict, meta: dict) -> dict:
	return dict(meta, verdict='pass' if v.passed else 'fail', reasons=v.reasons,
		    counts=summary(v),
		    cases=[{'suite': c.suite, 'case': c.case, 'status': c.status,
			    'requirements': c.requirements, 'may_skip': c.may_skip, 'reason': c.reason,
			    'log': c.log}
			   for c in v.cases],
		    splats=[{'kind': s.kind, 'console_line': s.line + 1, 'text': s.text,
			     'case': s.case, 'expected': s.expected, 'context': s.context}
			    for s in v.splats],
		    other_suites=v.unexpected_suites)


# Characters XML 1.0 cannot hold, escaped or not (a console can print any byte).
_NOT_XML = re.compile('[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]')


def xml_text(text: str) -> str:
	"""text with the characters XML cannot hold replaced by U+FFFD; ElementTree escapes the rest."""
	return _NOT_XML.sub('\ufffd', text)


def _sub(parent: ET.Element, tag: str, text: str = '', **attrib: str) -> ET.Element:
	"""A child of parent; text and attribute values made fit for XML."""
	el = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrib.items()})
	if text:
		el.text = xml_text(text)
	return el


def _junit_case(parent: ET.Element, c: CaseResult) -> None:
	case = _sub(parent, 'testcase', classname=c.suite, name=c.case)
	if c.requirements:
		props = _sub(case, 'properties')
		for r in c.requirements:
			_sub(props, 'property', name='requirement', value=r)
	if c.status == ktap.FAILED:
		_sub(case, 'failure', '\n'.join(c.log), message='failed')
	elif c.status == ktap.MISSING:
		_sub(case, 'failure', message='did not report (crash, hang or truncated output)')
	elif c.status == ktap.SKIPPED:
		_sub(case, 'skipped', message=c.reason)


def to_junit(v: Verdict, meta: dict) -> str:
	"""JUnit XML: a testsuite per KUnit suite, then suite "run" with case "verdict" for the run."""
	counts = summary(v)
	root = ET.Element('testsuites')
	root.set('name', xml_text(f"kunit-rcu.{meta['arch']}.{meta['config']}"))
	root.set('tests', str(len(v.cases) + 1))
	root.set('failures', str(counts['failed'] + (0 if v.passed else 1)))
	suites: Dict[str, List[CaseResult]] = {}
	for c in v.cases:
		suites.setdefault(c.suite, []).append(c)
	for name, cases in suites.items():
		fails = sum(1 for c in cases if c.status in (ktap.FAILED, ktap.MISSING))
		skips = sum(1 for c in cases if c.status == ktap.SKIPPED)
		suite = _sub(root, 'testsuite', name=name, tests=str(len(cases)), failures=str(fails),
			     skipped=str(skips))
		for c in cases:
			_junit_case(suite, c)
	# The run as a whole: splats, truncation, hangs.
	run = _sub(_sub(root, 'testsuite', name='run', tests='1'), 'testcase', classname='run',
		   name='verdict')
	if not v.passed:
		bad = [s.text for s in v.splats if not s.expected]
		_sub(run, 'failure', '\n'.join(v.reasons + [''] + bad), message='run failed')
	ET.indent(root, space='  ')
	return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def write(outdir: str, v: Verdict, meta: dict, console: str) -> None:
	os.makedirs(outdir, exist_ok=True)
	with open(os.path.join(outdir, 'results.json'), 'w') as f:
		json.dump(to_json(v, meta), f, indent=1)
		f.write('\n')
	with open(os.path.join(outdir, 'junit.xml'), 'w') as f:
		f.write(to_junit(v, meta))
	kcidb.write(os.path.join(outdir, kcidb.FILE), kcidb.from_verdict(v, meta))
	with open(os.path.join(outdir, 'ktap.txt'), 'w') as f:
		f.write('\n'.join(v.ktap_lines) + '\n')
	with open(os.path.join(outdir, 'console.log'), 'w') as f:
		f.write(console)


# At most this many log lines of a failed case in the summary table.
EXCERPT_LINES = 20


def failure_excerpt(log: List[str]) -> List[str]:
	"""The part of a failed case's log that says why: from its first failed
	assertion (or failed parameter) on, at most EXCERPT_LINES lines; else its tail."""
	for i, line in enumerate(log):
		if 'FAILED at' in line or line.startswith(f'{ktap.FAILED.value} '):
			return log[i:i + EXCERPT_LINES]
	return log[-EXCERPT_LINES:]


def table(v: Verdict) -> str:
	rows = [('suite', 'passed', 'failed', 'skipped')]
	suites: Dict[str, List[int]] = {}
	for c in v.cases:
		r = suites.setdefault(c.suite, [0, 0, 0])
		if c.status == ktap.PASSED:
			r[0] += 1
		elif c.status == ktap.SKIPPED:
			r[2] += 1
		else:
			r[1] += 1
	rows += [(s, str(r[0]), str(r[1]), str(r[2])) for s, r in suites.items()]
	width = [max(len(r[i]) for r in rows) for i in range(4)]
	lines = ['  '.join(cell.ljust(width[i]) if i == 0 else cell.rjust(width[i])
			   for i, cell in enumerate(r)) for r in rows]
	lines.insert(1, '-' * len(lines[0]))
	for c in v.cases:
		if c.status in (ktap.FAILED, ktap.MISSING):
			lines.append(f'  {c.status.upper()}: {c.id} [{", ".join(c.requirements) or "-"}]')
			lines += ['      ' + l.strip() for l in failure_excerpt(c.log)]
	return '\n'.join(lines)
