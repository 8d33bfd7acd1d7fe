# SPDX-License-Identifier: GPL-2.0
"""Finds kernel splats in a console log.

Any splat fails a run, even when every KUnit case passed.  A test that
provokes one on purpose brackets it with

    kunit-rcu: expect splat: <regular expression>
    kunit-rcu: expect splat end

and only splats whose first line matches the expression are excused.
Each report is judged on its own: a declared splat excuses only itself,
never a different report printed right after it.
"""

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

# (kind, pattern) in priority order: the first match names the splat.
PATTERNS: Sequence[Tuple[str, str]] = (
	('rcu-stall', r'rcu: INFO: rcu_\w+ (self-)?detected stall|detected stalls on CPUs/tasks'
		      r'|rcu_\w+ kthread (starved|timer wakeup didn\'t happen)'),
	('hung-task', r'INFO: task \S+ blocked for more than \d+ seconds'),
	('suspicious-rcu', r'suspicious RCU usage|suspicious rcu_dereference'),
	('might-sleep', r'sleeping function called from invalid context|scheduling while atomic'),
	('lockdep', r'possible circular locking dependency|possible recursive locking'
		    r'|inconsistent lock state|possible irq lock inversion|bad unlock balance'
		    r'|held lock freed|lock held when returning to user space'
		    r'|BUG: (looking up invalid subclass|MAX_LOCKDEP)|DEBUG_LOCKS_WARN_ON'),
	('kasan', r'\bKASAN: |\bKFENCE: |\bUBSAN: |\bKCSAN: '),
	('oops', r'\bOops\b|general protection fault|Unable to handle kernel|Internal error: '),
	('soft-lockup', r'watchdog: BUG: soft lockup|NMI watchdog: Watchdog detected hard LOCKUP'),
	('bug', r'^\s*BUG: |kernel BUG at |\bBUG: '),
	('warning', r'^\s*WARNING: |WARNING: CPU: \d+ PID: \d+ at '),
	('panic', r'Kernel panic - not syncing'),
)
_COMPILED = [(kind, re.compile(p)) for kind, p in PATTERNS]
_EXPECT = re.compile(r'kunit-rcu: expect splat: (.+?)\s*$')
_EXPECT_END = re.compile(r'kunit-rcu: expect splat end')
# Lines after which a new match is a new report: the kernel's end-of-report
# marker (WARN, BUG, Oops, panic), a KTAP result line (a case ended), or
# one of the test's own expect markers (printed outside any report).
_REPORT_END = re.compile(r'---\[ end |^\s*(not )?ok \d+\b|kunit-rcu: expect splat')

# Lines of one splat report: a later match of the same kind this close,
# with no end-of-report marker in between, belongs to it (a lockdep-RCU
# report prints both "suspicious RCU usage" and "suspicious
# rcu_dereference_check() usage!").
SPLAT_SPAN = 40

# The gcov console dump's records (gcovdump): data and file names, never
# part of a report (a build dir named after a splat must not fail a run).
_GCOV_DUMP = 'gcov-dump: '


@dataclass
class Splat:
	kind: str
	line: int  # index in the console lines
	text: str
	expected: bool = False
	context: List[str] = field(default_factory=list)
	case: str = ''


def classify(line: str) -> Optional[str]:
	for kind, pat in _COMPILED:
		if pat.search(line):
			return kind
	return None


def find(lines: Sequence[str]) -> List[Splat]:
	"""Returns the splats in lines, one per report, expected ones marked.

	A match of another kind than the open report, or one after an
	end-of-report marker, starts a new report, which is expected only if
	the active "expect splat" expression matches its own first line.
	"""
	out: List[Splat] = []
	expect: Optional[re.Pattern] = None
	open_report = False  # out[-1] may still take lines of the same report
	for idx, line in enumerate(lines):
		if _GCOV_DUMP in line:
			continue
		if _REPORT_END.search(line):
			# Never a splat itself ("---[ end Kernel panic - not syncing").
			open_report = False
			m = _EXPECT.search(line)
			if m:
				try:
					expect = re.compile(m.group(1))
				except re.error:
					expect = re.compile(re.escape(m.group(1)))
			elif _EXPECT_END.search(line):
				expect = None
			continue
		kind = classify(line)
		if kind is None:
			continue
		if open_report and out[-1].kind == kind and idx - out[-1].line < SPLAT_SPAN:
			continue  # the same report
		out.append(Splat(kind=kind, line=idx, text=line.strip(),
				 expected=bool(expect and expect.search(line)),
				 context=list(lines[idx:idx + 12])))
		open_report = True
	return out
