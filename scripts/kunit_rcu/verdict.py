# SPDX-License-Identifier: GPL-2.0
"""Turns a console log into a verdict that a truncated or splatting run cannot pass."""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import ktap, splat
from .sources import Suite

# Printed by kernel/reboot.c when kunit_shutdown=reboot/poweroff/halt ends the guest.
_FINISHED = re.compile(r'reboot: (Restarting system|Power down|System halted)')

TAIL_LINES = 40


@dataclass
class CaseResult:
	suite: str
	case: str
	status: str
	requirements: List[str] = field(default_factory=list)
	log: List[str] = field(default_factory=list)
	reason: str = ''

	@property
	def id(self) -> str:
		return f'{self.suite}.{self.case}'


@dataclass
class Verdict:
	passed: bool
	reasons: List[str]
	cases: List[CaseResult]
	splats: List[splat.Splat]
	unexpected_suites: List[str]
	ktap_lines: List[str]
	tail: List[str]

	def count(self, status: str) -> int:
		return sum(1 for c in self.cases if c.status == status)

	def failed_cases(self) -> List[str]:
		return [c.id for c in self.cases if c.status in (ktap.FAILED, ktap.MISSING)]


def _ktap_lines(log: ktap.Log) -> List[str]:
	out, on = [], False
	for line in log.lines:
		if re.match(r'^\s*K?TAP version', line):
			on = True
		if on and re.match(r'^\s*(K?TAP version|1\.\.\d|# |ok |not ok )', line):
			out.append(line)
	return out


def _attribute(splats: List[splat.Splat], log: ktap.Log) -> None:
	"""Names the case each splat happened in: the next case result after it."""
	marks = sorted((c.line, f'{s.name}.{c.name}') for s in log.suites for c in s.children)
	for sp in splats:
		if log.start_line is None or sp.line < log.start_line:
			sp.case = 'boot (before the tests)'
		else:
			sp.case = next((name for line, name in marks if line > sp.line),
				       'after the last case')


def judge(console: str, expected: List[Suite], timed_out: bool = False,
	  timeout: Optional[int] = None) -> Verdict:
	log = ktap.parse(console)
	reasons: List[str] = []
	tail = log.lines[-TAIL_LINES:]
	if timed_out:
		reasons.append(f'the guest did not finish within {timeout} s (hang?); '
			       'raise TIMEOUT=<seconds> only if it was merely slow')
	if not log.started:
		reasons.append('no KTAP output: the kernel crashed or hung before the tests ran')
	elif not any(_FINISHED.search(l) for l in log.lines) and not timed_out:
		reasons.append('the guest stopped without shutting down after the tests '
			       '(crash or truncated console)')
	reasons += ['truncated KTAP: ' + p for p in log.problems]

	seen: Dict[str, ktap.Result] = {s.name: s for s in log.suites}
	cases: List[CaseResult] = []
	for suite in expected:
		got = seen.get(suite.name)
		if got is None and log.started:
			reasons.append(f'suite {suite.name} ({suite.path}) is missing from the output: '
				       'is its Kconfig option in the kunitconfig and built in?')
		got_cases = {c.name: c for c in got.children} if got else {}
		for case in suite.cases:
			res = got_cases.get(case.name)
			if res is None:
				cases.append(CaseResult(suite.name, case.name, ktap.MISSING, case.requirements))
				continue
			cases.append(CaseResult(suite.name, case.name, res.status, case.requirements,
						res.log, res.reason))
		known = {c.name for c in suite.cases}
		for name, res in got_cases.items():
			if name not in known:
				cases.append(CaseResult(suite.name, name, res.status, [], res.log, res.reason))
	missing = [c.id for c in cases if c.status == ktap.MISSING]
	if missing and log.started:
		reasons.append(f'{len(missing)} case(s) did not report: ' + ', '.join(missing))
	failed = [c.id for c in cases if c.status == ktap.FAILED]
	if failed:
		reasons.append(f'{len(failed)} case(s) failed: ' + ', '.join(failed))
	expected_names = {s.name for s in expected}
	unexpected = [s.name for s in log.suites if s.name not in expected_names]
	for s in log.suites:
		if s.name in unexpected and s.status == ktap.FAILED:
			reasons.append(f'suite {s.name} (not one of ours) failed')

	splats = splat.find(log.lines)
	_attribute(splats, log)
	bad = [s for s in splats if not s.expected]
	if bad:
		reasons.append(f'{len(bad)} kernel splat(s) during the run, a failure even if every '
			       'case passed: ' + '; '.join(f'{s.kind} in {s.case}: {s.text}' for s in bad))
	return Verdict(passed=not reasons, reasons=reasons, cases=cases, splats=splats,
		       unexpected_suites=unexpected, ktap_lines=_ktap_lines(log), tail=tail)
