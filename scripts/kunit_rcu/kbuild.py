# SPDX-License-Identifier: GPL-2.0
"""Builds and boots a prepared tree through the tree's own kunit.py."""

import hashlib
import os
import re
import secrets
import shlex
import shutil
import subprocess
import time
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

from .common import ARCHES, Config, UserError, cache_dir, git, log, version_dir
from .prepare import arch_kunitconfigs, kunitconfig_path, kunitconfig_paths, overlay_files

STAMP = '.kunit-rcu-built'

# Default bound on one guest boot, in seconds (make run TIMEOUT=...).
DEFAULT_TIMEOUT = 600


def kunit_args(arch: str, config: Config, build: str) -> List[str]:
	"""kunit.py arguments shared by build and exec: what the kernel is made of."""
	args = ['--arch=' + arch, '--build_dir=' + build]
	args += ['--kunitconfig=' + path for path in kunitconfig_paths(arch)]
	for line in config.kconfig:
		args.append('--kconfig_add=' + line)
	cross = ARCHES[arch]['cross_compile']
	if cross:
		args.append('--cross_compile=' + cross)
	return args


def boot_args(arch: str, config: Config) -> List[str]:
	"""kunit.py exec's extra arguments: the config's kernel parameters and QEMU arguments.

	kunit.py appends each --kernel_args to the guest's command line and
	shell-splits each --qemu_args after its fixed QEMU arguments; neither
	changes the kernel image, so neither is in the build fingerprint.
	"""
	args = ['--kernel_args=' + a for a in config.kernel_args_for(arch)]
	qemu = config.qemu_args_for(arch)
	if qemu:
		args.append('--qemu_args=' + shlex.join(qemu))
	return args


# The compiler shim: ccache, except for a source that pulls a file in with
# .incbin, which ccache does not see in depend mode.  x86's
# arch/x86/boot/compressed/piggy.S .incbin's the compressed kernel and
# names only its sizes: ccache handed back an older kernel's piggy.o
# whenever two builds' sizes matched (a mutant that swaps one call for
# another), and the guest booted that older kernel.
_SHIM = """#!/bin/sh
# kunit-rcu: {cc} through ccache, except for sources that .incbin a file.
for a; do
	case $a in
	*.S|*.c) [ -f "$a" ] && grep -q '[.]incbin' "$a" && exec {real} "$@" ;;
	esac
done
exec {ccache} {real} "$@"
"""


def ccache_shims() -> str:
	"""A directory whose gcc and aarch64-linux-gnu-gcc run the compiler through ccache.

	Compilers go through PATH rather than CC=, so kbuild records the same
	command lines as a plain kunit.py run: both can share a build dir.
	Sources that .incbin a file are compiled without ccache (see _SHIM).
	"""
	shims = os.path.join(cache_dir(), 'ccache-bin')
	ccache = shutil.which('ccache')
	if not ccache:
		raise UserError('ccache is missing: apt-get install ccache (or KUNIT_RCU_NO_CCACHE=1)')
	os.makedirs(shims, exist_ok=True)
	path = os.pathsep.join(d for d in os.environ.get('PATH', '').split(os.pathsep)
			       if d and os.path.realpath(d) != os.path.realpath(shims))
	for arch in ARCHES.values():
		link = os.path.join(shims, arch['cc'])
		real = shutil.which(arch['cc'], path=path)
		if not real:
			# The arch's compiler is not installed: packages.py names it when it is needed.
			if os.path.lexists(link):
				os.unlink(link)
			continue
		text = _SHIM.format(cc=arch['cc'], real=real, ccache=ccache)
		if os.path.islink(link) or not os.path.exists(link) or open(link).read() != text:
			if os.path.lexists(link):
				os.unlink(link)
			with open(link + '.tmp', 'w') as f:
				f.write(text)
			os.chmod(link + '.tmp', 0o755)
			os.replace(link + '.tmp', link)
	return shims


def make_cmd(arch: str, out: str, jobs: Optional[int] = None) -> List[str]:
	"""make's command line for a kernel of arch built in out (O=), without a target."""
	cmd = ['make', '-j' + str(jobs or os.cpu_count() or 1), 'ARCH=' + arch, 'O=' + out]
	if ARCHES[arch]['cross_compile']:
		cmd.append('CROSS_COMPILE=' + ARCHES[arch]['cross_compile'])
	return cmd


_DEBUG_INFO = re.compile(r'^CONFIG_DEBUG_INFO(?!_NONE)\w*=y$')


def debug_info(config: Optional[Config], arch: Optional[str] = None) -> bool:
	"""Do the kunitconfig files (of arch, or of any arch) or the config's lines ask for debug info (-g)?"""
	if arch:
		paths = kunitconfig_paths(arch)
	else:
		paths = [kunitconfig_path()] + list(arch_kunitconfigs().values())
	lines: List[str] = []
	for path in paths:
		with open(path) as f:
			lines += [l.strip() for l in f]
	lines += config.kconfig if config else []
	return any(_DEBUG_INFO.match(l) for l in lines)


def build_env(base=None, config: Optional[Config] = None, arch: Optional[str] = None) -> dict:
	"""base (default: the environment), less make's variables, with ccache shims first in PATH (unless disabled).

	ccache gets base_dir = the version dir, so an absolute path under it
	on a compiler command line is hashed relative to the compiler's cwd;
	and, while there is no debug info, hash_dir off: a build in scratch/
	then hits what the same build in src/ stored (see common.build_dir).
	"""
	env = dict(os.environ if base is None else base)
	if not env.get('KUNIT_RCU_NO_CCACHE'):
		env['PATH'] = ccache_shims() + os.pathsep + env.get('PATH', '')
	# make run ARCH=... must not leak into the kernel's make through MAKEFLAGS.
	for var in ('MAKEFLAGS', 'MFLAGS', 'MAKELEVEL', 'MAKEOVERRIDES', 'ARCH', 'CONFIG'):
		env.pop(var, None)
	env.setdefault('CCACHE_DIR', os.path.join(cache_dir(), 'ccache'))
	# Depend mode: a miss costs no extra preprocessor run (kbuild passes
	# -Wp,-MMD), which keeps a cold build within a few percent of plain gcc;
	# hits are direct-mode hits either way.
	env.setdefault('CCACHE_DEPEND', '1')
	env.setdefault('CCACHE_MAXSIZE', '8G')
	# No inode cache: mutants rewrite sources between builds, and hashing
	# them afresh costs little.  (Tried against stale mutant kernels; the
	# cause there was the missing relink, see force_relink().)
	env.setdefault('CCACHE_NOINODECACHE', '1')
	# Physical, like the absolute paths kbuild derives (abs_srctree, abs_objtree).
	env.setdefault('CCACHE_BASEDIR', os.path.realpath(version_dir()))
	if not debug_info(config, arch):
		# Without -g the cwd is in no object file; with it, keep ccache's default.
		env.setdefault('CCACHE_NOHASHDIR', '1')
	return env


def build_fingerprint(tree: str, arch: str, config: Config) -> str:
	"""What a kernel image was built from: tree commit, arch, kunitconfig (+ kunitconfig.<arch>), the config's Kconfig lines.

	Kernel and QEMU arguments only matter at boot: changing them does not
	make a kernel stale.
	"""
	head = git(tree, 'rev-parse', 'HEAD').strip()
	texts = []
	for path in kunitconfig_paths(arch):
		with open(path) as f:
			texts.append(f.read())
	kc = '\n'.join(texts)
	frag = '\n'.join(config.kconfig)
	return hashlib.sha256(f'{head}\n{arch}\n{kc}\n{frag}'.encode()).hexdigest()


def compiler_errors(log_text: str, limit: int = 20) -> str:
	"""The compiler/linker error lines of a failed build, with some context."""
	lines = log_text.splitlines()
	pat = re.compile(r'(error:|Error \d|undefined reference|\*\*\*|fatal error|ld: )')
	hits = [i for i, l in enumerate(lines) if pat.search(l)]
	if not hits:
		return '\n'.join(lines[-limit:])
	first = max(0, hits[0] - 3)
	return '\n'.join(lines[first:first + limit])


_WARNING = re.compile(r'^\.\./(\S+?):\d+:(?:\d+:)? warning: .*$', re.M)


def own_warnings(log_text: str) -> List[Tuple[str, str]]:
	"""(path, line) of each compiler warning in a file kunit-rcu overlays onto the tree."""
	own = set(overlay_files())
	return [(m.group(1), m.group(0)) for m in _WARNING.finditer(log_text) if m.group(1) in own]


HEARTBEAT = 60


def count_objects(build: str) -> int:
	return sum(1 for _, _, files in os.walk(build) for f in files if f.endswith('.o'))


# The final link products.  Seen in the scratch tree (mutant after mutant):
# an object rebuilt after its source changed, yet vmlinux and the boot
# image older than it and the guest running the previous mutant's code.
# Relinking costs seconds; booting a stale kernel costs a wrong verdict.
LINK_PRODUCTS = ('vmlinux', 'vmlinux.o', 'vmlinux.a', 'arch/x86/boot/bzImage',
		 'arch/arm64/boot/Image', 'arch/arm64/boot/Image.gz')


def force_relink(build: str) -> None:
	"""Removes the link products so that every build relinks the kernel."""
	for name in LINK_PRODUCTS:
		path = os.path.join(build, name)
		if os.path.exists(path):
			os.unlink(path)


def seed_build(tree: str, arch: str, config: Config, build: str, seed: str,
	       changed: Sequence[str]) -> bool:
	"""Starts a never-built build dir in scratch/ as a copy of seed, the prepared tree's build.

	A scratch build dir's first build otherwise compiles every object
	again (ccache hits, about a minute under make's bookkeeping).  The
	caller passes seed only when it was built from the commit the scratch
	tree started from (stamp_fingerprint() against build_fingerprint() of
	the prepared tree).
	The host tools that kbuild builds with absolute paths (x86's objtool,
	on which every object depends) are rebuilt first ("make prepare"),
	since their command lines name the other tree.  Then every file in the
	build dir gets one mtime, and the sources the extra patches changed
	(changed: paths relative to the tree) a later one, so that make
	rebuilds exactly what depends on them; check_rebuilt() verifies it did.

	Return: whether build was seeded.
	"""
	if os.path.exists(os.path.join(build, STAMP)) or not os.path.exists(os.path.join(seed, STAMP)):
		return False
	shutil.rmtree(build, ignore_errors=True)
	shutil.copytree(seed, build, symlinks=True)
	os.unlink(os.path.join(build, STAMP))
	proc = subprocess.run(make_cmd(arch, build) + ['prepare'], cwd=tree,
			      env=build_env(config=config, arch=arch), stdin=subprocess.DEVNULL,
			      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
	if proc.returncode != 0:
		shutil.rmtree(build, ignore_errors=True)  # the full build below starts afresh
		log(f'[build] make prepare in the copy failed; building {build} in full:\n' +
		    compiler_errors(proc.stdout))
		return False
	now = time.time()
	for top, dirs, files in os.walk(build):
		for name in files + dirs:
			os.utime(os.path.join(top, name), (now, now), follow_symlinks=False)
	while time.time() <= now + 0.01:
		time.sleep(0.01)
	for path in changed:
		full = os.path.join(tree, path)
		if os.path.isfile(full):
			os.utime(full)
	log(f'[build] {build} starts as a copy of {seed}')
	return True


def dependents(build: str, path: str) -> List[str]:
	"""The objects in build whose kbuild .cmd file names path (relative to the tree) as a source or dependency."""
	needle = '../' + path
	out = []
	for top, _, files in os.walk(build):
		for name in files:
			if not (name.startswith('.') and name.endswith('.o.cmd')):
				continue
			with open(os.path.join(top, name), errors='replace') as f:
				text = f.read()
			if re.search(r'(:= |^  )' + re.escape(needle) + r'( \\)?$', text, re.M):
				out.append(os.path.join(top, name[1:-len('.cmd')]))
	return out


def check_rebuilt(tree: str, build: str, changed: Sequence[str]) -> None:
	"""Raises UserError unless every object built from a changed source is newer than it.

	A mutant's kernel must contain the mutant: an object older than the
	source it was compiled from means make kept an older one.
	"""
	for path in changed:
		src = os.path.join(tree, path)
		if not os.path.isfile(src) or not path.endswith(('.c', '.h', '.S')):
			continue
		mtime = os.stat(src).st_mtime
		for obj in dependents(build, path):
			if os.path.exists(obj) and os.stat(obj).st_mtime < mtime:
				raise UserError(f'{obj} was not rebuilt after {path} changed: the kernel '
						f'would not contain the change; delete {build} and run again')


def build(tree: str, arch: str, config: Config, build: str, log_path: str,
	  jobs: Optional[int] = None) -> None:
	"""kunit.py build; raises UserError with the compiler errors on failure."""
	os.makedirs(build, exist_ok=True)
	stamp = os.path.join(build, STAMP)
	if os.path.exists(stamp):
		os.unlink(stamp)  # a failed build must never leave a bootable stamp
	force_relink(build)
	fingerprint = build_fingerprint(tree, arch, config)  # what this build starts from
	# A mark of this very link in the guest's "Linux version" banner (UTS_VERSION,
	# only init/version-timestamp.o sees it): boot() checks the guest shows it.
	build_id = 'kunit-rcu-' + secrets.token_hex(6)
	env = build_env(config=config, arch=arch)
	env['KBUILD_BUILD_TIMESTAMP'] = build_id
	cmd = ['python3', 'tools/testing/kunit/kunit.py', 'build',
	       *kunit_args(arch, config, build),
	       '--jobs=' + str(jobs or os.cpu_count() or 2)]
	log('$ ' + ' '.join(cmd))
	start = time.monotonic()
	with open(log_path, 'w') as out:
		proc = subprocess.Popen(cmd, cwd=tree, env=env,
					stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
		while True:
			try:
				proc.wait(timeout=HEARTBEAT)
				break
			except subprocess.TimeoutExpired:
				log(f'[build] {time.monotonic() - start:.0f}s, '
				    f'{count_objects(build)} objects so far')
	with open(log_path, errors='replace') as f:
		text = f.read()
	if proc.returncode != 0:
		raise UserError(f'build failed for ARCH={arch} CONFIG={config.name} (full log: {log_path}):\n'
				+ compiler_errors(text) +
				'\n  fix the error above; no kernel was booted')
	warned = own_warnings(text)
	if warned:
		for path in {p for p, _ in warned if p.endswith(('.c', '.S'))}:
			obj = os.path.join(build, path[:-2] + '.o')
			if os.path.exists(obj):
				os.unlink(obj)  # compiled (and warned about) again next time
		raise UserError(f'the build of ARCH={arch} CONFIG={config.name} warns in kunit-rcu\'s '
				f'own files (full log: {log_path}):\n' +
				'\n'.join(line for _, line in warned[:20]) +
				'\n  fix the warnings above; no kernel was booted')
	with open(stamp, 'w') as f:
		f.write(fingerprint + '\n' + build_id + '\n')


def _stamp(build: str) -> List[str]:
	"""The build stamp's lines: fingerprint, build id (empty strings when missing)."""
	try:
		with open(os.path.join(build, STAMP)) as f:
			lines = f.read().split()
	except FileNotFoundError:
		lines = []
	return (lines + ['', ''])[:2]


_BANNER = re.compile(r'Linux version \S+ .*$', re.M)


class StaleKernel(UserError):
	"""The guest booted a kernel other than the one just built (see booted_other_kernel())."""


def booted_other_kernel(console: str, build: str) -> Optional[str]:
	"""Why the guest's banner shows it is not the kernel last built in build, or None.

	A build marks its link with a build id (KBUILD_BUILD_TIMESTAMP) that
	the guest prints in "Linux version ...".  No banner (a guest that died
	before printing) or no build id (a build older than the mark) is no
	evidence either way.
	"""
	build_id = _stamp(build)[1]
	m = _BANNER.search(console)
	if not build_id or not m or build_id in m.group(0):
		return None
	return (f'the guest booted a kernel other than the one just built in {build}: its banner '
		f'"{m.group(0).strip()}" lacks this build\'s id {build_id} (stale boot image); '
		'run again, and if it repeats delete ' + build)


def stamp_fingerprint(build: str) -> str:
	"""The fingerprint of what the kernel last built in build was built from ('' if none)."""
	return _stamp(build)[0]


def check_built(tree: str, arch: str, config: Config, build: str) -> None:
	"""Refuses to boot a kernel that was not built from the current tree."""
	if _stamp(build)[0] != build_fingerprint(tree, arch, config):
		raise UserError(f'the kernel in {build} was not built from the current tree and '
				'config (stale or failed build): run the build again')


class Boot(NamedTuple):
	"""What one guest boot left: its console, how it ended, how long it took."""
	console: str
	timed_out: bool
	seconds: float
	stopped: bool = False  # ended by the caller's stop_when, not by the guest


# Every boot: a panic reboots at once, and QEMU (-no-reboot) exits, so a
# crashed guest is reported with its console tail in seconds instead of
# spinning until TIMEOUT.
BOOT_KERNEL_ARGS = ('panic=-1',)

# How often a boot with stop_when looks at the console so far.
POLL = 0.5


def boot(tree: str, arch: str, config: Config, build: str, console_path: str,
	 timeout: int = DEFAULT_TIMEOUT, kernel_args: Sequence[str] = (),
	 suite: Optional[str] = None,
	 stop_when: Optional[Callable[[str], bool]] = None) -> Boot:
	"""kunit.py exec, bounded by timeout.

	kernel_args: more kernel parameters for this boot only (the coverage dump's).
	suite: run only this suite (kunit.py's filter_glob argument).
	stop_when: called with the console so far (every POLL seconds); once
	it returns true the guest is killed and the boot counts as stopped,
	not timed out.  The mutation harness stops a guest as soon as the
	cases a mutant must fail have failed.
	"""
	check_built(tree, arch, config, build)
	cmd = ['python3', 'tools/testing/kunit/kunit.py', 'exec',
	       *kunit_args(arch, config, build), *boot_args(arch, config),
	       *('--kernel_args=' + a for a in (*BOOT_KERNEL_ARGS, *kernel_args)), '--raw_output=all',
	       '--timeout=' + str(timeout)]
	if suite:
		cmd.append(suite)
	log('$ ' + ' '.join(cmd))
	env = build_env(config=config, arch=arch)
	# kunit.py prints the console line by line: unbuffered, the file is
	# as far as the guest is, for stop_when and for a hang's tail.
	env['PYTHONUNBUFFERED'] = '1'
	start = time.monotonic()
	timed_out = stopped = False
	with open(console_path, 'w') as out:
		proc = subprocess.Popen(cmd, cwd=tree, env=env,
					stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
					start_new_session=True)
		deadline = start + timeout + 60
		while True:
			try:
				proc.wait(timeout=POLL if stop_when else max(0, deadline - time.monotonic()))
				break
			except subprocess.TimeoutExpired:
				pass
			if time.monotonic() >= deadline:
				timed_out = True
			elif stop_when:
				with open(console_path, errors='replace') as f:
					stopped = stop_when(f.read())
			if timed_out or stopped:
				os.killpg(proc.pid, 9)
				proc.wait()
				break
	elapsed = time.monotonic() - start
	with open(console_path, errors='replace') as f:
		text = f.read()
	if not stopped and (elapsed >= timeout or re.search(r'timed out after \d+', text)):
		timed_out = True
	return Boot(text, timed_out, elapsed, stopped)
