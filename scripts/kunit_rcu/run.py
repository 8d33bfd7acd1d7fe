# SPDX-License-Identifier: GPL-2.0
"""make run: prepare, build, boot, parse, judge, report."""

import contextlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from . import coverage, kbuild, locks, packages, prepare, report, sources, verdict
from .common import (Config, UserError, build_dir, check_arch, expected_version, git,
		     load_config, log, results_dir, scratch_dir, tree_dir, Stage)


STOPPED = 'stopped before the end of the tests: what the run was for had been seen'


@dataclass
class RunOutcome:
	ok: bool
	counts: Dict[str, int] = field(default_factory=lambda: {'passed': 0, 'failed': 0, 'skipped': 0})
	failed_cases: List[str] = field(default_factory=list)
	reasons: List[str] = field(default_factory=list)
	splat_kinds: List[str] = field(default_factory=list)
	integrity_ok: bool = False
	stale: bool = False  # the guest booted an older kernel image (kbuild.StaleKernel)
	outdir: str = ''


def _meta(arch: str, config: str, extra: List[str]) -> dict:
	return {'arch': arch, 'config': config, 'debian_version': packages.installed_version(),
		'tested_debian_version': expected_version(), 'extra_patches': extra,
		'started': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}


def run(arch: str = 'x86_64', config: str = 'default', extra: Optional[List[str]] = None,
	timeout: int = kbuild.DEFAULT_TIMEOUT, install: bool = True,
	suite: Optional[str] = None,
	stop_when: Optional[Callable[[str], bool]] = None) -> RunOutcome:
	"""One full run. Bad ARCH or CONFIG raise UserError; later failures land in results.json.

	suite: boot only this suite (kunit.filter_glob); the verdict then
	expects only it.  The mutation harness uses it for a mutant whose
	cases are all in one suite: the other suites cost boot time and
	cannot kill it.
	stop_when: see kbuild.boot; a run stopped by it fails (it did not
	finish), with the stop as its first reason.

	Locks (see locks): the build dir's, which also guards the results dir,
	for the whole run (with EXTRA_PATCHES and a build dir never built, the
	prepared tree's build dir's too: that first build starts as its copy);
	the prepared tree's from prepare through boot, or with EXTRA_PATCHES
	only until the scratch tree is made, whose lock is then held through
	boot.
	"""
	extra = [os.path.abspath(p) for p in (extra or [])]
	check_arch(arch)  # bad arguments: raise before anything is recorded
	cfg = load_config(config)
	cfg.check_arch(arch)
	with contextlib.ExitStack() as held:
		build = build_dir(arch, config, bool(extra))
		held.enter_context(locks.build(build))
		seed = None
		if extra and not kbuild.stamp_fingerprint(build):
			# Its first build may start from the prepared tree's build:
			# hold that too (build dirs first, in this order).
			seed = build_dir(arch, config, False)
			held.enter_context(locks.build(seed))
		return _run(arch, cfg, extra, timeout, install, suite, seed, stop_when)


def _run(arch: str, cfg: Config, extra: List[str], timeout: int, install: bool,
	 suite: Optional[str], seed: Optional[str],
	 stop_when: Optional[Callable[[str], bool]]) -> RunOutcome:
	config = cfg.name
	timings: Dict[str, float] = {}
	outdir = results_dir(arch, config, bool(extra))
	meta = _meta(arch, config, extra)
	meta.update(timings=timings, kconfig_add=cfg.kconfig, kernel_args=cfg.kernel_args_for(arch),
		    qemu_args=cfg.qemu_args_for(arch), suite_filter=suite)
	expected = [s for s in sources.suites_for(arch) if suite is None or s.name == suite]
	if suite is not None and not expected:
		raise UserError(f'no suite named {suite} is built for ARCH={arch}')
	shutil.rmtree(outdir, ignore_errors=True)
	os.makedirs(outdir)
	log(f'run ARCH={arch} CONFIG={config}' + (f' EXTRA_PATCHES={" ".join(extra)}' if extra else ''))
	try:
		with contextlib.ExitStack() as held:
			with Stage('prepare', timings):
				if install:
					packages.ensure_packages()
				meta['debian_version'] = packages.installed_version()
				tree = tree_dir()
				tree_lock = held.enter_context(locks.tree())
				prepare.prepare(force=bool(os.environ.get('FORCE')))
				changed: List[str] = []
				if extra:
					base = git(tree, 'rev-parse', 'HEAD').strip()
					if seed and (kbuild.stamp_fingerprint(seed) !=
						     kbuild.build_fingerprint(tree, arch, cfg)):
						seed = None  # not built from the tree the scratch tree starts from
					held.enter_context(locks.scratch())
					prepare.prepare_scratch(extra)
					tree = scratch_dir()
					changed = git(tree, 'diff', '--name-only', base, 'HEAD').split()
					tree_lock.release()  # scratch/ has its own checkout: src/ may change now
				meta['tree'] = tree
				meta['tree_commit'] = git(tree, 'rev-parse', 'HEAD').strip()
			build = build_dir(arch, config, bool(extra))
			meta['build_dir'] = build
			with Stage('build', timings):
				if seed:
					kbuild.seed_build(tree, arch, cfg, build, seed, changed)
				kbuild.build(tree, arch, cfg, build, os.path.join(outdir, 'build.log'))
				kbuild.check_rebuilt(tree, build, changed)
			want_coverage = coverage.dump_wanted(config, bool(extra), build)
			with Stage('boot', timings):
				console, timed_out, _, stopped = kbuild.boot(
					tree, arch, cfg, build, os.path.join(outdir, 'console.log'), timeout,
					[coverage.KERNEL_ARG] if want_coverage else [], suite, stop_when)
				other = kbuild.booted_other_kernel(console, build)
				if other:
					raise kbuild.StaleKernel(other)
	except UserError as e:
		meta['error'] = str(e)
		with open(os.path.join(outdir, 'results.json'), 'w') as f:
			json.dump(dict(meta, verdict='fail', reasons=[str(e)],
				       counts={'passed': 0, 'failed': 0, 'skipped': 0}, cases=[], splats=[]),
				  f, indent=1)
		log('error: ' + str(e))
		log(f'results: {outdir}')
		return RunOutcome(ok=False, reasons=[str(e)], outdir=outdir,
				  stale=isinstance(e, kbuild.StaleKernel))
	with Stage('parse', timings):
		v = verdict.judge(console, expected, timed_out, timeout,
				  arch=arch, config=config,
				  console_path=os.path.join(outdir, 'console.log'),
				  stopped=STOPPED if stopped else None)
	if want_coverage:
		with Stage('coverage', timings):
			coverage.collect(arch, tree, build, console, outdir)
	report.write(outdir, v, meta, console)
	print(report.table(v))
	counts = report.summary(v)
	if not v.passed:
		for r in v.reasons:
			log('FAIL: ' + r)
		if not v.finished and not stopped:
			log('console tail:')
			print('\n'.join('    | ' + l for l in v.tail))
	log(f'results: {outdir} (results.json, junit.xml, kcidb.json, ktap.txt, console.log, '
	    'build.log)')
	verdict_word = 'PASS' if v.passed else 'FAIL'
	log(f'{verdict_word} ARCH={arch} CONFIG={config}: ' +
	    ', '.join(f'{n} {k}' for k, n in counts.items()) +
	    f' ({", ".join(f"{k} {t}s" for k, t in timings.items())})')
	return RunOutcome(ok=v.passed, counts=counts, failed_cases=v.failed_cases(),
			  reasons=v.reasons, outdir=outdir,
			  splat_kinds=[s.kind for s in v.splats if not s.expected],
			  integrity_ok=v.integrity_ok)
