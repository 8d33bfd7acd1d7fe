# SPDX-License-Identifier: GPL-2.0
"""A KTAP reader for a kernel console log, tolerant of interleaved printk output.

It keeps what it cannot match (plans that do not add up, suites without a
result line) so that the verdict can call the output truncated.
"""

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Dict, List, Optional

_TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
_VERSION = re.compile(r'^(\s*)K?TAP version \d+\s*$')
_PLAN = re.compile(r'^(\s*)1\.\.(\d+)\s*$')
_SUBTEST = re.compile(r'^(\s*)# Subtest: (\S+)')
_RESULT = re.compile(r'^(\s*)(ok|not ok) (\d+)(?: -)? ?([^#]*?)\s*(?:#\s*(SKIP|TODO)\b\s*(.*))?$')


class Status(StrEnum):
	"""A case's or suite's outcome.

	A StrEnum: each member is its value as a str (Status.PASSED == 'passed',
	f'{Status.PASSED}' == 'passed'), so results.json keeps these strings.
	"""
	PASSED = 'passed'
	FAILED = 'failed'
	SKIPPED = 'skipped'
	MISSING = 'missing'  # never reported: crash, hang or truncated output


# The names the rest of the tooling uses.
PASSED, FAILED, SKIPPED, MISSING = Status.PASSED, Status.FAILED, Status.SKIPPED, Status.MISSING


@dataclass
class Result:
	"""One KTAP result line and the tests nested under it."""
	name: str
	status: Status
	number: int
	line: int  # index in Log.lines
	reason: str = ''
	plan: Optional[int] = None
	children: List['Result'] = field(default_factory=list)
	log: List[str] = field(default_factory=list)


def case_log(res: Result) -> List[str]:
	"""A case's own diagnostics, then those of each of its parameters that failed.

	A parameterized case prints its assertion messages under each parameter's
	result line; its own log holds only the "pass:N fail:N" summary.
	"""
	out = list(res.log)
	for child in res.children:
		if child.status in (FAILED, MISSING):
			out.append(f'{child.status.value} {child.name}:')
			out += ['  ' + l for l in case_log(child)]
	return out


@dataclass
class Log:
	lines: List[str]
	started: bool = False
	start_line: Optional[int] = None
	top_plan: Optional[int] = None
	suites: List[Result] = field(default_factory=list)
	problems: List[str] = field(default_factory=list)


def strip_line(line: str) -> str:
	line = line.rstrip('\r\n')
	return _TIMESTAMP.sub('', line)


_ANY_VERSION = re.compile(r'K?TAP version \d+\s*$')


class _Indents:
	"""Nesting levels from indentation, whatever its unit.

	KUnit indents a level by four spaces (older kernels: a tab), other
	KTAP producers by two; a line deeper than the innermost open level
	opens a new one, a shallower one closes the levels it is outside of.
	"""

	def __init__(self) -> None:
		self.widths = [0]

	def level(self, ws: str) -> int:
		width = len(ws.replace('\t', '    '))
		while len(self.widths) > 1 and width < self.widths[-1]:
			self.widths.pop()
		if width > self.widths[-1]:
			self.widths.append(width)
		return len(self.widths) - 1


def _strip_prefix(lines: List[str]) -> List[str]:
	"""Drops a fixed prefix (a caller id, a log tag) that the first KTAP header has.

	As kunit_tool does: as many characters as precede the header, from it
	and every line after it; timestamps are gone already (strip_line).
	"""
	for idx, line in enumerate(lines):
		m = _ANY_VERSION.search(line)
		if not m:
			continue
		n = m.start()
		return lines[:idx] + [l[n:] for l in lines[idx:]] if n else lines
	return lines


def parse(text: str) -> Log:
	"""Parses the KTAP in a console log into suites and cases."""
	lines = _strip_prefix([strip_line(l) for l in text.splitlines()])
	out = Log(lines=lines)
	indents = _Indents()
	_level = indents.level
	pending: Dict[int, List[Result]] = {}
	plans: Dict[int, int] = {}
	names: Dict[int, str] = {}
	logs: Dict[int, List[str]] = {}
	for idx, line in enumerate(lines):
		m = _VERSION.match(line)
		if m:
			lvl = _level(m.group(1))
			if lvl == 0:
				if out.started:
					out.problems.append(f'console line {idx + 1}: a second KTAP header '
							    '(the guest rebooted or printed two runs)')
				out.started = True
				if out.start_line is None:
					out.start_line = idx
			elif out.started:
				pending[lvl] = []
				plans.pop(lvl, None)
				logs[lvl] = []
			continue
		if not out.started:
			continue
		m = _SUBTEST.match(line)
		if m:
			lvl = _level(m.group(1))
			names[lvl] = m.group(2)
			pending.setdefault(lvl, [])
			logs.setdefault(lvl, [])
			continue
		m = _PLAN.match(line)
		if m:
			lvl = _level(m.group(1))
			if lvl == 0 and out.top_plan is None:
				out.top_plan = int(m.group(2))
			else:
				plans[lvl] = int(m.group(2))
			continue
		m = _RESULT.match(line)
		if m:
			lvl = _level(m.group(1))
			directive = m.group(5)
			if directive == 'SKIP':
				status = SKIPPED
			elif m.group(2) == 'ok':
				status = PASSED
			else:
				status = FAILED
			res = Result(name=m.group(4).strip(), status=status, number=int(m.group(3)),
				     line=idx, reason=(m.group(6) or '').strip(),
				     plan=plans.pop(lvl + 1, None),
				     children=pending.pop(lvl + 1, []),
				     log=logs.pop(lvl + 1, []))
			if names.pop(lvl + 1, None) is not None and res.plan is None and \
			   not res.children and status != SKIPPED:
				# A subtest header, then neither a plan nor a subtest: kunit_tool's
				# "0 tests run!" (NO_TESTS), never a pass.
				res.status, res.reason = MISSING, 'no tests run'
			pending.setdefault(lvl, []).append(res)
			if lvl in logs:
				res.log = logs[lvl] + res.log
				logs[lvl] = []
			continue
		# A diagnostic or an unrelated printk: part of the innermost open test.
		if logs:
			logs[max(logs)].append(line)
	out.suites = pending.get(0, [])
	# Suites that began but never printed their result line.
	if pending.get(1) or names.get(1):
		name = names.get(1, '<unnamed>')
		out.suites.append(Result(name=name, status=MISSING, number=len(out.suites) + 1,
					 line=len(lines), plan=plans.get(1),
					 children=pending[1], log=logs.get(1, [])))
		out.problems.append(f'suite {name} has no result line: output ends inside it')
	for suite in out.suites:
		if suite.plan is not None and suite.plan != len(suite.children):
			out.problems.append(f'suite {suite.name} planned {suite.plan} cases, '
					    f'printed {len(suite.children)}')
	if out.started and out.top_plan is not None and out.top_plan != len(out.suites):
		out.problems.append(f'KTAP planned {out.top_plan} suites, printed {len(out.suites)}')
	return out
