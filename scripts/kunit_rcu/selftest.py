# SPDX-License-Identifier: GPL-2.0
"""The tooling's own unit tests (scripts/tests), quiet unless one fails."""

import os
import sys
import tempfile
import unittest
from typing import Optional, TextIO, Tuple

from .common import REPO


class _FdCapture:
	"""Points fds 1 and 2 at a temporary file until stop(), which returns what landed there."""

	def __init__(self) -> None:
		_flush_std()
		self.file = tempfile.TemporaryFile()
		self.saved = [os.dup(1), os.dup(2)]
		os.dup2(self.file.fileno(), 1)
		os.dup2(self.file.fileno(), 2)

	def stop(self) -> str:
		_flush_std()
		for fd, saved in zip((1, 2), self.saved):
			os.dup2(saved, fd)
			os.close(saved)
		self.file.seek(0)
		text = self.file.read().decode(errors='replace')
		self.file.close()
		return text


def _flush_std() -> None:
	for f in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
		try:
			f.flush()
		except (AttributeError, ValueError, OSError):
			pass


class QuietResult(unittest.TextTestResult):
	"""A test's output shows only if it fails.

	The runner's buffer=True catches sys.stdout and sys.stderr; this also
	catches fds 1 and 2 (subprocesses, sys.__stdout__) and adds what they
	got to the failure's report.
	"""

	def startTest(self, test) -> None:
		self._capture: Optional[_FdCapture] = _FdCapture()
		self._bad_before = len(self.failures) + len(self.errors) + len(self.unexpectedSuccesses)
		super().startTest(test)

	def stopTest(self, test) -> None:
		text = self._capture.stop() if self._capture else ''
		self._capture = None
		# buffer=True puts a failure's sys.stdout/sys.stderr in its report;
		# do not also echo them to the stdout the test started with.
		self._mirrorOutput = False
		super().stopTest(test)
		bad = len(self.failures) + len(self.errors) + len(self.unexpectedSuccesses)
		if not text or bad == self._bad_before:
			return
		note = f'\nOutput on fds 1 and 2:\n{text}'
		for reports in (self.failures, self.errors):
			for i in range(len(reports) - 1, -1, -1):
				if reports[i][0] is test:
					reports[i] = (test, reports[i][1] + note)
					return
		self.stream.write(f'{test}:{note}\n')


def run_quietly(suite: unittest.TestSuite, stream: TextIO) -> unittest.TestResult:
	"""Runs suite; only failing tests' output reaches stream (which must not be fd 1 or 2)."""
	runner = unittest.TextTestRunner(stream=stream, verbosity=1, buffer=True,
					 resultclass=QuietResult)
	return runner.run(suite)


def selftest() -> Tuple[int, int, int]:
	"""Runs scripts/tests; (passed, failed, skipped)."""
	suite = unittest.defaultTestLoader.discover(os.path.join(REPO, 'scripts', 'tests'),
						     top_level_dir=os.path.join(REPO, 'scripts'))
	_flush_std()
	# The runner writes to a duplicate of stdout: fd 1 itself is captured per test.
	with os.fdopen(os.dup(sys.stdout.fileno()), 'w', buffering=1) as stream:
		result = run_quietly(suite, stream)
	failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
	skipped = len(result.skipped)
	return result.testsRun - failed - skipped, failed, skipped
