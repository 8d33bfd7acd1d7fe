# SPDX-License-Identifier: GPL-2.0
"""make soak: boot one kernel N times and count what each case did.

A case that passes in one boot and fails in another is a flake: a bug of
the test or of the kernel, to be fixed rather than retried.  The first
boot is a whole make run (prepare, build, verdict, results dir); the
others boot that same image again, without rebuilding, each judged the
way make run judges, its console kept as console.<i>.log next to the
first run's results.
"""

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import kbuild, ktap, locks, run, sources, verdict
from .common import UserError, build_dir, load_config, log, results_dir, tree_dir

STATUSES = (ktap.PASSED, ktap.FAILED, ktap.SKIPPED, ktap.MISSING)


@dataclass
class Soak:
	"""What N boots of one kernel did: per case, how often each status came."""
	boots: int = 0
	cases: Dict[str, Counter] = field(default_factory=dict)
	failed_boots: List[Tuple[int, List[str]]] = field(default_factory=list)

	def add(self, v: verdict.Verdict) -> None:
		self.boots += 1
		for c in v.cases:
			self.cases.setdefault(c.id, Counter())[c.status] += 1
		if not v.passed:
			self.failed_boots.append((self.boots, list(v.reasons)))

	def varying(self) -> List[str]:
		"""Cases that did not do the same thing in every boot (missing from a boot counts)."""
		return [case for case, n in self.cases.items()
			if len(n) > 1 or sum(n.values()) != self.boots]

	def table(self) -> str:
		width = max([len('case')] + [len(c) for c in self.cases])
		head = f'{"case":<{width}}  ' + '  '.join(f'{s:>7}' for s in STATUSES)
		lines = [head, '-' * len(head)]
		vary = set(self.varying())
		for case in sorted(self.cases):
			n = self.cases[case]
			lines.append(f'{case:<{width}}  ' + '  '.join(f'{n[s]:>7}' for s in STATUSES) +
				     ('  VARIES' if case in vary else ''))
		return '\n'.join(lines)

	def counts(self) -> Tuple[int, int, int]:
		"""(passed, failed, skipped) for the closing line: a case that varied failed, and so did a failing boot."""
		vary = set(self.varying())
		passed = sum(1 for c, n in self.cases.items() if c not in vary and n[ktap.PASSED])
		skipped = sum(1 for c, n in self.cases.items() if c not in vary and n[ktap.SKIPPED])
		failed = len(self.cases) - passed - skipped + len(self.failed_boots)
		return passed, failed, skipped


def soak(arch: str, config: str, boots: int, timeout: int,
	 first: Optional[run.RunOutcome] = None) -> Soak:
	"""make run once, then boot its kernel boots - 1 more times; every verdict goes in the tally."""
	if boots < 1:
		raise UserError(f'N={boots}: give the number of boots, at least 1 (make soak N=20)')
	cfg = load_config(config)
	cfg.check_arch(arch)
	out = first or run.run(arch, config, [], timeout)
	outdir = results_dir(arch, config, False)
	result = Soak()
	console_path = os.path.join(outdir, 'console.log')
	if not os.path.exists(console_path):
		raise UserError(f'the first boot of ARCH={arch} CONFIG={config} left no console '
				f'log ({"; ".join(out.reasons)}): fix that run first (make run)')
	expected = sources.suites_for(arch)
	with open(console_path, errors='replace') as f:
		result.add(verdict.judge(f.read(), expected, False, timeout, arch=arch, config=config,
					 console_path=console_path))
	build = build_dir(arch, config, False)
	with locks.build(build), locks.tree():
		for i in range(2, boots + 1):
			path = os.path.join(outdir, f'console.{i}.log')
			console, timed_out, secs, _ = kbuild.boot(tree_dir(), arch, cfg, build, path, timeout)
			v = verdict.judge(console, expected, timed_out, timeout, arch=arch, config=config,
					  console_path=path)
			result.add(v)
			log(f'[soak] ARCH={arch} CONFIG={config} boot {i} of {boots}: '
			    f'{"passed" if v.passed else "FAILED: " + "; ".join(v.reasons)} ({secs:.0f}s)')
	return result
