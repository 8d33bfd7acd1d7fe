# SPDX-License-Identifier: GPL-2.0
"""Prepares the kernel tree: pristine Debian source + patches/series + overlay.

Layout under $KUNIT_RCU_CACHE/<debian version>/:
  src/      the prepared tree (branch kunit-rcu, tag pristine); users run kunit.py here
  apply/    a worktree where the series is applied with git am and the overlay
            committed; src/ then checks the result out, so only files whose
            content changed get a new mtime and rebuilds stay incremental
  scratch/  a worktree for EXTRA_PATCHES experiments (src/ is never touched)

The kunit.py build dirs .kunit* are inside src/ and scratch/ (see
common.build_dir); git ignores them (info/exclude), so resetting and
cleaning a tree keeps them.  prepare holds the tree lock, prepare_scratch
the scratch lock too (see locks).
"""

import hashlib
import os
import shutil
from typing import Dict, Iterable, List, Tuple

from . import locks, packages
from .common import (ARCHES, OVERLAY_DIRS, REPO, TARBALL, UserError, apply_dir, build_dir,
		     git, log, run, scratch_dir, tree_dir, version_dir)

# The tag of Debian's tree as extracted, before the series.
PRISTINE = 'pristine'

STAMP_FORMAT = '4'


def series_patches(repo: str = REPO) -> List[str]:
	"""Returns the patch paths listed in patches/series, in order."""
	path = os.path.join(repo, 'patches', 'series')
	if not os.path.isfile(path):
		return []
	out = []
	with open(path) as f:
		for lineno, line in enumerate(f, 1):
			name = line.split('#', 1)[0].strip()
			if not name:
				continue
			name = name.split()[0]
			full = os.path.join(repo, 'patches', name)
			if not os.path.isfile(full):
				raise UserError(f'patches/series line {lineno} names "{name}", '
						'which is not in patches/: add the file or fix the line')
			out.append(full)
	return out


def overlay_files(repo: str = REPO) -> List[str]:
	"""Repository-relative paths of the files copied onto the tree."""
	out = []
	for d in OVERLAY_DIRS:
		top = os.path.join(repo, d)
		for root, dirs, files in os.walk(top):
			dirs.sort()
			for name in sorted(files):
				if name == 'README.md':
					continue  # documents the directory in this repository only
				out.append(os.path.relpath(os.path.join(root, name), repo))
	return out


def kunitconfig_path(repo: str = REPO) -> str:
	return os.path.join(repo, 'kunitconfig')


def arch_kunitconfigs(repo: str = REPO) -> Dict[str, str]:
	"""arch -> path of kunitconfig.<arch>, for the arch files that exist.

	They hold the lines of options that exist on one arch only (kunit.py
	fails a build whose .config lacks a line of its kunitconfig).  A
	kunitconfig.<name> whose name is no arch is a UserError: it would
	silently never be used.
	"""
	out = {}
	for name in sorted(os.listdir(repo)):
		if not name.startswith('kunitconfig.'):
			continue
		arch = name[len('kunitconfig.'):]
		if arch not in ARCHES:
			raise UserError(f'{name} in {repo}: "{arch}" is not a known arch '
					f'({", ".join(sorted(ARCHES))}); a per-arch kunitconfig is '
					'named kunitconfig.<arch>: rename or remove the file')
		out[arch] = os.path.join(repo, name)
	return out


def kunitconfig_paths(arch: str, repo: str = REPO) -> List[str]:
	"""The kunitconfig files a kernel for arch is made of: kunitconfig, then kunitconfig.<arch> if any."""
	out = [kunitconfig_path(repo)]
	own = arch_kunitconfigs(repo).get(arch)
	if own:
		out.append(own)
	return out


def kunitconfig_text(arch: str, repo: str = REPO) -> str:
	"""kunitconfig and kunitconfig.<arch> concatenated: one .kunitconfig for plain kunit.py."""
	parts = []
	for path in kunitconfig_paths(arch, repo):
		with open(path) as f:
			text = f.read()
		parts.append(text if text.endswith('\n') or not text else text + '\n')
	return ''.join(parts)


def input_digest(repo: str = REPO, version: str = '') -> str:
	"""A digest of everything the prepared tree is made of."""
	h = hashlib.sha256()
	h.update(f'format {STAMP_FORMAT} version {version}\n'.encode())
	items: List[Tuple[str, str]] = [('series', os.path.join(repo, 'patches', 'series')),
					('message', os.path.join(repo, 'patches', 'overlay-message'))]
	items += [('patch', p) for p in series_patches(repo)]
	items += [('overlay ' + rel, os.path.join(repo, rel)) for rel in overlay_files(repo)]
	items.append(('kunitconfig', kunitconfig_path(repo)))
	items += [('kunitconfig', path) for path in arch_kunitconfigs(repo).values()]
	for tag, path in items:
		h.update(f'{tag} {os.path.relpath(path, repo)}\n'.encode())
		if os.path.isfile(path):
			with open(path, 'rb') as f:
				h.update(hashlib.sha256(f.read()).digest())
	return h.hexdigest()


def _read(path: str) -> str:
	try:
		with open(path) as f:
			return f.read().strip()
	except FileNotFoundError:
		return ''


def _write(path: str, text: str) -> None:
	os.makedirs(os.path.dirname(path), exist_ok=True)
	tmp = path + '.tmp'
	with open(tmp, 'w') as f:
		f.write(text + '\n')
	os.replace(tmp, path)


def _extract_pristine(version: str) -> None:
	top = version_dir()
	src = tree_dir()
	tmp = os.path.join(top, 'src.tmp')
	with locks.scratch():  # scratch/ is a worktree of src/: it goes too
		for d in (src, tmp, apply_dir(), scratch_dir()):
			shutil.rmtree(d, ignore_errors=True)
	os.makedirs(tmp)
	log(f'extracting {TARBALL} ({version}) into {src}')
	run(['tar', '-C', tmp, '--strip-components=1', '-xf', TARBALL])
	if not os.path.isfile(os.path.join(tmp, 'Makefile')):
		raise UserError(f'{TARBALL} did not contain a kernel tree: reinstall it with '
				f'apt-get install --reinstall linux-source-6.1')
	git(tmp, 'init', '-q', '-b', 'kunit-rcu')
	git(tmp, 'config', 'gc.auto', '0')
	# Debian's .gitignore ignores everything at the top level: add with -f.
	git(tmp, 'add', '-A', '-f')
	git(tmp, 'commit', '-q', '-m', f'linux-source-6.1 {version} (pristine Debian source)')
	git(tmp, 'tag', PRISTINE)
	os.rename(tmp, src)
	_write(os.path.join(top, 'stamps', 'pristine'), version)


# kunit.py build dirs inside a tree (common.build_dir): never tracked, never cleaned.
BUILD_DIR_PATTERN = '/.kunit*/'


def exclude_build_dirs(tree: str) -> None:
	"""Makes git in tree and its worktrees ignore the build dirs, whatever .gitignore says.

	git clean -f -d (without -x) then keeps them, and so does a reset.
	"""
	common = git(tree, 'rev-parse', '--git-common-dir').strip()
	path = os.path.join(tree, common, 'info', 'exclude')
	text = ''
	if os.path.isfile(path):
		with open(path) as f:
			text = f.read()
	if BUILD_DIR_PATTERN not in text.splitlines():
		os.makedirs(os.path.dirname(path), exist_ok=True)
		with open(path, 'a') as f:
			f.write(('' if not text or text.endswith('\n') else '\n') +
				'# kunit-rcu: kunit.py build dirs\n' + BUILD_DIR_PATTERN + '\n')


def ensure_worktree(path: str) -> None:
	if os.path.isfile(os.path.join(path, '.git')):
		return
	shutil.rmtree(path, ignore_errors=True)
	git(tree_dir(), 'worktree', 'prune')
	log(f'creating worktree {path}')
	git(tree_dir(), 'worktree', 'add', '-q', '--detach', path, 'pristine')


def reset_worktree(path: str, commit: str) -> None:
	git(path, 'am', '--abort', check=False)
	git(path, 'reset', '-q', '--hard')
	git(path, 'checkout', '-q', '--detach', commit)
	git(path, 'clean', '-q', '-f', '-d')


def rejected_hunk(tree: str, patch: str) -> str:
	"""What git says about the first hunk of patch that does not apply."""
	proc = run(['git', '-C', tree, 'apply', '--check', '-v', patch], check=False)
	lines = [l for l in proc.stdout.splitlines() if not l.startswith('Checking patch')]
	return '\n'.join('    ' + l for l in lines[:25])


def apply_patches(tree: str, patches: Iterable[str], what: str) -> None:
	"""git am (three-way) each patch as one commit; names the one that fails."""
	for patch in patches:
		if not os.path.isfile(patch):
			raise UserError(f'{what} patch {patch} does not exist (give an absolute path)')
		with open(patch, errors='replace') as f:
			head = f.read(4096)
		is_mail = head.startswith('From ') or '\nSubject:' in head or head.startswith('Subject:')
		if is_mail:
			proc = run(['git', '-C', tree, 'am', '-q', '-3', patch], check=False,
				   env=_git_env())
		else:
			proc = run(['git', '-C', tree, 'apply', '-3', '--index', patch], check=False)
			if proc.returncode == 0:
				proc = run(['git', '-C', tree, 'commit', '-q', '-m',
					    'experiment: ' + os.path.basename(patch)], check=False, env=_git_env())
		if proc.returncode != 0:
			git(tree, 'am', '--abort', check=False)
			git(tree, 'reset', '-q', '--hard')
			raise UserError(f'{what} patch {os.path.basename(patch)} does not apply '
					f'({patch}):\n{rejected_hunk(tree, patch)}\n  ' + _HOW_TO_FIX.get(
						what, 'rebase it onto pristine linux-source-6.1 or the '
						'prepared tree (README: "Adding a test case next to a fix")'))


_HOW_TO_FIX = {
	'series': 'refresh it against linux-source-6.1 plus the patches before it in '
		  'patches/series (git am them in a pristine tree, fix, git format-patch)',
}


def _git_env() -> dict:
	return dict(os.environ, GIT_COMMITTER_NAME='kunit-rcu',
		    GIT_COMMITTER_EMAIL='kunit-rcu@localhost')


def _compose(version: str) -> str:
	"""Builds series + overlay commits in apply/; returns the final commit."""
	path = apply_dir()
	ensure_worktree(path)
	reset_worktree(path, 'pristine')
	apply_patches(path, series_patches(), 'series')
	files = overlay_files()
	for rel in files:
		dst = os.path.join(path, rel)
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		shutil.copyfile(os.path.join(REPO, rel), dst)
	# The top-level kunitconfig also becomes kernel/rcu/.kunitconfig, so
	# "kunit.py run --kunitconfig=kernel/rcu" works in any tree the series is on.
	shutil.copyfile(kunitconfig_path(), os.path.join(path, 'kernel/rcu/.kunitconfig'))
	git(path, 'add', '-f', '--', *files, 'kernel/rcu/.kunitconfig')
	if git(path, 'status', '--porcelain', '--untracked-files=no').strip():
		with open(os.path.join(REPO, 'patches', 'overlay-message')) as f:
			msg = f.read()
		run(['git', '-C', path, 'commit', '-q', '-s', '-m', msg], env=_overlay_env())
	return git(path, 'rev-parse', 'HEAD').strip()


def _overlay_env() -> dict:
	env = _git_env()
	env.update(GIT_AUTHOR_NAME='kunit-rcu', GIT_AUTHOR_EMAIL='kunit-rcu@localhost')
	return env


def prepare(force: bool = False) -> str:
	"""Makes tree_dir() match the repository; returns its HEAD commit."""
	with locks.tree():
		return _prepare(force)


def _prepare(force: bool) -> str:
	version = packages.check_source_version()
	top = version_dir()
	if _read(os.path.join(top, 'stamps', 'pristine')) != version or \
	   not os.path.isdir(os.path.join(tree_dir(), '.git')):
		_extract_pristine(version)
	src = tree_dir()
	exclude_build_dirs(src)
	digest = input_digest(version=version)
	stamp = os.path.join(top, 'stamps', 'prepared')
	old = _read(stamp).split()
	head = git(src, 'rev-parse', 'HEAD').strip()
	dirty = git(src, 'status', '--porcelain', '--untracked-files=no').strip()
	if old and old[0] == digest and old[1] == head and not dirty:
		_write_default_kunitconfig()
		log(f'tree is up to date: {src} ({head[:12]})')
		return head
	if (dirty or (old and old[1] != head)) and not force:
		raise UserError(f'the prepared tree {src} has changes that are not in this repository'
				f' ({"uncommitted edits" if dirty else "commits on top of the series"}).\n'
				'  keep them as a patch (git -C ' + src + ' diff > /tmp/fix.patch) and use '
				'EXTRA_PATCHES=/tmp/fix.patch, or move them into patches/;\n'
				'  then run again with FORCE=1 to reset the tree to the repository')
	new = _compose(version)
	git(src, 'reset', '-q', '--hard')
	git(src, 'checkout', '-q', '-B', 'kunit-rcu', new)
	_write_default_kunitconfig()
	_write(stamp, f'{digest} {new}')
	log(f'prepared {src}: pristine + {len(series_patches())} patches + overlay ({new[:12]})')
	return new


def _write_default_kunitconfig(repo: str = REPO) -> None:
	"""Plain kunit.py uses <build_dir>/.kunitconfig: seed make run's default build dirs.

	Without it, kunit.py would copy its own default.config (all tests)
	there and reconfigure the build dir that make run shares.  Each gets
	kunitconfig followed by kunitconfig.<arch>: the options make run
	passes as two --kunitconfig arguments.
	"""
	for arch in ARCHES:
		want = kunitconfig_text(arch, repo)
		dst = os.path.join(build_dir(arch, 'default', False), '.kunitconfig')
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		if _read(dst) != want.strip():
			with open(dst, 'w') as f:
				f.write(want)


def prepare_scratch(extra: List[str]) -> str:
	"""Checks the prepared tree out in scratch/ and applies the extra patches.

	The caller keeps the scratch lock until it is done with the tree (run
	does, through boot); the build dirs in scratch/ survive the reset.
	"""
	with locks.tree(), locks.scratch():
		head = git(tree_dir(), 'rev-parse', 'HEAD').strip()
		path = scratch_dir()
		exclude_build_dirs(tree_dir())
		ensure_worktree(path)
		reset_worktree(path, head)
		apply_patches(path, extra, 'EXTRA_PATCHES')
		log(f'scratch tree {path}: prepared tree + {len(extra)} extra patch(es)')
		return git(path, 'rev-parse', 'HEAD').strip()
