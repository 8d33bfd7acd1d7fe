# SPDX-License-Identifier: GPL-2.0
"""Turns a console log into a verdict that a truncated or splatting run cannot pass.

Nor can a run pass where a suite or case name is printed (or defined)
twice, a case skips without declaring "May skip:" for the run's arch or
config, or no case passed at all.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from . import ktap, splat
from .sources import Suite

# Printed by kernel/reboot.c when kunit_shutdown=reboot/poweroff/halt ends the guest.
_FINISHED = re.compile(r'reboot: (Restarting system|Power down|System halted)')

TAIL_LINES = 40


@dataclass
class CaseResult:
	suite: str
	case: str
	status: ktap.Status
	requirements: List[str] = field(default_factory=list)
	log: List[str] = field(default_factory=list)
	reason: str = ''
	may_skip: List[str] = field(default_factory=list)

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
	# The guest ran the tests to the end: KTAP started and is complete, the
	# guest shut down, in time.  False: cases that did not report are MISSING
	# because of the run (crash, hang, truncation), not of themselves.
	finished: bool = True
	# Nothing but failed cases is wrong: the run itself (boot, KTAP, no
	# splat, every case reported or declared its skip) was sound.
	integrity_ok: bool = True

	def count(self, status: ktap.Status) -> int:
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


def _twice(names: Iterable[str]) -> List[Tuple[str, int]]:
	"""(name, count) of the names that occur more than once, in first-seen order."""
	counts: Dict[str, int] = {}
	for n in names:
		counts[n] = counts.get(n, 0) + 1
	return [(n, k) for n, k in counts.items() if k > 1]


def _pick(results: List[ktap.Result]) -> ktap.Result:
	"""Of a name printed more than once, the first failure, else the first result."""
	return next((r for r in results if r.status == ktap.FAILED), results[0])


def _by_name(results: List[ktap.Result]) -> Dict[str, ktap.Result]:
	grouped: Dict[str, List[ktap.Result]] = {}
	for r in results:
		grouped.setdefault(r.name, []).append(r)
	return {n: _pick(rs) for n, rs in grouped.items()}


# Splats the verdict message lists; a broken kernel can print dozens.
SHOWN_SPLATS = 5


def splat_summary(bad: List[splat.Splat], console_path: Optional[str] = None) -> str:
	"""The first SHOWN_SPLATS distinct splats, joined by '; ', then how many more.

	Distinct: kind, case and first line; a repeated one says how often.
	Every splat is still in results.json and the console log.
	"""
	counts: Dict[str, int] = {}
	for s in bad:
		item = f'{s.kind} in {s.case}: {s.text}'
		counts[item] = counts.get(item, 0) + 1
	shown = list(counts.items())[:SHOWN_SPLATS]
	out = '; '.join(item + (f' ({k} times)' if k > 1 else '') for item, k in shown)
	more = len(bad) - sum(k for _, k in shown)
	if more:
		others = len(counts) - len(shown)
		out += (f'; ... and {more} more ({others} distinct; see '
			f'{console_path or "the console log"})')
	return out


def judge(console: str, expected: List[Suite], timed_out: bool = False,
	  timeout: Optional[int] = None, arch: str = 'x86_64', config: str = 'default',
	  console_path: Optional[str] = None, stopped: Optional[str] = None) -> Verdict:
	"""The verdict on a console log; console_path, where the log is kept, only goes into messages.

	stopped: why the caller killed the guest before it finished (see
	kbuild.boot's stop_when); the run then fails with that reason instead
	of a truncated console's.
	"""
	log = ktap.parse(console)
	reasons: List[str] = []
	tail = log.lines[-TAIL_LINES:]
	shut_down = any(_FINISHED.search(l) for l in log.lines)
	if timed_out:
		reasons.append(f'the guest did not finish within {timeout} s (hang?); '
			       'raise TIMEOUT=<seconds> only if it was merely slow')
	if stopped:
		reasons.append(stopped)
	if not log.started:
		reasons.append('no KTAP output: the kernel crashed or hung before the tests ran')
	elif not shut_down and not timed_out and not stopped:
		reasons.append('the guest stopped without shutting down after the tests '
			       '(crash or truncated console)')
	reasons += ['truncated KTAP: ' + p for p in log.problems]

	# A name printed or defined twice: which one counts would be a guess.
	for name, k in _twice(s.name for s in log.suites):
		reasons.append(f'suite {name} printed {k} times in the KTAP output')
	for name, k in _twice(s.name for s in expected):
		paths = ', '.join(s.path for s in expected if s.name == name)
		reasons.append(f'suite {name} defined {k} times in the sources ({paths})')
	for suite in expected:
		for name, k in _twice(c.name for c in suite.cases):
			reasons.append(f'case {suite.name}.{name} listed {k} times in the sources '
				       f'({suite.path})')
	for s in log.suites:
		for name, k in _twice(c.name for c in s.children):
			reasons.append(f'case {s.name}.{name} printed {k} times in the KTAP output')

	seen = _by_name(log.suites)
	cases: List[CaseResult] = []
	done = set()
	for suite in expected:
		if suite.name in done:
			continue  # defined twice: a reason above; the first definition counts
		done.add(suite.name)
		got = seen.get(suite.name)
		if got is None and log.started:
			reasons.append(f'suite {suite.name} ({suite.path}) is missing from the output: '
				       'is its Kconfig option in the kunitconfig and built in?')
		got_cases = _by_name(got.children) if got else {}
		known = set()
		for case in suite.cases:
			if case.name in known:
				continue
			known.add(case.name)
			res = got_cases.get(case.name)
			if res is None:
				cases.append(CaseResult(suite.name, case.name, ktap.MISSING, case.requirements,
							may_skip=case.may_skip))
				continue
			cases.append(CaseResult(suite.name, case.name, res.status, case.requirements,
						ktap.case_log(res), res.reason, case.may_skip))
		for name, res in got_cases.items():
			if name not in known:
				cases.append(CaseResult(suite.name, name, res.status, [], ktap.case_log(res),
						res.reason))
	missing = [c.id for c in cases if c.status == ktap.MISSING]
	if missing and log.started:
		reasons.append(f'{len(missing)} case(s) did not report: ' + ', '.join(missing))
	failed = [c.id for c in cases if c.status == ktap.FAILED]
	if failed:
		reasons.append(f'{len(failed)} case(s) failed: ' + ', '.join(failed))
	for c in cases:
		if c.status == ktap.SKIPPED and arch not in c.may_skip and config not in c.may_skip:
			reasons.append(f'case {c.id} skipped without declaring it '
				       f'(ARCH={arch} CONFIG={config}, skip message: '
				       f'"{c.reason or "none"}"): add `May skip: <arch or config>` '
				       'to its comment if that is intended')
	if log.started and not any(c.status == ktap.PASSED for c in cases):
		reasons.append('no case passed')
	unexpected = [name for name in seen if name not in done]
	for name in unexpected:
		if seen[name].status == ktap.FAILED:
			reasons.append(f'suite {name} (not one of ours) failed')

	splats = splat.find(log.lines)
	_attribute(splats, log)
	bad = [s for s in splats if not s.expected]
	if bad:
		reasons.append(f'{len(bad)} kernel splat(s) during the run, a failure even if every '
			       'case passed: ' + splat_summary(bad, console_path))
	return Verdict(passed=not reasons, reasons=reasons, cases=cases, splats=splats,
		       unexpected_suites=unexpected, ktap_lines=_ktap_lines(log), tail=tail,
		       finished=log.started and shut_down and not timed_out and not log.problems,
		       integrity_ok=len(reasons) == int(bool(failed)))
