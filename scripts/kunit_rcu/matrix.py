# SPDX-License-Identifier: GPL-2.0
"""The traceability matrix: every requirement ID, and per arch its cases and how they did.

Generated from docs/requirements.md (the catalogue), the "Covers:" lines of
the KUnit sources, the tooling checks that stand in for a case (TOOLING),
docs/not-covered.md (written reasons for an ID that has no case on an
arch) and the results of the last run of every config make check runs
(results/<arch>-<config>/results.json, and a tooling check's own file in
results/<arch>-default).  An ID is covered on an arch only when one of its
cases or tooling checks passed there; a case that passed only in another
config than default says in which ("passed (nohz)").  "make matrix" rewrites docs/matrix.md; "make check"
fails while the committed file differs from what its fresh runs give.
"""

import difflib
import json
import os
import re
from typing import Dict, List, Optional, Tuple

from .common import ARCHES, CHECK_CONFIG_RUNS, REPO, UserError, log, results_dir
from . import flavor_api, kconfig_check, sources

CATALOGUE = os.path.join(REPO, 'docs', 'requirements.md')
MATRIX = os.path.join(REPO, 'docs', 'matrix.md')
NOT_COVERED = os.path.join(REPO, 'docs', 'not-covered.md')
# Copied under the table: what stands in where an arch differs (written by hand).
NOTES = os.path.join(REPO, 'docs', 'matrix-notes.md')
_ID = re.compile(r'^- ([A-Z]+(?:-[A-Z]*\d+)) (.*)$')
_REASON = re.compile(r'^- ([A-Z]+-[A-Z]*\d+)(?: \[([\w, ]+)\])?: (\S.*)$')

# (ID, arch) -> reason; arch '' means every arch.
Reasons = Dict[Tuple[str, str], str]

# Checks of the tooling that cover requirements no KUnit case can observe,
# on every arch: name -> (requirement IDs, loader of its result for
# ARCH=arch CONFIG=default: a dict with "status", or None if not run since
# that arch's last run).  load_results() puts the results under "tooling".
TOOLING = {
	kconfig_check.NAME: (kconfig_check.COVERS, kconfig_check.load_result),
	flavor_api.NAME: (flavor_api.COVERS, flavor_api.load_result),
}


def tooling_for(rid: str) -> List[str]:
	"""The tooling checks that cover rid."""
	return [name for name, (ids, _) in sorted(TOOLING.items()) if rid in ids]


def catalogue(path: str = CATALOGUE) -> List[Tuple[str, str]]:
	out = []
	with open(path) as f:
		for line in f:
			m = _ID.match(line.rstrip())
			if m:
				out.append((m.group(1), m.group(2)))
	return out


def read_not_covered(path: str = NOT_COVERED) -> Tuple[Reasons, List[str]]:
	"""The written reasons of docs/not-covered.md, and what is wrong in it.

	Lines are "- ID [arch]: reason" (no [arch]: every arch); other list
	items, unknown IDs and unknown arches are problems.
	"""
	reasons: Reasons = {}
	problems: List[str] = []
	if not os.path.isfile(path):
		return reasons, problems
	known = {rid for rid, _ in catalogue()}
	name = os.path.relpath(path, REPO)
	with open(path) as f:
		for num, line in enumerate(f, 1):
			line = line.rstrip()
			if not line.startswith('- '):
				continue
			m = _REASON.match(line)
			if not m:
				problems.append(f'{name}:{num}: not "- ID [arch]: reason": {line}')
				continue
			rid, arches, text = m.groups()
			if rid not in known:
				problems.append(f'{name}:{num}: unknown requirement ID {rid}')
			for arch in [a.strip() for a in (arches or '').split(',') if a.strip()] or ['']:
				if arch and arch not in ARCHES:
					problems.append(f'{name}:{num}: unknown arch {arch} '
							f'(use {", ".join(sorted(ARCHES))})')
				reasons[(rid, arch)] = text.strip()
	return reasons, problems


def _cases_per_arch() -> Dict[str, Dict[str, List[str]]]:
	"""arch -> requirement ID -> suite.case, from the sources built for that arch."""
	out: Dict[str, Dict[str, List[str]]] = {}
	for arch in sorted(ARCHES):
		table: Dict[str, List[str]] = {}
		for case, ids in sources.requirement_map(arch).items():
			for rid in ids:
				table.setdefault(rid, []).append(case)
		out[arch] = table
	return out


def not_covered_problems(path: str = NOT_COVERED) -> List[str]:
	"""Problems of docs/not-covered.md, including reasons for an ID that has cases there."""
	reasons, problems = read_not_covered(path)
	per_arch = _cases_per_arch()
	for (rid, arch), _ in sorted(reasons.items()):
		if tooling_for(rid):
			problems.append(f'{rid} has a written reason and the tooling check(s) '
					f'{", ".join(tooling_for(rid))}: drop the reason')
			continue
		for a in [arch] if arch else sorted(ARCHES):
			if a in per_arch and per_arch[a].get(rid):
				problems.append(f'{rid} [{a}] has a written reason and case(s) '
						f'{", ".join(per_arch[a][rid])}: drop the reason or '
						'narrow it to the other arch')
	return problems


def _load_run(arch: str, config: str) -> dict:
	path = os.path.join(results_dir(arch, config, False), 'results.json')
	cmd = f'make run ARCH={arch}' + ('' if config == 'default' else f' CONFIG={config}')
	what = f'ARCH={arch}' + ('' if config == 'default' else f' CONFIG={config}')
	if not os.path.isfile(path):
		raise UserError(f'no results for {what}: run {cmd} first (or make check; '
				f'looked for {path})')
	try:
		with open(path) as f:
			return json.load(f)
	except ValueError as e:
		raise UserError(f'unreadable results for {what} ({path}: {e}): '
				f'run {cmd} again') from e


def load_results(arch: str) -> dict:
	"""The results.json of the last CONFIG=default run on arch.

	The tooling checks' results go under "tooling", the results of the
	other configs make check runs on arch under "configs" (name -> results).
	"""
	data = _load_run(arch, 'default')
	data['configs'] = {c: _load_run(arch, c) for a, c in CHECK_CONFIG_RUNS if a == arch}
	data['tooling'] = {name: result for name, (_, load) in TOOLING.items()
			   for result in [load(arch)] if result is not None}
	return data


def _merged(name: str, results: dict) -> Tuple[Optional[dict], str]:
	"""A case's result over an arch's configs, and which configs it is from.

	A failure anywhere comes first, then a pass in default, then a pass in
	the other configs (named), then default's own result.
	"""
	runs = [('default', results)] + sorted(results.get('configs', {}).items())
	found = [(cfg, next((c for c in r.get('cases', [])
			     if f'{c.get("suite")}.{c.get("case")}' == name), None))
		 for cfg, r in runs]
	for status in ('failed', 'passed'):
		cfgs = [cfg for cfg, c in found if c and c.get('status') == status]
		if cfgs:
			where = '' if cfgs == ['default'] or 'default' in cfgs and status == 'passed' \
				else ' (' + ', '.join(cfgs) + ')'
			return next(c for cfg, c in found if cfg == cfgs[0]), where
	return found[0][1], ''


def _status(name: str, result: Optional[dict], where: str = '') -> str:
	status = result.get('status') if result else None
	if status == 'passed':
		return f'`{name}` passed{where}'
	if status == 'failed':
		return f'`{name}` failed{where}'
	if status == 'skipped':
		return f'`{name}` skipped: {result.get("reason") or "no reason given"}'
	return f'`{name}` not run'


def _tool_status(name: str, result: Optional[dict]) -> str:
	status = result.get('status') if result else None
	if status in ('passed', 'failed'):
		return f'tooling: `{name}` {status}'
	return f'tooling: `{name}` not run'


def _cell(text: str) -> str:
	return text.replace('|', '\\|').replace('\n', ' ')


def render(results: Optional[Dict[str, dict]] = None, not_covered: str = NOT_COVERED) -> str:
	"""docs/matrix.md from the sources and results (arch -> results.json; default: load them)."""
	arches = sorted(ARCHES)
	if results is None:
		results = {a: load_results(a) for a in arches}
	reasons, problems = read_not_covered(not_covered)
	if problems:
		raise UserError('fix docs/not-covered.md: ' + '; '.join(problems))
	per_arch = _cases_per_arch()
	lines = ['# Traceability matrix', '',
		 'Generated by `make matrix` from `docs/requirements.md`, the `Covers:` lines',
		 'of the KUnit sources, `docs/not-covered.md` and the last `make run` per arch',
		 'and the last run of every config `make check` runs per arch',
		 '(`results/<arch>-<config>/results.json`, and a tooling check\'s own result',
		 'in `results/<arch>-default`). Do not edit by hand. An ID is covered on an',
		 'arch when one of its cases passed there in one of those configs ("passed',
		 '(nohz)": only in CONFIG=nohz), or a check of the tooling (`tooling:`)',
		 'passed on that arch\'s CONFIG=default build.', '',
		 '| ID | requirement | ' + ' | '.join(arches) + ' |',
		 '|---|---|' + '---|' * len(arches)]
	covered = {a: 0 for a in arches}
	excused = {a: 0 for a in arches}
	reqs = catalogue()
	for rid, text in reqs:
		cells = []
		for a in arches:
			cases = per_arch[a].get(rid, [])
			tools = tooling_for(rid)
			if cases or tools:
				merged = [_merged(c, results[a]) for c in cases]
				found = [r for r, _ in merged]
				checks = [results[a].get('tooling', {}).get(t) for t in tools]
				covered[a] += any(r and r.get('status') == 'passed' for r in found + checks)
				cells.append('; '.join([_status(c, r, w) for c, (r, w) in zip(cases, merged)] +
						       [_tool_status(t, r) for t, r in zip(tools, checks)]))
			elif (rid, a) in reasons or (rid, '') in reasons:
				excused[a] += 1
				cells.append('n/a: ' + reasons.get((rid, a), reasons.get((rid, ''), '')))
			else:
				cells.append('not covered')
		short = text if len(text) <= 70 else text[:67] + '...'
		lines.append(f'| {rid} | {short} | ' + ' | '.join(_cell(c) for c in cells) + ' |')
	lines += ['', 'Covered (a case or tooling check passed): ' +
		  ', '.join(f'{a} {covered[a]} of {len(reqs)}' for a in arches) +
		  '; not applicable with a written reason: ' +
		  ', '.join(f'{a} {excused[a]}' for a in arches) + '.']
	failed = [f'{a}' + ('' if cfg == 'default' else f' CONFIG={cfg}') for a in arches
		  for cfg, r in [('default', results[a])] + sorted(results[a].get('configs', {}).items())
		  if r.get('verdict') != 'pass']
	if failed:
		lines += ['', 'The last run failed on ' + ', '.join(failed) +
			  ' (`make run ARCH=<arch> CONFIG=<config>` says why): its passed cases '
			  'are counted, the run as a whole did not pass.']
	if os.path.exists(NOTES):
		with open(NOTES) as f:
			lines += ['', f.read().rstrip('\n')]
	return '\n'.join(lines + [''])


def unknown_ids() -> List[str]:
	known = {rid for rid, _ in catalogue()}
	tools = {f'tooling {name}: {rid}' for name, (ids, _) in TOOLING.items()
		 for rid in ids if rid not in known}
	return sorted(tools | {f'{case}: {rid}' for arch in ARCHES
			       for case, ids in sources.requirement_map(arch).items()
			       for rid in ids if rid not in known})


def write() -> str:
	text = render()
	with open(MATRIX, 'w') as f:
		f.write(text)
	return MATRIX


def check(config: str = 'default') -> Tuple[int, int, int]:
	"""make check's line: docs/matrix.md is what the fresh CONFIG=default results give."""
	if config != 'default':
		log(f'traceability matrix: not compared after CONFIG={config} runs '
		    '(it is made from CONFIG=default results)')
		return 0, 0, 1
	try:
		fresh = render()
	except UserError as e:
		log(f'FAIL: traceability matrix: {e}')
		return 0, 1, 0
	committed = ''
	if os.path.isfile(MATRIX):
		with open(MATRIX) as f:
			committed = f.read()
	if committed == fresh:
		return 1, 0, 0
	log('FAIL: docs/matrix.md does not match these runs: run make matrix and commit it')
	diff = list(difflib.unified_diff(committed.splitlines(), fresh.splitlines(),
					 'docs/matrix.md', 'make matrix', lineterm='', n=0))
	print('\n'.join('    ' + l for l in diff[:40]))
	return 0, 1, 0
