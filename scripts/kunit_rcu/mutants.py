# SPDX-License-Identifier: GPL-2.0
"""The mutation harness: each patch in mutants/ breaks the kernel on purpose.

A mutant names what must catch it in its commit message:

    Kills: <suite>.<case> [<suite>.<case> ...]   those cases must fail
    Kills: splat                                  the run must fail on a splat
                                                  while every case passes

A mutant is killed when the run fails in exactly that way.  It is run on
x86_64 unless it names its arches:

    Arch: arm64 [x86_64]                          boot it on these instead

A "Kills:" case whose suite is not built on an arch (an arch/<arch>/
suite) is not expected to fail there; a mutant must name at least one
case of every arch it is booted on.

It runs under CONFIG=default unless it names the config its cases need (a
case that only runs there, e.g. with NO_HZ): "make mutants CONFIG=<name>"
and "make check-configs" run those.

    Config: nohz

A mutant that hangs the guest on purpose (a deadlock its case detects)
may bound its boot below the default TIMEOUT:

    Timeout: 90
"""

import os
import re
from typing import Callable, List, Optional, Tuple

from . import ktap, run, sources
from .common import REPO, check_arch, log

# A mutant may hang the guest: bound its boot well below make run's default.
TIMEOUT = 240

_KILLS = re.compile(r'^Kills:\s*(.+)$', re.M)
_ARCH = re.compile(r'^Arch:\s*(.+)$', re.M)
_CONFIG = re.compile(r'^Config:\s*(\S+)\s*$', re.M)
_TIMEOUT = re.compile(r'^Timeout:\s*(\d+)\s*$', re.M)

DEFAULT_ARCHES = ['x86_64']


def mutant_files(only: Optional[List[str]] = None) -> List[str]:
	top = os.path.join(REPO, 'mutants')
	names = sorted(n for n in os.listdir(top) if n.endswith('.patch'))
	if only:
		names = [n for n in names if n in only or n[:-len('.patch')] in only]
	return [os.path.join(top, n) for n in names]


def kills(path: str) -> List[str]:
	with open(path) as f:
		text = f.read()
	out: List[str] = []
	for m in _KILLS.finditer(text):
		out += m.group(1).split()
	return out


def arches(path: str) -> List[str]:
	"""The arches a mutant is booted on (its "Arch:" line, else x86_64)."""
	with open(path) as f:
		text = f.read()
	out: List[str] = []
	for m in _ARCH.finditer(text):
		out += m.group(1).split()
	for a in out:
		check_arch(a)
	return out or list(DEFAULT_ARCHES)


def check_arches(path: str) -> List[str]:
	"""The arches make check boots a mutant on: the first it names, and any other where it
	must kill a case of a suite the first does not build (an arch's own entry suite).

	A mutant of the shared suites is shown on one arch in make check (its
	cost is a build and a boot per arch); make mutants boots every arch.
	"""
	names = arches(path)
	first = {s.name for s in sources.suites_for(names[0])}
	return names[:1] + [a for a in names[1:]
			    if any(c != 'splat' and c.split('.', 1)[0] not in first
				   for c in kills_on(kills(path), a))]


def mutant_config(path: str) -> str:
	"""The config a mutant is built with (its "Config:" line, else default)."""
	with open(path) as f:
		m = _CONFIG.search(f.read())
	return m.group(1) if m else 'default'



_DIFF_FILE = re.compile(r'^diff --git a/(\S+) ', re.M)


def shared_headers(path: str) -> List[str]:
	"""The files under include/ a mutant changes: most objects include them,
	so its kernel is a full rebuild (minutes cold), not a relink."""
	with open(path) as f:
		return [p for p in _DIFF_FILE.findall(f.read()) if p.startswith('include/')]


def kills_on(expect: List[str], arch: str) -> List[str]:
	"""The "Kills:" names that apply on arch: splat, and cases of the suites built there."""
	built = {s.name for s in sources.suites_for(arch)}
	return [c for c in expect if c == 'splat' or c.split('.', 1)[0] in built]


def mutant_timeout(path: str, default: int) -> int:
	"""The bound on a mutant's boot: its "Timeout:" line if lower, else default."""
	with open(path) as f:
		m = _TIMEOUT.search(f.read())
	return min(int(m.group(1)), default) if m else default


def only_suite(expect: List[str]) -> Optional[str]:
	"""The one suite a mutant's "Kills:" cases are in, else None (boot every suite).

	A "Kills: splat" mutant boots every suite: any of them may show it.
	"""
	suites = {c.split('.', 1)[0] for c in expect}
	if 'splat' in expect or len(suites) != 1:
		return None
	return suites.pop()


def failed_in(console: str) -> List[str]:
	"""The <suite>.<case> names a console (complete or not) reports as failed."""
	log = ktap.parse(console)
	return [f'{s.name}.{c.name}' for s in log.suites for c in s.children
		if c.status == ktap.FAILED]


def stop_when_killed(expect: List[str]) -> Optional[Callable[[str], bool]]:
	"""A boot's stop_when: true once every case in expect has failed.

	The rest of the boot cannot change the verdict on the mutant (judge
	needs those cases failed, nothing more), and a mutant that wedges RCU
	would otherwise hold the guest until its timeout.  None for "Kills:
	splat", which needs every case to have passed.
	"""
	if not expect or 'splat' in expect:
		return None
	return lambda console: set(expect) <= set(failed_in(console))


def judge(expect: List[str], out: run.RunOutcome) -> Tuple[bool, str]:
	"""Did the run fail the way the mutant says it must?"""
	if out.ok:
		return False, 'survived: the run passed'
	if not expect:
		return False, 'the mutant names nothing in a "Kills:" line'
	if expect == ['splat']:
		if not out.splat_kinds:
			return False, 'no splat was reported: ' + '; '.join(out.reasons)
		if out.failed_cases:
			return False, 'cases failed too: ' + ', '.join(out.failed_cases)
		return True, 'killed by splat (' + ', '.join(sorted(set(out.splat_kinds))) + ')'
	missed = [c for c in expect if c not in out.failed_cases]
	if missed:
		return False, 'these cases did not fail: ' + ', '.join(missed) + \
			' (run failed because: ' + '; '.join(out.reasons) + ')'
	return True, 'killed by ' + ', '.join(expect)


def run_all(config: str, timeout: int, only: Optional[List[str]] = None,
	    not_killed: Optional[List[str]] = None, all_arches: bool = True) -> Tuple[int, int, int]:
	"""Boots every mutant of config (or those in only) on each of its arches; counts kills.

	Each mutant that was not killed is appended to not_killed (if given)
	as "name ARCH=arch: why".  all_arches=False (make check): only
	check_arches(), and a mutant of a shared header (shared_headers()) is
	skipped, counted as such: make mutants and make check-configs run it.
	"""
	killed = survived = skipped = 0
	for path in mutant_files(only):
		if mutant_config(path) != config:
			continue
		name = os.path.basename(path)
		headers = shared_headers(path)
		if headers and not all_arches:
			log(f'[mutant] {name}: skipped here: it changes {", ".join(headers)}, a full '
			    f'rebuild; make mutants CONFIG={config} MUTANTS={name} runs it')
			skipped += 1
			continue
		for arch in (arches(path) if all_arches else check_arches(path)):
			log(f'[mutant] {name} ARCH={arch}')
			bound = mutant_timeout(path, timeout)
			expect = kills_on(kills(path), arch)
			suite = only_suite(expect)
			stop = stop_when_killed(expect)
			out = run.run(arch, config, [path], bound, suite=suite, stop_when=stop)
			if out.stale:
				log(f'[mutant] {name} ARCH={arch}: the guest ran an older kernel; once more')
				out = run.run(arch, config, [path], bound, suite=suite, stop_when=stop)
			ok, why = judge(expect, out)
			log(f'[mutant] {name} ARCH={arch}: {"KILLED" if ok else "NOT KILLED"}: {why}')
			if ok:
				killed += 1
			else:
				survived += 1
				if not_killed is not None:
					not_killed.append(f'{name} ARCH={arch}: {why}')
	return killed, survived, skipped
