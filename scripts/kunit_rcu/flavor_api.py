# SPDX-License-Identifier: GPL-2.0
"""FUT-6 on the prepared tree's headers: the folded bh and sched flavor APIs stay gone.

Linux folded the bh and sched flavors into vanilla RCU (v4.20-v5.0):
synchronize_rcu() now waits for rcu_read_lock_bh() and preempt-disabled
regions alike (BH-1, SCHED-1), and the flavors' update-side APIs went
away.  The check reads the tree's include/ (every *.h, comments and string
literals blanked out) and fails on any identifier of REMOVED, naming its
file and line: a header that declares, defines or uses one again brings a
flavor back.  Each read-side API of KEPT must still be defined (a #define
or a function declaration or definition) in include/linux/rcupdate.h or
another include/linux/*.h: those are how readers of the old flavors are
written on vanilla RCU.  No kernel is built; the result goes to
results/<arch>-default/flavor-api.json for every arch, as it is the same
tree on all of them.
"""

import json
import os
import re
import time
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from . import locks
from .common import load_tooling_result
from .common import ARCHES, build_dir, log, results_dir, tree_dir

NAME = 'flavor_api'
COVERS = ('FUT-6',)
# The requirements whose guarantees vanilla RCU carries since the folding.
LINKS = ('BH-1', 'SCHED-1')
# Written into results/<arch>-default/ for each arch; the matrix reads it there.
RESULT_FILE = 'flavor-api.json'

# Update-side and flavor-specific APIs of the bh and sched flavors that no
# longer exist (each absent from the 6.1 tree, checked by grep): the
# grace-period waits, callbacks and barriers v4.20-v5.0 removed, and the
# per-flavor counters and forcing functions that went with rcu_bh_state
# and rcu_sched_state.
REMOVED = (
	'synchronize_rcu_bh', 'synchronize_rcu_bh_expedited', 'call_rcu_bh', 'rcu_barrier_bh',
	'synchronize_sched', 'synchronize_sched_expedited', 'call_rcu_sched',
	'rcu_barrier_sched', 'get_state_synchronize_sched', 'cond_synchronize_sched',
	'rcu_batches_completed_bh', 'rcu_batches_completed_sched',
	'rcu_exp_batches_completed_sched', 'rcu_bh_get_gp_seq', 'rcu_sched_get_gp_seq',
	'rcu_bh_force_quiescent_state', 'rcu_sched_force_quiescent_state',
)
# Read-side APIs of the old flavors that must stay: vanilla RCU's grace
# periods now wait for the readers they mark.
KEPT = (
	'rcu_read_lock_bh', 'rcu_read_unlock_bh', 'rcu_read_lock_sched',
	'rcu_read_unlock_sched', 'rcu_read_lock_sched_notrace', 'rcu_dereference_bh',
	'rcu_dereference_sched', 'rcu_read_lock_bh_held', 'rcu_read_lock_sched_held',
)
RCUPDATE = 'include/linux/rcupdate.h'

# A comment, or a string or character literal (so that "/*" in one opens no comment).
_LEXEME = re.compile(r'//(?:[^\n\\]|\\.)*|/\*.*?(?:\*/|\Z)|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'',
		     re.S)
# Words before a name that make "name(" a call, not a declaration.
_NOT_A_TYPE = {'return', 'if', 'else', 'while', 'for', 'switch', 'case', 'goto', 'do',
	       'sizeof', 'typeof', '__typeof__', 'defined'}


def strip_comments(text: str) -> str:
	"""text with comments and string/char literals blanked; newlines and so line numbers stay.

	A comment becomes a space, a literal its quotes; either keeps its newlines.
	"""
	def blank(m: re.Match) -> str:
		s = m.group(0)
		lines = '\n' * s.count('\n')
		if s[0] in '"\'':
			return s[0] + lines + s[-1]
		return ' ' + lines
	return _LEXEME.sub(blank, text)


def _words(names: Sequence[str]) -> re.Pattern:
	return re.compile(r'\b(' + '|'.join(sorted(map(re.escape, names), key=len, reverse=True))
			  + r')\b')


def uses(text: str, names: Sequence[str]) -> Iterator[Tuple[int, str]]:
	"""(line number, name) of each identifier of names in a C text, outside comments."""
	pattern = _words(names)
	if not pattern.search(text):
		return
	for num, line in enumerate(strip_comments(text).splitlines(), 1):
		for m in pattern.finditer(line):
			yield num, m.group(1)


def definitions(text: str, name: str) -> List[int]:
	"""Line numbers where a C text defines name: "#define name", or "type name(" (declared or defined)."""
	code = strip_comments(text)
	define = re.compile(rf'^[ \t]*#[ \t]*define[ \t]+(?P<name>{re.escape(name)})\b', re.M)
	func = re.compile(rf'(?:^|[;{{}}])\s*(?P<type>(?:[A-Za-z_]\w*[\s*]+)+?)'
			  rf'(?P<name>{re.escape(name)})\s*\(', re.M)
	found = list(define.finditer(code)) + [m for m in func.finditer(code)
					       if not set(m.group('type').split()) & _NOT_A_TYPE]
	return sorted(code.count('\n', 0, m.start('name')) + 1 for m in found)


def _headers(include: str) -> Iterator[str]:
	"""Every *.h under include, in a stable order (symlinks not followed)."""
	for root, dirs, files in os.walk(include):
		dirs.sort()
		for name in sorted(files):
			if name.endswith('.h'):
				yield os.path.join(root, name)


def _read(path: str) -> str:
	with open(path, errors='replace') as f:
		return f.read()


def check(tree: str) -> dict:
	"""FUT-6 on a kernel tree's include/: the result, as written to RESULT_FILE."""
	start = time.monotonic()
	problems: List[str] = []
	defined: Dict[str, str] = {}
	include = os.path.join(tree, 'include')
	if not os.path.isfile(os.path.join(tree, RCUPDATE)):
		problems.append(f'no {RCUPDATE} in {tree}: is the tree prepared (make prepare)?')
	else:
		for path in _headers(include):
			rel = os.path.relpath(path, tree)
			for num, name in uses(_read(path), REMOVED):
				problems.append(f'{rel}:{num}: {name} is defined/used again')
		linux = os.path.join(include, 'linux')
		others = sorted(os.path.join(linux, f) for f in os.listdir(linux)
				if f.endswith('.h') and f != 'rcupdate.h')
		texts: Dict[str, str] = {}
		for name in KEPT:
			for path in [os.path.join(tree, RCUPDATE)] + others:
				if path not in texts:
					texts[path] = _read(path)
				if not re.search(rf'\b{name}\b', texts[path]):
					continue
				lines = definitions(texts[path], name)
				if lines:
					defined[name] = f'{os.path.relpath(path, tree)}:{lines[0]}'
					break
			else:
				problems.append(f'{name} is not defined in {RCUPDATE} nor any other '
						'include/linux/*.h: the read-side API whose readers '
						'vanilla RCU now waits for is gone')
	return {'check': NAME, 'covers': list(COVERS), 'links': list(LINKS),
		'status': 'failed' if problems else 'passed', 'problems': problems,
		'removed': list(REMOVED), 'kept': list(KEPT), 'defined': defined, 'tree': tree,
		'seconds': round(time.monotonic() - start, 1)}


def write_result(result: dict, arch: str) -> str:
	"""results/<arch>-default/flavor-api.json, which the matrix reads."""
	outdir = results_dir(arch, 'default', False)
	os.makedirs(outdir, exist_ok=True)
	path = os.path.join(outdir, RESULT_FILE)
	with open(path, 'w') as f:
		json.dump(result, f, indent=1)
	return path


def check_tree() -> Tuple[int, int, int]:
	"""make check's "flavor APIs (FUT-6)" line: one check of the prepared tree, its result on every arch."""
	tree = tree_dir()
	with locks.tree():
		result = check(tree)
	for arch in sorted(ARCHES):
		# The default build dir's lock also guards its results dir.
		with locks.build(build_dir(arch, 'default', False)):
			write_result(result, arch)
	for problem in result['problems']:
		log('FAIL: ' + problem)
	if result['status'] == 'passed':
		log(f'flavor APIs: none of {len(REMOVED)} removed bh/sched APIs in {tree}/include, '
		    f'{len(KEPT)} read-side APIs defined ({result["seconds"]:.0f}s)')
		return 1, 0, 0
	return 0, 1, 0


def load_result(arch: str) -> Optional[dict]:
	"""The check's result in results/<arch>-default; None if not run since the last make run."""
	return load_tooling_result(arch, RESULT_FILE)
