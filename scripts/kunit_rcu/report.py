# SPDX-License-Identifier: GPL-2.0
"""Writes a run's results (JSON, JUnit XML, KTAP, console) and prints its table."""

import json
import os
from typing import Dict, List
from xml.sax.saxutils import escape, quoteattr

from . import ktap
from .verdict import Verdict


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


def to_junit(v: Verdict, meta: dict) -> str:
	name = f"kunit-rcu.{meta['arch']}.{meta['config']}"
	counts = summary(v)
	bad = [s for s in v.splats if not s.expected]
	out = ['<?xml version="1.0" encoding="UTF-8"?>',
	       f'<testsuites name={quoteattr(name)} tests="{len(v.cases) + 1}" '
	       f'failures="{counts["failed"] + (0 if v.passed else 1)}">']
	suites: Dict[str, List] = {}
	for c in v.cases:
		suites.setdefault(c.suite, []).append(c)
	for suite, cases in suites.items():
		fails = sum(1 for c in cases if c.status in (ktap.FAILED, ktap.MISSING))
		skips = sum(1 for c in cases if c.status == ktap.SKIPPED)
		out.append(f'  <testsuite name={quoteattr(suite)} tests="{len(cases)}" '
			   f'failures="{fails}" skipped="{skips}">')
		for c in cases:
			props = ''.join(f'<property name="requirement" value={quoteattr(r)}/>'
					for r in c.requirements)
			out.append(f'    <testcase classname={quoteattr(suite)} name={quoteattr(c.case)}>')
			if props:
				out.append(f'      <properties>{props}</properties>')
			if c.status == ktap.FAILED:
				out.append(f'      <failure message="failed">{escape(chr(10).join(c.log))}</failure>')
			elif c.status == ktap.MISSING:
				out.append('      <failure message="did not report (crash, hang or truncated output)"/>')
			elif c.status == ktap.SKIPPED:
				out.append(f'      <skipped message={quoteattr(c.reason)}/>')
			out.append('    </testcase>')
		out.append('  </testsuite>')
	# The run as a whole: splats, truncation, hangs.
	out.append('  <testsuite name="run" tests="1">')
	out.append('    <testcase classname="run" name="verdict">')
	if not v.passed:
		text = '\n'.join(v.reasons + [''] + [s.text for s in bad])
		out.append(f'      <failure message="run failed">{escape(text)}</failure>')
	out.append('    </testcase>')
	out.append('  </testsuite>')
	out.append('</testsuites>')
	return '\n'.join(out) + '\n'


def write(outdir: str, v: Verdict, meta: dict, console: str) -> None:
	os.makedirs(outdir, exist_ok=True)
	with open(os.path.join(outdir, 'results.json'), 'w') as f:
		json.dump(to_json(v, meta), f, indent=1)
		f.write('\n')
	with open(os.path.join(outdir, 'junit.xml'), 'w') as f:
		f.write(to_junit(v, meta))
	with open(os.path.join(outdir, 'ktap.txt'), 'w') as f:
		f.write('\n'.join(v.ktap_lines) + '\n')
	with open(os.path.join(outdir, 'console.log'), 'w') as f:
		f.write(console)


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
			lines += ['      ' + l for l in c.log[-8:]]
	return '\n'.join(lines)
