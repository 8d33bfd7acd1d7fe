# SPDX-License-Identifier: GPL-2.0
"""make series-build: each patch builds on its own and leaves production objects alone.

A production configuration is the arch's make run .config with every
option the series adds turned off and with lock debugging off (it puts
__LINE__ into code: a hook call that moves later lines would show up as
a change that is not one).  In a worktree of its own (bisect/, next to
src/ and scratch/), at pristine and then at each patch of patches/series
in order, with that configuration, kbuild compiles the objects the
series can affect:

- every object of a directory where the series modifies a .c or .h file
  (kernel/rcu/ for rcu.h and tree.c), the directory as kbuild builds it;
- every object of a directory whose Makefile the series modifies, if it
  is a small one (kernel/gcov/, kernel/entry/); in a large one, each
  object the Makefile names in an added or changed line
  (GCOV_PROFILE_traps.o := ...) when its source exists at pristine.

Files of the other arch are left out.

A patch "builds" when that succeeds; it "keeps production objects" when
every such object equals the pristine one section by section (contents
and relocations), except sections that record source line numbers
(__bug_table, __dyndbg) and debug info.  The full test configuration at
the top of the series is what make run builds.

A fix to the kernel changes production code on purpose: patches/
production-changes lists such patches, '<patch file name>: <reason>'.
A listed patch must change a production object on at least one arch, and the
patches after it are compared with the objects as it left them.
"""

import os
import re
import shutil
import subprocess
import time
from typing import Dict, List, Optional, Sequence, Set, Tuple

from . import kbuild, kconfig_check, locks, prepare, series
from .common import (ARCHES, REPO, UserError, build_dir, check_arch, git, log, patch_reasons,
		     tree_dir, version_dir)

# Off in the production configuration besides the series' own options.
LINE_NUMBER_DEBUG = ('PROVE_LOCKING', 'DEBUG_ATOMIC_SLEEP', 'DEBUG_LOCK_ALLOC', 'LOCKDEP',
		     'PROVE_RCU', 'DYNAMIC_DEBUG', 'DYNAMIC_DEBUG_CORE')
# Sections left out of the comparison: source line numbers and debug info.
IGNORED_SECTIONS = re.compile(r'^(\.rela?)?(__bug_table|__dyndbg.*|\.debug_.*|\.comment|'
			      r'\.note\.GNU-stack)$')
# A modified Makefile's whole directory is built when it has at most this many sources.
SMALL_DIR = 20
# An object a Makefile line names: "foo.o", or the foo.o of "GCOV_PROFILE_foo.o".
_OBJ_NAMED = re.compile(r'(?:\b[A-Z][A-Z0-9_]*_)?([a-z0-9][\w-]*)\.o\b')
# Patches that change production code on purpose (kernel fixes), with why.
PRODUCTION_CHANGES = os.path.join(REPO, 'patches', 'production-changes')


def worktree_dir() -> str:
	return os.path.join(version_dir(), 'bisect')


def production_config(test_config: str, options: Sequence[str]) -> str:
	"""The test .config with the series' options and line-number debugging off."""
	# KUNIT_ALL_TESTS would turn the series' options on without asking
	off = set(options) | set(LINE_NUMBER_DEBUG) | {'KUNIT_ALL_TESTS'}
	lines = []
	for line in test_config.splitlines():
		m = re.match(r'^(?:# )?CONFIG_(\w+)[= ]', line)
		if m and m.group(1) in off:
			continue
		lines.append(line)
	lines += [f'# CONFIG_{name} is not set' for name in sorted(off)]
	return '\n'.join(lines) + '\n'


def targets(patches: Sequence[str], arch: str, pristine: str) -> List[str]:
	"""kbuild targets (a dir/ or an object) whose objects the series can change."""
	other_arches = [d for a, v in ARCHES.items() if a != arch for d in v['suite_dirs']]
	want: List[str] = []
	for patch in patches:
		for path, added, changed in series.patch_files(patch):
			d = os.path.dirname(path)
			if path.startswith(('tools/', 'Documentation/')) or \
			   any(path.startswith(o) for o in other_arches):
				continue
			if path.endswith(('.c', '.h')) and not added:
				t = d + '/'
			elif os.path.basename(path) == 'Makefile':
				srcs = [n for n in os.listdir(os.path.join(pristine, d)) if n.endswith('.c')]
				if len(srcs) <= SMALL_DIR:
					t = d + '/'
				else:
					for name in _OBJ_NAMED.findall(changed):
						if name + '.c' in srcs and os.path.join(d, name + '.o') not in want:
							want.append(os.path.join(d, name + '.o'))
					continue
			else:
				continue
			if t not in want:
				want.append(t)
	# an object under a directory target is built and compared with it
	dirs = [t for t in want if t.endswith('/')]
	return [t for t in want if t.endswith('/') or not any(t.startswith(d) for d in dirs)]


def objects(build: str, targets_: Sequence[str]) -> List[str]:
	"""The object files of targets in build (relative paths)."""
	found = []
	for t in targets_:
		if t.endswith('/'):
			d = os.path.join(build, t)
			if os.path.isdir(d):
				found += sorted(os.path.join(t, n) for n in os.listdir(d)
						if n.endswith('.o') and not n.endswith('.mod.o'))
		elif os.path.isfile(os.path.join(build, t)):
			found.append(t)
	return found


def _objdump(arch: str) -> str:
	cross = ARCHES[arch]['cross_compile'] or ''
	tool = shutil.which(cross + 'objdump')
	if not tool:
		raise UserError(f'{cross}objdump is missing: apt-get install '
				f'{"binutils-aarch64-linux-gnu" if cross else "binutils"}')
	return tool


def sections(objdump: str, obj: str) -> Dict[str, str]:
	"""Each compared section's contents and relocations, as objdump prints them."""
	heads = subprocess.run([objdump, '-h', '-w', obj], capture_output=True, text=True,
			       check=True).stdout
	names = [l.split()[1] for l in heads.splitlines() if re.match(r'^\s*\d+\s', l)]
	out = {}
	for name in names:
		if IGNORED_SECTIONS.match(name):
			continue
		dump = subprocess.run([objdump, '-s', '-r', '-w', '-j', name, obj],
				      capture_output=True, text=True, check=True).stdout
		# the first lines name the file
		out[name] = '\n'.join(l for l in dump.splitlines()[2:] if obj not in l)
	return out


def declared_changes(patches: Sequence[str], path: str = PRODUCTION_CHANGES) -> Dict[str, str]:
	"""The patches path declares as production changes; each must be in the series."""
	declared = patch_reasons(path)
	names = {os.path.basename(p) for p in patches}
	for name in declared:
		if name not in names:
			raise UserError(f'{path} names {name}, which patches/series does not list: '
					'correct the file name or remove the line')
	return declared


def snapshot(build: str, ref: str, objs: Sequence[str]) -> None:
	"""Copies objs of build to ref, the objects later patches are compared with."""
	shutil.rmtree(ref, ignore_errors=True)
	for rel in objs:
		src = os.path.join(build, rel)
		if os.path.isfile(src):
			os.makedirs(os.path.dirname(os.path.join(ref, rel)), exist_ok=True)
			shutil.copy2(src, os.path.join(ref, rel))


def compare(objdump: str, base: str, head: str, objs: Sequence[str]) -> List[str]:
	"""What differs between the base and head builds' objects, one line per object."""
	problems = []
	for rel in objs:
		a, b = os.path.join(base, rel), os.path.join(head, rel)
		if not os.path.isfile(b):
			problems.append(f'{rel}: built at pristine, missing now')
			continue
		sa, sb = sections(objdump, a), sections(objdump, b)
		diff = sorted(n for n in set(sa) | set(sb) if sa.get(n) != sb.get(n))
		if diff:
			problems.append(f'{rel}: sections differ: {", ".join(diff[:6])}')
	return problems


def _make(tree: str, arch: str, build: str, args: Sequence[str], log_path: str) -> Optional[str]:
	"""make O=build args...; the compiler errors on failure, None on success."""
	cmd = kbuild.make_cmd(arch, os.path.relpath(build, tree)) + ['-C', tree]
	cmd += list(args)
	with open(log_path, 'a') as out:
		out.write('$ ' + ' '.join(cmd) + '\n')
		out.flush()
		start = out.tell()
		proc = subprocess.run(cmd, env=kbuild.build_env(arch=arch), stdout=out,
				      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
	if proc.returncode == 0:
		return None
	with open(log_path, errors='replace') as f:
		f.seek(start)
		return kbuild.compiler_errors(f.read()) or \
			f'make {" ".join(args)} failed (exit {proc.returncode})'


def _configure(tree: str, arch: str, build: str, config: str) -> Optional[str]:
	"""Writes config into build and runs olddefconfig; the error, or None."""
	try:
		kconfig_check.make_kconfig(tree, arch, build)('olddefconfig', config)
	except UserError as e:
		return str(e)
	return None


def run_arch(arch: str, results: str, unchanged: Set[str]) -> Tuple[int, int]:
	"""Builds and compares every step for arch; (passed, failed) checks.

	Adds to unchanged each declared production change that changed nothing here.
	"""
	check_arch(arch)
	test_config_path = os.path.join(build_dir(arch, 'default', False), '.config')
	if not os.path.isfile(test_config_path):
		raise UserError(f'no .config of the ARCH={arch} test build ({test_config_path}):'
				f' run make run ARCH={arch} first')
	with open(test_config_path) as f:
		test_config = f.read()
	patches = prepare.series_patches()
	declared = declared_changes(patches)
	with locks.tree():
		src = tree_dir()
		commits = git(src, 'rev-list', '--reverse', 'pristine..HEAD').split()[:len(patches)]
		if len(commits) != len(patches):
			raise UserError(f'the prepared tree {src} does not hold the series: run make prepare')
		path = worktree_dir()
		prepare.exclude_build_dirs(src)
		prepare.ensure_worktree(path)
	options = kconfig_check.project_options(tree_dir())
	config = production_config(test_config, options)
	base = os.path.join(path, f'.kunit-prod-{arch}-pristine')
	head = os.path.join(path, f'.kunit-prod-{arch}-patched')
	ref = os.path.join(path, f'.kunit-prod-{arch}-reference')
	log_path = os.path.join(results, f'series-build-{arch}.log')
	open(log_path, 'w').close()
	objdump = _objdump(arch)
	passed = failed = 0
	with locks.build(path):
		prepare.reset_worktree(path, 'pristine')
		want = targets(patches, arch, path)
		log(f'[series-build] ARCH={arch}: production config = test config without '
		    f'{len(options)} series options ({", ".join(options)}) and lock debugging; '
		    f'targets {" ".join(want)}')
		start = time.monotonic()
		err = _configure(path, arch, base, config) or _make(path, arch, base, want, log_path)
		if err:
			raise UserError(f'pristine linux-source does not build {" ".join(want)} for '
					f'ARCH={arch} (log: {log_path}):\n{err}')
		objs = objects(base, want)
		log(f'[series-build] pristine: {len(objs)} objects in {time.monotonic() - start:.0f}s')
		snapshot(base, ref, objs)
		for patch, commit in zip(patches, commits):
			name = os.path.basename(patch)
			start = time.monotonic()
			prepare.reset_worktree(path, commit)
			err = _configure(path, arch, head, config) or \
				_make(path, arch, head, want, log_path)
			if err:
				failed += 1
				log(f'[series-build] FAIL {name}: does not build (ARCH={arch}, log: '
				    f'{log_path}):\n{err}')
				continue
			problems = compare(objdump, ref, head, objs)
			took = time.monotonic() - start
			if name in declared:
				if problems:
					passed += 1
					snapshot(head, ref, objs)
					log(f'[series-build] ok {name}: builds, changes production objects as '
					    f'patches/production-changes declares ({took:.0f}s):\n' +
					    '\n'.join('    ' + p for p in problems[:20]))
				else:
					passed += 1
					unchanged.add(name)
					log(f'[series-build] ok {name}: builds, {len(objs)} production objects '
					    f'unchanged on ARCH={arch}, although patches/production-changes '
					    f'declares a change ({took:.0f}s)')
			elif problems:
				failed += 1
				log(f'[series-build] FAIL {name}: builds, but changes production objects '
				    f'({took:.0f}s):\n' + '\n'.join('    ' + p for p in problems[:20]))
			else:
				passed += 1
				log(f'[series-build] ok {name}: builds, {len(objs)} production objects '
				    f'unchanged ({took:.0f}s)')
		prepare.reset_worktree(path, 'pristine')
	return passed, failed


def main(arches: Sequence[str]) -> Tuple[int, int, int]:
	results = os.path.join(REPO, 'results')
	os.makedirs(results, exist_ok=True)
	prepare.prepare()
	passed = failed = 0
	unchanged: Dict[str, int] = {}
	for arch in arches:
		here: Set[str] = set()
		p, f = run_arch(arch, results, here)
		passed, failed = passed + p, failed + f
		for name in here:
			unchanged[name] = unchanged.get(name, 0) + 1
	for name, n in sorted(unchanged.items()):
		if n < len(arches):
			continue
		if set(arches) != set(ARCHES):
			log(f'[series-build] note: {name} changed no production object on '
			    f'{" or ".join(arches)}; whether it changes any is checked with every arch')
		else:
			failed += 1
			log(f'[series-build] FAIL {name}: patches/production-changes declares a production '
			    f'change, but no production object changed on {" or ".join(arches)}')
	return passed, failed, 0
