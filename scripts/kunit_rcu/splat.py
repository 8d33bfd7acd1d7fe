# SPDX-License-Identifier: GPL-2.0
"""Finds kernel splats in a console log.

Any splat fails a run, even when every KUnit case passed.  A test that
provokes one on purpose brackets it with

    kunit-rcu: expect splat: <regular expression>
    kunit-rcu: expect splat end

and only splats whose first line matches the expression are excused.
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
	('bug', r'^\s*BUG: |kernel BUG at |\bBUG: '),
	('warning', r'^\s*WARNING: |WARNING: CPU: \d+ PID: \d+ at '),
	('panic', r'Kernel panic - not syncing'),
	('soft-lockup', r'watchdog: BUG: soft lockup|NMI watchdog: Watchdog detected hard LOCKUP'),
)
_COMPILED = [(kind, re.compile(p)) for kind, p in PATTERNS]
_EXPECT = re.compile(r'kunit-rcu: expect splat: (.+?)\s*$')
_EXPECT_END = re.compile(r'kunit-rcu: expect splat end')

# Lines of one splat report: later matches this close belong to it.
SPLAT_SPAN = 40


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
	"""Returns the splats in lines, one per report, expected ones marked."""
	out: List[Splat] = []
	expect: Optional[re.Pattern] = None
	for idx, line in enumerate(lines):
		m = _EXPECT.search(line)
		if m:
			try:
				expect = re.compile(m.group(1))
			except re.error:
				expect = re.compile(re.escape(m.group(1)))
			continue
		if _EXPECT_END.search(line):
			expect = None
			continue
		kind = classify(line)
		if kind is None:
			continue
		if out and idx - out[-1].line < SPLAT_SPAN and (expect or not out[-1].expected):
			continue  # the same report
		splat = Splat(kind=kind, line=idx, text=line.strip(),
			      expected=bool(expect and expect.search(line)),
			      context=[l for l in lines[idx:idx + 12]])
		out.append(splat)
	return out
