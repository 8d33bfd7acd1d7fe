# SPDX-License-Identifier: GPL-2.0
"""kunit_tool's own unit tests, in the prepared tree and in pristine 6.1.

Patch 0002 changes tools/testing/kunit/ (the QEMU guests' CPU count and
their extra arguments).  Its kunit_tool_test.py must not fail anything
that passes with Debian's pristine tools/testing/kunit/, which itself
fails some (its backported tests expect a newer kunit_tool).
"""

import os
import re
import sys
import tempfile
from typing import Optional, Set, Tuple

from . import prepare
from .common import git, log, run, tree_dir

KUNIT_DIR = 'tools/testing/kunit'
_RAN = re.compile(r'^Ran (\d+) tests? in ', re.M)
_BAD = re.compile(r'^(?:ERROR|FAIL): (\w+) \((?:__main__\.)?([\w.]+)\)', re.M)


def results(kunit_dir: str) -> Tuple[int, Set[str]]:
	"""Runs kunit_tool_test.py in kunit_dir: (tests run, names of those that failed)."""
	proc = run([sys.executable, 'kunit_tool_test.py'], cwd=kunit_dir, check=False)
	m = _RAN.search(proc.stdout)
	if not m:
		tail = '\n'.join(proc.stdout.splitlines()[-20:])
		raise RuntimeError(f'kunit_tool_test.py in {kunit_dir} ran no test:\n{tail}')
	# "test (__main__.Class.test)" from Python 3.11 on, "test (__main__.Class)" before it.
	return int(m.group(1)), {where if where.endswith('.' + name) else f'{where}.{name}'
				 for name, where in _BAD.findall(proc.stdout)}


def export_pristine(tree: str, dest: str) -> str:
	"""Writes pristine 6.1's tools/testing/kunit/ under dest; returns that directory."""
	for path in git(tree, 'ls-tree', '-r', '--name-only', prepare.PRISTINE, '--',
			KUNIT_DIR).split():
		out = os.path.join(dest, path)
		os.makedirs(os.path.dirname(out), exist_ok=True)
		with open(out, 'w') as f:
			f.write(git(tree, 'show', f'{prepare.PRISTINE}:{path}'))
	return os.path.join(dest, KUNIT_DIR)


def check(tree: Optional[str] = None) -> Tuple[int, int, int]:
	"""(passed, failed only with the series, failed in pristine too) of the prepared tree's run."""
	tree = tree or tree_dir()
	ran, bad = results(os.path.join(tree, KUNIT_DIR))
	with tempfile.TemporaryDirectory() as tmp:
		pristine_ran, pristine_bad = results(export_pristine(tree, tmp))
	new = sorted(bad - pristine_bad)
	known = bad & pristine_bad
	for name in new:
		log(f'[kunit_tool] {name} fails with the series and passes on pristine 6.1')
	log(f'[kunit_tool] kunit_tool_test.py: {ran - len(bad)} of {ran} pass in the prepared '
	    f'tree, {pristine_ran - len(pristine_bad)} of {pristine_ran} in pristine 6.1; '
	    f'{len(known)} fail in both (counted as skipped): {", ".join(sorted(known)) or "none"}')
	return ran - len(bad), len(new), len(known)
