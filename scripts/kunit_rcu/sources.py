# SPDX-License-Identifier: GPL-2.0
"""Reads the project's KUnit sources: suites, their cases, and requirement IDs.

A case names the requirements it checks in the comment just above its
function, on a line "Covers: ID, ID", and where it may legitimately skip
on a line "May skip: NAME, NAME" (an arch, or a configs/NAME.config).
The expected suite list built here is how a run knows that output was
truncated, a suite is missing, or a skip was not declared.
"""

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Set

from .common import ARCHES, OVERLAY_DIRS, REPO

_FUNC = re.compile(r'^static void (\w+)\(struct kunit \*test\)', re.M)
_COVERS = re.compile(r'Covers:\s*([A-Z0-9, -]+)')
_MAY_SKIP = re.compile(r'May skip:[ \t]*([\w-]+(?:[ \t]*,[ \t]*[\w-]+)*)')
_CASES = re.compile(r'static struct kunit_case (\w+)\[\]\s*=\s*\{(.*?)\};', re.S)
_CASE = re.compile(r'KUNIT_CASE\w*\(\s*(\w+)')
_SUITE = re.compile(r'static struct kunit_suite \w+\s*=\s*\{(.*?)\};', re.S)
_NAME = re.compile(r'\.name\s*=\s*"([^"]+)"')
_SUITE_CASES = re.compile(r'\.test_cases\s*=\s*(\w+)')


@dataclass
class Case:
	name: str
	requirements: List[str] = field(default_factory=list)
	may_skip: List[str] = field(default_factory=list)  # arches and config names
	path: str = ''  # the source file, relative to the repository


@dataclass
class Suite:
	name: str
	path: str
	cases: List[Case] = field(default_factory=list)


def _comment(text: str, pos: int) -> str:
	"""The comment that ends right before pos, or ''."""
	before = text[:pos].rstrip()
	if not before.endswith('*/'):
		return ''
	return before[before.rfind('/*'):]


def _names(pattern: re.Pattern, comment: str) -> List[str]:
	out: List[str] = []
	for m in pattern.finditer(comment):
		out += [i.strip() for i in m.group(1).split(',') if i.strip()]
	return out


def parse_file(path: str, text: str) -> List[Suite]:
	comments = {m.group(1): _comment(text, m.start()) for m in _FUNC.finditer(text)}
	arrays = {m.group(1): _CASE.findall(m.group(2)) for m in _CASES.finditer(text)}
	suites = []
	for m in _SUITE.finditer(text):
		name = _NAME.search(m.group(1))
		cases = _SUITE_CASES.search(m.group(1))
		if not name or not cases:
			continue
		suites.append(Suite(name=name.group(1), path=path, cases=[
			Case(c, _names(_COVERS, comments.get(c, '')), _names(_MAY_SKIP, comments.get(c, '')),
			     path) for c in arrays.get(cases.group(1), [])]))
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


def skip_names(repo: str = REPO) -> Set[str]:
	"""What a "May skip:" line may name: the arches and the configs/*.config names."""
	configs = {n[:-len('.config')] for n in os.listdir(os.path.join(repo, 'configs'))
		   if n.endswith('.config')}
	return set(ARCHES) | configs


def unknown_skip_names(repo: str = REPO) -> List[str]:
	"""suite.case: NAME for every "May skip:" name that is neither an arch nor a config."""
	known = skip_names(repo)
	return sorted({f'{s.name}.{c.name}: {n}' for arch in ARCHES for s in suites_for(arch, repo)
		       for c in s.cases for n in c.may_skip if n not in known})
