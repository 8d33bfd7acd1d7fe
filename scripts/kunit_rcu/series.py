# SPDX-License-Identifier: GPL-2.0
"""make series: the whole change as git format-patch files, and its checks.

The exported series must git am onto pristine 6.1 and give exactly the
prepared tree, every patch in it must pass checkpatch --strict, and the
kernel-doc of every C file the overlay adds must parse cleanly
(scripts/kernel-doc -none).
"""

import fnmatch
import os
import re
import shutil
import tempfile
from typing import List, Tuple

from .common import apply_dir, git, log, run, tree_dir
from .prepare import ensure_worktree, reset_worktree, apply_patches, overlay_files, series_patches


def export(outdir: str) -> List[str]:
	"""git format-patch of everything from pristine to the prepared HEAD."""
	shutil.rmtree(outdir, ignore_errors=True)
	os.makedirs(outdir)
	git(tree_dir(), 'format-patch', '-q', '--no-signature', '-o', outdir, 'pristine..HEAD')
	return [os.path.join(outdir, n) for n in sorted(os.listdir(outdir))]


def verify_round_trip(patches: List[str]) -> Tuple[bool, str]:
	"""git am the exported patches onto pristine; the tree must match src/."""
	path = apply_dir()
	ensure_worktree(path)
	reset_worktree(path, 'pristine')
	apply_patches(path, patches, 'exported')
	got = git(path, 'rev-parse', 'HEAD^{tree}').strip()
	want = git(tree_dir(), 'rev-parse', 'HEAD^{tree}').strip()
	if got != want:
		return False, f'exported series gives tree {got[:12]}, prepared tree is {want[:12]}'
	return True, f'{len(patches)} patches git am onto pristine and give the prepared tree'


def _maintained(path: str, patterns: List[str]) -> bool:
	for pat in patterns:
		if pat.endswith('/') and path.startswith(pat):
			return True
		if fnmatch.fnmatchcase(path, pat):
			return True
	return False


def patch_files(patch: str) -> List[Tuple[str, bool, str]]:
	"""(path, whether the patch adds it, its added and removed lines) per file it touches."""
	out: List[Tuple[str, bool, str]] = []
	with open(patch, errors='replace') as f:
		text = f.read()
	for block in re.split(r'^diff --git ', text, flags=re.M)[1:]:
		m = re.match(r'a/(\S+) b/(\S+)', block)
		if not m:
			continue
		added = bool(re.match(r'[^\n]*\n(?:(?:old|new|deleted|similarity|index)[^\n]*\n)*?'
				      r'new file mode', block))
		changed = '\n'.join(l[1:] for l in block.splitlines()
				    if l[:1] in '+-' and not l.startswith(('+++', '---')))
		out.append((m.group(2), added, changed))
	return out


def new_files_maintained(patch: str) -> bool:
	"""Does MAINTAINERS (pristine) already cover every file the patch adds?"""
	added = [path for path, new, _ in patch_files(patch) if new]
	if not added:
		return False
	patterns = [l[2:].strip() for l in git(tree_dir(), 'show', 'pristine:MAINTAINERS').splitlines()
		    if l.startswith('F:')]
	return all(_maintained(p, patterns) for p in added)


def checkpatch(patch: str, overlay: bool = False) -> Tuple[bool, str]:
	"""checkpatch.pl --strict from the prepared tree on one patch.

	"does MAINTAINERS need updating?" is ignored for a patch whose new
	files all lie where MAINTAINERS already has an F: entry (the overlay
	commit's kernel/rcu/ suites, kernel/gcov/console_dump.c).
	"""
	ignore = ['--ignore', 'FILE_PATH_CHANGES'] if overlay or new_files_maintained(patch) else []
	# spdxcheck.py needs Debian's python3-ply, so /usr/bin/python3 first.
	env = dict(os.environ, PATH='/usr/bin:' + os.environ.get('PATH', ''))
	proc = run(['perl', 'scripts/checkpatch.pl', '--strict', '--terse', '--no-summary',
		    '--show-types', *ignore, patch], cwd=tree_dir(), check=False, env=env)
	problems = [l for l in proc.stdout.splitlines() if l.strip()]
	return proc.returncode == 0 and not problems, '\n'.join(problems[:20])


def kerneldoc() -> Tuple[bool, str]:
	"""scripts/kernel-doc -none on the overlay's .c and .h files, in the prepared tree."""
	files = [f for f in overlay_files() if f.endswith(('.c', '.h'))]
	proc = run(['perl', 'scripts/kernel-doc', '-none', *files], cwd=tree_dir(), check=False)
	problems = [l for l in proc.stdout.splitlines() if l.strip()]
	return proc.returncode == 0 and not problems, '\n'.join(problems[:20])


def _has_overlay() -> bool:
	return len(git(tree_dir(), 'rev-list', 'pristine..HEAD').split()) > len(series_patches())


def check() -> Tuple[int, int, int]:
	"""Round trip plus checkpatch on each exported patch, as counted checks."""
	passed = failed = 0
	with tempfile.TemporaryDirectory() as out:
		patches = export(out)
		ok, why = verify_round_trip(patches)
		log(f'[series] round trip: {"ok" if ok else "FAILED"}: {why}')
		passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
		for i, patch in enumerate(patches):
			ok, why = checkpatch(patch, overlay=i == len(patches) - 1 and _has_overlay())
			name = os.path.basename(patch)
			log(f'[series] checkpatch --strict {name}: {"clean" if ok else "FAILED"}')
			if not ok:
				print('\n'.join('    ' + l for l in why.splitlines()))
			passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
	ok, why = kerneldoc()
	log(f'[series] kernel-doc -none on the overlay: {"clean" if ok else "FAILED"}')
	if not ok:
		print('\n'.join('    ' + l for l in why.splitlines()))
	passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
	return passed, failed, 0
