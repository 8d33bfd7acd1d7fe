# SPDX-License-Identifier: GPL-2.0
"""Installs the Debian packages kunit-rcu needs, and checks the kernel source version."""

import os
import shutil
import subprocess
from typing import Callable, Dict, List, Optional

from .common import PACKAGE, TARBALL, UserError, expected_version, log

# Debian package -> how to tell it is installed.
NEEDED: Dict[str, str] = {
	'qemu-system-x86': 'bin:qemu-system-x86_64',
	'qemu-system-arm': 'bin:qemu-system-aarch64',
	'gcc-aarch64-linux-gnu': 'bin:aarch64-linux-gnu-gcc',
	'gcc': 'bin:gcc',
	'make': 'bin:make',
	'git': 'bin:git',
	'bc': 'bin:bc',
	'flex': 'bin:flex',
	'bison': 'bin:bison',
	'xz-utils': 'bin:xz',
	'dwarves': 'bin:pahole',
	'ccache': 'bin:ccache',
	'lcov': 'bin:lcov',
	'gcovr': 'bin:gcovr',
	'python3': 'file:/usr/bin/python3',
	'libelf-dev': 'file:/usr/include/libelf.h',
	'libssl-dev': 'file:/usr/include/openssl/ssl.h',
	'perl': 'bin:perl',
	'python3-ply': 'file:/usr/lib/python3/dist-packages/ply',
	'python3-git': 'file:/usr/lib/python3/dist-packages/git',
}


def _present(probe: str) -> bool:
	kind, what = probe.split(':', 1)
	if kind == 'bin':
		return shutil.which(what) is not None
	return os.path.exists(what)


def installed_version(package: str = PACKAGE) -> Optional[str]:
	proc = subprocess.run(['dpkg-query', '-W', '-f=${Status} ${Version}', package],
			      text=True, capture_output=True)
	if proc.returncode != 0 or not proc.stdout.startswith('install ok installed'):
		return None
	return proc.stdout.split()[-1]


def missing_packages(present: Callable[[str], bool] = _present) -> List[str]:
	return [pkg for pkg, probe in NEEDED.items() if not present(probe)]


def _apt_install(pkgs: List[str]) -> None:
	if os.geteuid() != 0 and not shutil.which('sudo'):
		raise UserError('missing packages: ' + ' '.join(pkgs) +
				'\n  install them as root: apt-get install ' + ' '.join(pkgs))
	sudo = [] if os.geteuid() == 0 else ['sudo']
	log('installing Debian packages: ' + ' '.join(pkgs))
	env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
	upd = subprocess.run(sudo + ['apt-get', 'update', '-q'], env=env,
			     stdin=subprocess.DEVNULL, capture_output=True, text=True)
	if upd.returncode != 0:
		log('warning: apt-get update failed:\n' + upd.stdout[-800:] + upd.stderr[-800:])
	proc = subprocess.run(sudo + ['apt-get', 'install', '-y', '-q', '--no-install-recommends'] + pkgs,
			      env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
	if proc.returncode != 0:
		tail = '\n'.join((proc.stdout + proc.stderr).splitlines()[-12:])
		raise UserError('could not install Debian packages: ' + ' '.join(pkgs) +
				f'\n{tail}\n  fix the apt error above (apt-cache policy <package> shows '
				'what is available), then run the command again')


def ensure_packages() -> None:
	"""Installs whatever is missing; the kernel source at the tested version."""
	want = expected_version()
	pkgs = missing_packages()
	have = installed_version()
	if have is None:
		pkgs.append(f'{PACKAGE}={want}')
	if pkgs:
		_apt_install(pkgs)
		still = missing_packages()
		if still:
			raise UserError('packages still missing after apt-get install: ' + ' '.join(still))
	check_source_version()


def check_source_version(have: Optional[str] = None) -> str:
	"""Returns the installed linux-source-6.1 version, or says why it cannot be used."""
	want = expected_version()
	have = have or installed_version()
	if have is None or not os.path.isfile(TARBALL):
		raise UserError(f'{PACKAGE} is not installed ({TARBALL} is missing).\n'
				f'  install it: apt-get install {PACKAGE}={want}')
	if have != want:
		msg = (f'{PACKAGE} {have} is installed, but kunit-rcu is tested against {want} '
		       '(KERNEL_VERSION).\n'
		       f'  install the tested one: apt-get install {PACKAGE}={want}\n'
		       f'  or try this one anyway: KUNIT_RCU_ALLOW_VERSION={have} make ...'
		       ' (patches may then fail to apply)')
		if os.environ.get('KUNIT_RCU_ALLOW_VERSION') != have:
			raise UserError(msg)
		log(f'warning: using {PACKAGE} {have}, not the tested {want} (KUNIT_RCU_ALLOW_VERSION)')
	return have
