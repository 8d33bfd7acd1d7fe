# SPDX-License-Identifier: GPL-2.0
"""A run's results, and make bench's figures, as KernelCI data (KCIDB I/O schema v5.3).

kcidb.json beside results.json holds one checkout (the prepared tree's
commit: Debian's linux-source-6.1, the series and the overlay), one build
(ARCH, CONFIG) and a test for each KUnit case, path kunit.<suite>.<case>,
plus kunit_rcu.run.verdict for the run as a whole (splats, truncation,
hangs), as junit.xml's run/verdict.  A case that never reported is MISS,
and a run that did not finish (crash, hang, truncated console) makes the
run check ERROR: no case reads PASS unless KTAP said "ok".  The file is
in the form kcidb-submit reads.

validate() checks a document against the schema rules this module relies on.
"""

import json
import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence

from . import ktap, prepare
from .common import UserError, build_config, log
from .verdict import CaseResult, Verdict

FILE = 'kcidb.json'
ORIGIN = 'kunit_rcu'
VERSION = {'major': 5, 'minor': 3}
# The schema's maxLength of a log_excerpt, in characters.
EXCERPT_MAX = 16384
RUN_PATH = 'kunit_rcu.run.verdict'
BENCH_PATH = 'kunit_rcu.bench'
TREE_NAME = 'linux-source-6.1'
BRANCH = 'kunit-rcu'  # the prepared tree's branch (prepare.py); EXTRA_PATCHES runs are detached

STATUSES = ('FAIL', 'ERROR', 'MISS', 'PASS', 'DONE', 'SKIP')
CASE_STATUS = {ktap.Status.PASSED: 'PASS', ktap.Status.FAILED: 'FAIL',
	       ktap.Status.SKIPPED: 'SKIP', ktap.Status.MISSING: 'MISS'}
MISSING_COMMENT = 'did not report (crash, hang or truncated output)'

_ORIGIN = re.compile(r'^[a-z0-9_]+$')
_ID = re.compile(r'^([a-z0-9_]+):(.+)$', re.S)
_PATH = re.compile(r'^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$')
_NOT_PATH = re.compile(r'[^a-zA-Z0-9_-]')
_COMMIT = re.compile(r'^[0-9a-f]{40}([0-9a-f]{24})?$')
_ARCH = re.compile(r'^[a-z0-9_]*$')
_TIME = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$')

# Each object's fields in v5.3 (the schema has additionalProperties: false).
FIELDS = {
	'checkouts': {'_timestamp', 'id', 'origin', 'tree_name', 'git_repository_url',
		      'git_commit_hash', 'git_commit_name', 'git_commit_tags', 'git_commit_message',
		      'git_repository_branch', 'git_repository_branch_tip', 'patchset_files',
		      'patchset_hash', 'message_id', 'comment', 'start_time',
		      'origin_builds_finish_time', 'origin_tests_finish_time', 'log_url',
		      'log_excerpt', 'valid', 'misc'},
	'builds': {'_timestamp', 'checkout_id', 'id', 'origin', 'comment', 'start_time', 'duration',
		   'architecture', 'command', 'compiler', 'input_files', 'output_files',
		   'config_name', 'config_url', 'log_url', 'log_excerpt', 'status', 'misc'},
	'tests': {'_timestamp', 'build_id', 'id', 'origin', 'environment', 'path', 'comment',
		  'log_url', 'log_excerpt', 'status', 'number', 'start_time', 'duration',
		  'input_files', 'output_files', 'misc'},
}
REQUIRED = {'checkouts': ('id', 'origin'), 'builds': ('id', 'origin', 'checkout_id'),
	    'tests': ('id', 'origin', 'build_id')}
# The object each kind's *_id field points at.
PARENT = {'builds': ('checkout_id', 'checkouts'), 'tests': ('build_id', 'builds')}
TOP_LEVEL = {'version', 'checkouts', 'builds', 'tests', 'issues', 'incidents'}


@dataclass
class Figure:
	"""A measurement: a DONE test at kunit_rcu.bench.<path> with number {value, unit}."""
	path: str  # dot-separated, e.g. 'loop.cold.make_run'
	value: float
	unit: str = ''  # '' for a dimensionless figure (a ratio)
	comment: str = ''


def object_id(local: str) -> str:
	return f'{ORIGIN}:{local}'


def path_part(name: str) -> str:
	"""One element of a test path: characters other than [a-zA-Z0-9_-] become '_'."""
	return _NOT_PATH.sub('_', name) or '_'


def case_path(suite: str, case: str) -> str:
	"""KernelCI's name of a KUnit case: kunit.<suite>.<case>."""
	return f'kunit.{path_part(suite)}.{path_part(case)}'


def _clean(text: str) -> str:
	"""text without NUL, which no KCIDB string may hold."""
	return text.replace('\0', '\ufffd')


def excerpt(lines: Iterable[str], limit: int = EXCERPT_MAX) -> str:
	"""lines joined, at most limit characters: the head and the tail around a cut note."""
	text = _clean('\n'.join(lines))
	if len(text) <= limit:
		return text
	note = f'\n[... {len(text)} characters, cut to {limit} ...]\n'
	keep = limit - len(note)
	head = keep // 4  # a failure's first lines say what; the tail says where it ended
	return text[:head] + note + text[len(text) - (keep - head):]


def compiler_of(build_dir: Optional[str]) -> str:
	"""The compiler in a build dir's .config (CONFIG_CC_VERSION_TEXT), or ''."""
	return _clean(build_config(build_dir or '').get('CC_VERSION_TEXT', ''))


def _stamp(started: str) -> str:
	"""meta's start time as an id part: 2026-12-05T14:13:04Z -> 20261205T141304Z."""
	return re.sub(r'[^0-9TZ]', '', started) or 'unstarted'


def checkout(meta: dict, series: Sequence[str]) -> dict:
	"""The prepared tree; series: the patch names in patches/series, in order."""
	commit = meta.get('tree_commit', '')
	extra = [os.path.basename(p) for p in meta.get('extra_patches') or []]
	comment = (f"{TREE_NAME} {meta.get('debian_version') or '(version unknown)'} + "
		   f'the kunit-rcu series ({len(series)} patches) + overlay')
	if extra:
		comment += f' + EXTRA_PATCHES {", ".join(extra)}'
	out = {'id': object_id(commit or f"unknown-{_stamp(meta.get('started', ''))}"),
	       'origin': ORIGIN, 'tree_name': TREE_NAME, 'comment': _clean(comment), 'valid': True,
	       'misc': {'debian_version': meta.get('debian_version') or '', 'series': list(series),
			'extra_patches': extra}}
	if commit:
		out['git_commit_hash'] = commit
	if not extra:
		out['git_repository_branch'] = BRANCH
	if meta.get('started'):
		out['start_time'] = meta['started']
	return out


def build(meta: dict, checkout_id: str, compiler: str = '', status: Optional[str] = 'PASS',
	  comment: str = '') -> dict:
	"""The kernel of ARCH and CONFIG; status None leaves it out."""
	arch, config = meta['arch'], meta['config']
	commit = meta.get('tree_commit', '')[:12] or 'unknown'
	extra = '-extra' if meta.get('extra_patches') else ''
	local = f"{commit}-{arch}-{config}{extra}-{_stamp(meta.get('started', ''))}"
	out = {'id': object_id(local), 'origin': ORIGIN, 'checkout_id': checkout_id,
	       'architecture': arch, 'config_name': config,
	       'comment': comment or f'kunit.py build: kunitconfig + configs/{config}.config',
	       'misc': {k: meta[k] for k in ('kconfig_add', 'kernel_args', 'qemu_args')
			if k in meta}}
	if status:
		out['status'] = status
	if compiler:
		out['compiler'] = compiler
	if meta.get('started'):
		out['start_time'] = meta['started']
	seconds = (meta.get('timings') or {}).get('build')
	if isinstance(seconds, (int, float)):
		out['duration'] = seconds
	return out


def _test(build_id: str, path: str, status: str, **fields) -> dict:
	local = build_id.split(':', 1)[1]
	return dict({'id': object_id(f'{local}:{path}'), 'origin': ORIGIN, 'build_id': build_id,
		     'path': path, 'status': status}, **fields)


def case_test(c: CaseResult, build_id: str, path: str) -> dict:
	"""A KUnit case: PASS, FAIL, SKIP, or MISS if it never reported."""
	out = _test(build_id, path, CASE_STATUS[c.status],
		    misc={'requirements': c.requirements, 'may_skip': c.may_skip})
	if c.log:
		out['log_excerpt'] = excerpt(c.log)
	if c.status == ktap.Status.MISSING:
		out['comment'] = MISSING_COMMENT
	elif c.reason:
		out['comment'] = _clean(c.reason)
	return out


def run_status(v: Verdict) -> str:
	"""PASS; ERROR for a run that did not finish (crash, hang, truncation); else FAIL."""
	if v.passed:
		return 'PASS'
	return 'FAIL' if v.finished else 'ERROR'


def run_test(v: Verdict, build_id: str, started: str = '') -> dict:
	"""kunit_rcu.run.verdict: the reasons the run failed, its splats, and a crash's console tail."""
	bad = [s.text for s in v.splats if not s.expected]
	lines = list(v.reasons) + ([''] + bad if bad else [])
	if not v.finished and v.tail:
		lines += ['', 'console tail:'] + v.tail
	out = _test(build_id, RUN_PATH, run_status(v),
		    misc={'splats': len(bad), 'other_suites': v.unexpected_suites})
	if lines:
		out['log_excerpt'] = excerpt(lines)
	if started:
		out['start_time'] = started
	return out


def case_tests(cases: Sequence[CaseResult], build_id: str) -> List[dict]:
	"""A test per case; a path two names sanitize to alike gets a suffix (_2, ...)."""
	out, seen = [], set()
	for c in cases:
		path = base = case_path(c.suite, c.case)
		n = 1
		while path in seen:
			n += 1
			path = f'{base}_{n}'
		seen.add(path)
		out.append(case_test(c, build_id, path))
	return out


def document(checkouts: List[dict], builds: List[dict], tests: List[dict]) -> dict:
	return {'version': dict(VERSION), 'checkouts': checkouts, 'builds': builds, 'tests': tests}


def _series() -> List[str]:
	"""The patch names in patches/series; [] if it names a missing file (being edited)."""
	try:
		return [os.path.basename(p) for p in prepare.series_patches()]
	except UserError:
		return []


def from_verdict(v: Verdict, meta: dict, series: Optional[Sequence[str]] = None,
		 compiler: Optional[str] = None) -> dict:
	"""A run as KCIDB data; meta as report.write gets it (arch, config, tree_commit, ...).

	series (patch names) and compiler default to patches/series and the
	build dir's .config.  The build is PASS: a run is judged only once its
	kernel built.
	"""
	co = checkout(meta, _series() if series is None else series)
	b = build(meta, co['id'], compiler_of(meta.get('build_dir')) if compiler is None else compiler)
	tests = case_tests(v.cases, b['id']) + [run_test(v, b['id'], meta.get('started', ''))]
	return document([co], [b], tests)


def figure_tests(figures: Sequence[Figure], build_id: str) -> List[dict]:
	"""Measurements as DONE tests at kunit_rcu.bench.<path>, each with its number."""
	out = []
	for fig in figures:
		number: Dict[str, object] = {'value': fig.value}
		if fig.unit:
			number['unit'] = fig.unit
		test = _test(build_id, f'{BENCH_PATH}.{fig.path}', 'DONE', number=number)
		if fig.comment:
			test['comment'] = _clean(fig.comment)
		out.append(test)
	return out


def from_figures(figures: Sequence[Figure], meta: dict,
		 series: Optional[Sequence[str]] = None) -> dict:
	"""make bench's figures as KCIDB data: the prepared tree, a build for ARCH and CONFIG."""
	co = checkout(meta, _series() if series is None else series)
	b = build(meta, co['id'], status=None,
		  comment=f"make bench ARCH={meta['arch']} CONFIG={meta['config']}: the builds "
			  'and boots it timed')
	return document([co], [b], figure_tests(figures, b['id']))


def write(path: str, doc: dict) -> None:
	"""Writes doc as JSON; what validate() finds in it is logged, not fatal."""
	for problem in validate(doc):
		log(f'{os.path.basename(path)}: {problem}')
	with open(path, 'w') as f:
		json.dump(doc, f, indent=1)
		f.write('\n')


# The validator: the schema's rules for what this module writes.

def _strings(value, where: str) -> List[str]:
	"""NUL in any string, and null anywhere: the schema allows neither."""
	if value is None:
		return [f'{where}: null (omit the field instead)']
	if isinstance(value, str):
		return [f'{where}: contains NUL'] if '\0' in value else []
	if isinstance(value, dict):
		return [p for k, v in value.items() for p in _strings(v, f'{where}.{k}')]
	if isinstance(value, list):
		return [p for i, v in enumerate(value) for p in _strings(v, f'{where}[{i}]')]
	return []


def _check_id(value, where: str, origin: Optional[str] = None) -> List[str]:
	if not isinstance(value, str):
		return [f'{where}: {value!r} is not a string']
	m = _ID.match(value)
	if not m:
		return [f'{where}: {value!r} is not <origin>:<id> with origin [a-z0-9_]+']
	if origin is not None and m.group(1) != origin:
		return [f'{where}: {value!r} does not start with its origin "{origin}:"']
	return []


def _check_number(number, where: str) -> List[str]:
	if not isinstance(number, dict):
		return [f'{where}: not an object']
	out = [f'{where}: unknown field "{k}"' for k in number if k not in ('value', 'unit', 'prefix')]
	value = number.get('value')
	if isinstance(value, bool) or not isinstance(value, (int, float)):
		out.append(f'{where}.value: {value!r} is not a number')
	if 'unit' in number and not isinstance(number['unit'], str):
		out.append(f'{where}.unit: not a string')
	if 'prefix' in number and number['prefix'] not in ('metric', 'binary'):
		out.append(f'{where}.prefix: {number["prefix"]!r} is not metric or binary')
	return out


def _check_fields(obj: dict, kind: str, where: str) -> List[str]:
	"""The formats of the fields this module fills, where obj has them."""
	out = []
	if 'status' in obj and kind != 'checkouts' and obj['status'] not in STATUSES:
		out.append(f'{where}.status: {obj["status"]!r} is not one of {", ".join(STATUSES)}')
	if 'path' in obj and (not isinstance(obj['path'], str) or not _PATH.match(obj['path'])):
		out.append(f'{where}.path: {obj["path"]!r} is not dot-separated [a-zA-Z0-9_-]+ names')
	if 'git_commit_hash' in obj and not _COMMIT.match(str(obj['git_commit_hash'])):
		out.append(f'{where}.git_commit_hash: {obj["git_commit_hash"]!r} is not a full hash')
	if 'architecture' in obj and not _ARCH.match(str(obj['architecture'])):
		out.append(f'{where}.architecture: {obj["architecture"]!r} is not [a-z0-9_]*')
	if 'start_time' in obj and not _TIME.match(str(obj['start_time'])):
		out.append(f'{where}.start_time: {obj["start_time"]!r} is not an RFC 3339 date-time')
	if 'valid' in obj and not isinstance(obj['valid'], bool):
		out.append(f'{where}.valid: not a boolean')
	if 'duration' in obj and (isinstance(obj['duration'], bool) or
				  not isinstance(obj['duration'], (int, float))):
		out.append(f'{where}.duration: not a number')
	excerpt_ = obj.get('log_excerpt')
	if excerpt_ is not None and (not isinstance(excerpt_, str) or len(excerpt_) > EXCERPT_MAX):
		out.append(f'{where}.log_excerpt: not a string of at most {EXCERPT_MAX} characters')
	if 'number' in obj:
		out += _check_number(obj['number'], f'{where}.number')
	if 'misc' in obj and not isinstance(obj['misc'], dict):
		out.append(f'{where}.misc: not an object')
	return out


def _check_object(obj, kind: str, where: str) -> List[str]:
	if not isinstance(obj, dict):
		return [f'{where}: not an object']
	out = [f'{where}: no "{k}" (required)' for k in REQUIRED[kind] if k not in obj]
	out += [f'{where}: unknown field "{k}"' for k in obj if k not in FIELDS[kind]]
	origin = obj.get('origin')
	if 'origin' in obj and (not isinstance(origin, str) or not _ORIGIN.match(origin)):
		out.append(f'{where}.origin: {origin!r} does not match [a-z0-9_]+')
		origin = None
	if 'id' in obj:
		out += _check_id(obj['id'], f'{where}.id', origin)
	if kind in PARENT and PARENT[kind][0] in obj:
		out += _check_id(obj[PARENT[kind][0]], f'{where}.{PARENT[kind][0]}')
	return out + _check_fields(obj, kind, where) + _strings(obj, where)


def _check_version(version) -> List[str]:
	if not isinstance(version, dict):
		return ['version: missing or not an object']
	out = [f'version: unknown field "{k}"' for k in version if k not in ('major', 'minor')]
	if version.get('major') != VERSION['major']:
		out.append(f'version.major: {version.get("major")!r}, not {VERSION["major"]}')
	minor = version.get('minor', 0)
	if isinstance(minor, bool) or not isinstance(minor, int) or not 0 <= minor <= VERSION['minor']:
		out.append(f'version.minor: {minor!r} is not 0..{VERSION["minor"]}')
	return out


def validate(doc) -> List[str]:
	"""The problems of a KCIDB v5.3 document: [] if none.

	Checks the version; each checkout, build and test against its required
	fields, known fields, ids (<origin>:<id>, the object's own origin),
	status, path and the formats of the other fields this module writes;
	NUL and null anywhere.  Stricter than the schema on purpose: ids unique
	per kind, and every build's checkout and test's build in the document.
	"""
	if not isinstance(doc, dict):
		return ['the document is not an object']
	out = [f'unknown top-level field "{k}"' for k in doc if k not in TOP_LEVEL]
	out += _check_version(doc.get('version'))
	ids: Dict[str, set] = {}
	for kind in ('checkouts', 'builds', 'tests'):
		objs = doc.get(kind, [])
		if not isinstance(objs, list):
			out.append(f'{kind}: not a list')
			continue
		ids[kind] = set()
		for i, obj in enumerate(objs):
			where = f'{kind}[{i}]'
			out += _check_object(obj, kind, where)
			if not isinstance(obj, dict):
				continue
			if isinstance(obj.get('id'), str):
				if obj['id'] in ids[kind]:
					out.append(f'{where}.id: {obj["id"]!r} used twice')
				ids[kind].add(obj['id'])
			if kind in PARENT:
				field, parent = PARENT[kind]
				if isinstance(obj.get(field), str) and obj[field] not in ids.get(parent, set()):
					out.append(f'{where}.{field}: {obj[field]!r} is not in {parent}')
	return out
