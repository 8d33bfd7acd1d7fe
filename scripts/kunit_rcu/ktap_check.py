# SPDX-License-Identifier: GPL-2.0
"""ktap.parse against kunit_tool's own parser, on kunit_tool's test logs.

The prepared tree carries kunit_tool's KTAP samples
(tools/testing/kunit/test_data/*.log): prefixed, tab-indented, TAP 14,
crashed, interrupted, skipped, nested.  Each is parsed by kunit_parser
and by ktap.parse; both must name the same cases with the same statuses.
kunit_parser's crashed and "0 tests run" are ktap's MISSING; the nameless
entries kunit_parser adds for subtests a plan promised and the log never
printed are ktap's plan shortfall of that suite.
"""

import contextlib
import glob
import importlib
import io
import os
import sys
from typing import Dict, Iterator, List, Optional, Tuple

from . import ktap
from .common import log, tree_dir

KUNIT_DIR = os.path.join('tools', 'testing', 'kunit')

# Cases: '<suite>.<case>' -> status; a suite without cases stands for itself.
Cases = Dict[str, str]


@contextlib.contextmanager
def _kunit_parser(tree: str) -> Iterator[object]:
	"""The tree's kunit_parser module, its printing sent nowhere."""
	path = os.path.join(tree, KUNIT_DIR)
	sys.path.insert(0, path)
	saved = {n: sys.modules.pop(n) for n in ('kunit_parser', 'kunit_printer') if n in sys.modules}
	try:
		parser = importlib.import_module('kunit_parser')
		importlib.import_module('kunit_printer').stdout._output = io.StringIO()
		yield parser
	finally:
		sys.path.remove(path)
		for name in ('kunit_parser', 'kunit_printer'):
			sys.modules.pop(name, None)
		sys.modules.update(saved)


def theirs(parser, text: str) -> Tuple[Cases, Dict[str, int]]:
	"""kunit_parser's cases, and per suite its nameless (never printed) subtests."""
	status = parser.TestStatus
	names = {status.SUCCESS: str(ktap.PASSED), status.FAILURE: str(ktap.FAILED),
		 status.SKIPPED: str(ktap.SKIPPED)}
	top = parser.parse_run_tests(text.splitlines(keepends=True))
	cases: Cases = {}
	unnamed: Dict[str, int] = {}
	for suite in top.subtests:
		for case in suite.subtests:
			if not case.name:
				unnamed[suite.name] = unnamed.get(suite.name, 0) + 1
				continue
			cases[f'{suite.name}.{case.name}'] = names.get(case.status, str(ktap.MISSING))
		if not suite.subtests:
			cases[suite.name] = names.get(suite.status, str(ktap.MISSING))
	return cases, unnamed


def ours(text: str) -> Tuple[Cases, Dict[str, int]]:
	"""ktap.parse's cases, and per suite how many its plan promised beyond those printed."""
	parsed = ktap.parse(text)
	cases: Cases = {}
	short: Dict[str, int] = {}
	for suite in parsed.suites:
		for case in suite.children:
			cases[f'{suite.name}.{case.name}'] = str(case.status)
		if not suite.children:
			cases[suite.name] = str(suite.status)
		if suite.plan is not None and suite.plan > len(suite.children):
			short[suite.name] = suite.plan - len(suite.children)
	return cases, short


def differences(parser, text: str) -> Optional[str]:
	"""How the two parsers disagree on one log, or None."""
	a, b = theirs(parser, text), ours(text)
	if a == b:
		return None
	out = []
	for name in sorted(set(a[0]) | set(b[0])):
		if a[0].get(name) != b[0].get(name):
			out.append(f'{name}: kunit_parser {a[0].get(name, "absent")}, '
				   f'ktap {b[0].get(name, "absent")}')
	if a[1] != b[1]:
		out.append(f'never printed: kunit_parser {a[1]}, ktap {b[1]}')
	return '; '.join(out)


def logs(tree: str) -> List[str]:
	return sorted(glob.glob(os.path.join(tree, KUNIT_DIR, 'test_data', '*.log')))


def check(tree: Optional[str] = None) -> Tuple[int, int, int]:
	"""Every test_data log of the prepared tree: (agreed, disagreed, 0)."""
	tree = tree or tree_dir()
	paths = logs(tree)
	if not paths:
		log(f'[ktap] no kunit_tool test logs under {os.path.join(tree, KUNIT_DIR)}: '
		    'prepare the tree first (make prepare)')
		return 0, 1, 0
	agreed = disagreed = 0
	with _kunit_parser(tree) as parser:
		for path in paths:
			with open(path, errors='replace') as f:
				diff = differences(parser, f.read())
			if diff is None:
				agreed += 1
			else:
				disagreed += 1
				log(f'[ktap] {os.path.basename(path)}: {diff}')
	log(f'[ktap] {agreed} of {len(paths)} kunit_tool test logs read alike by ktap and kunit_parser')
	return agreed, disagreed, 0
