# SPDX-License-Identifier: GPL-2.0
"""Reads the project's KUnit sources: suites, their cases, and requirement IDs.

A case names the requirements it checks in the comment just above its
function, on a line "Covers: ID, ID".  The expected suite list built
here is how a run knows that output was truncated or a suite is missing.
"""

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List

from .common import ARCHES, OVERLAY_DIRS, REPO

_FUNC = re.compile(r'^static void (\w+)\(struct kunit \*test\)', re.M)
_COVERS = re.compile(r'Covers:\s*([A-Z0-9, -]+)')
_CASES = re.compile(r'static struct kunit_case (\w+)\[\]\s*=\s*\{(.*?)\};', re.S)
_CASE = re.compile(r'KUNIT_CASE\w*\(\s*(\w+)')
_SUITE = re.compile(r'static struct kunit_suite \w+\s*=\s*\{(.*?)\};', re.S)
_NAME = re.compile(r'\.name\s*=\s*"([^"]+)"')
_SUITE_CASES = re.compile(r'\.test_cases\s*=\s*(\w+)')


@dataclass
class Case:
	name: str
	requirements: List[str] = field(default_factory=list)


@dataclass
class Suite:
	name: str
	path: str
	cases: List[Case] = field(default_factory=list)


def _covers(text: str, pos: int) -> List[str]:
	"""IDs in the comment that ends right before pos."""
	before = text[:pos].rstrip()
	if not before.endswith('*/'):
		return []
	start = before.rfind('/*')
	ids: List[str] = []
	for m in _COVERS.finditer(before[start:]):
		ids += [i.strip() for i in m.group(1).split(',') if i.strip()]
	return ids


def parse_file(path: str, text: str) -> List[Suite]:
	reqs: Dict[str, List[str]] = {m.group(1): _covers(text, m.start())
				      for m in _FUNC.finditer(text)}
	arrays = {m.group(1): _CASE.findall(m.group(2)) for m in _CASES.finditer(text)}
	suites = []
	for m in _SUITE.finditer(text):
		name = _NAME.search(m.group(1))
		cases = _SUITE_CASES.search(m.group(1))
		if not name or not cases:
			continue
		suites.append(Suite(name=name.group(1), path=path,
				    cases=[Case(c, reqs.get(c, [])) for c in arrays.get(cases.group(1), [])]))
	return suites


def suites_for(arch: str, repo: str = REPO) -> List[Suite]:
	"""The suites a kernel for arch is expected to run."""
	other = tuple(d for a, v in ARCHES.items() if a != arch for d in v['suite_dirs'])
	out = []
	for d in OVERLAY_DIRS:
		for root, dirs, files in os.walk(os.path.join(repo, d)):
			dirs.sort()
			for name in sorted(files):
				if not name.endswith('.c'):
					continue
				path = os.path.relpath(os.path.join(root, name), repo)
				if path.startswith(other):
					continue
				with open(os.path.join(repo, path)) as f:
					out += parse_file(path, f.read())
	return out


def requirement_map(arch: str, repo: str = REPO) -> Dict[str, List[str]]:
	"""suite.case -> requirement IDs."""
	return {f'{s.name}.{c.name}': c.requirements for s in suites_for(arch, repo) for c in s.cases}
