# SPDX-License-Identifier: GPL-2.0
"""Console logs for the tooling tests, shaped like what 6.1's KUnit prints."""

from kunit_rcu.sources import Case, Suite

BOOT = '''[    0.000000] Linux version 6.1.192 (root@host) (gcc 12.2.0)
[    0.123456] smp: Brought up 1 node, 4 CPUs
'''

PASSING = BOOT + '''[    1.000000] KTAP version 1
[    1.000001] 1..1
[    1.000002]     KTAP version 1
[    1.000003]     # Subtest: rcu_core
[    1.000004]     1..3
[    1.100000]     ok 1 rcu_read_lock_nesting
[    1.200000]     ok 2 rcu_poll_get_state
[    1.300000]     ok 3 rcu_poll_start # SKIP not this config
[    1.300001] # rcu_core: pass:2 fail:0 skip:1 total:3
[    1.300002] # Totals: pass:2 fail:0 skip:1 total:3
[    1.300003] ok 1 rcu_core
[    1.400000] reboot: Restarting system
'''

# PASSING skips rcu_poll_start, which declares "May skip: nopreempt":
# judge PASSING with config=SKIP_CONFIG for a run that passes.
SKIP_CONFIG = 'nopreempt'
EXPECTED = [Suite('rcu_core', 'kernel/rcu/rcu_kunit.c',
		  [Case('rcu_read_lock_nesting', ['SCH-1']), Case('rcu_poll_get_state', ['POLL-1']),
		   Case('rcu_poll_start', ['POLL-1'], [SKIP_CONFIG])])]


def with_line_after(text: str, anchor: str, extra: str) -> str:
	"""text with extra inserted after the line containing anchor."""
	out = []
	for line in text.splitlines(keepends=True):
		out.append(line)
		if anchor in line:
			out.append(extra if extra.endswith('\n') else extra + '\n')
	return ''.join(out)
