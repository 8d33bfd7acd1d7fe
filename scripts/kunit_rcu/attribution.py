# SPDX-License-Identifier: GPL-2.0
"""Which C lines of the prepared tree each change is responsible for.

For the per-patch coverage report:

  patch_lines()   per commit of pristine..HEAD (the series patches in
                  order, then the overlay commit), the .c/.h lines at
                  HEAD that the commit added or changed (git blame);
  since_rev()     the .c/.h lines at HEAD added or changed since a
                  revision of this repository (make coverage REV=...);
  is_test_file()  the files the coverage gate does not count;
  noinstr_lines() the lines of functions gcov gives no counters.

Line numbers are 1-based and always those of HEAD's version of a file.
"""

import bisect
import io
import os
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Dict, List, Optional, Set

from .common import OVERLAY_DIRS, REPO, UserError, tree_dir
from .prepare import kunitconfig_path, overlay_files, series_patches

C_SUFFIXES = ('.c', '.h')
C_PATHSPECS = ('*.c', '*.h')


@dataclass
class PatchLines:
	"""The C lines at HEAD that one commit of pristine..HEAD added or changed.

	files maps a tree-relative path to HEAD line numbers; a file the
	commit has no surviving line in is absent.
	"""
	commit: str
	subject: str
	files: Dict[str, Set[int]] = field(default_factory=dict)

	def count(self) -> int:
		return sum(len(lines) for lines in self.files.values())


def _git_out(cwd: str, *args: str) -> str:
	"""git's stdout alone (common.git mixes stderr in); raises with both on failure."""
	proc = subprocess.run(['git', '-C', cwd, *args], text=True, errors='backslashreplace',
			      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			      stdin=subprocess.DEVNULL)
	if proc.returncode != 0:
		raise subprocess.CalledProcessError(proc.returncode, ['git', '-C', cwd, *args],
						    proc.stdout + proc.stderr)
	return proc.stdout


def _verify_commit(cwd: str, rev: str) -> Optional[str]:
	"""rev's full commit id in the repository at cwd, or None."""
	proc = subprocess.run(['git', '-C', cwd, 'rev-parse', '--verify', '--quiet',
			       '--end-of-options', rev + '^{commit}'], text=True,
			      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
			      stdin=subprocess.DEVNULL)
	return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def _is_c(path: str) -> bool:
	return path.endswith(C_SUFFIXES)


# -- per commit: git blame -------------------------------------------------

def patch_lines(tree: str, base: str = 'pristine', head: str = 'HEAD') -> List[PatchLines]:
	"""One PatchLines per commit of base..head, oldest first.

	Every commit is listed, also one that leaves no C line at head.  The
	lines come from git blame over base..head of each .c/.h file the
	range changes and that head still has: a line a later commit rewrote
	is the later commit's, a line older than base is nobody's.  Files
	that head deletes are skipped.
	"""
	for rev in (base, head):
		if not _verify_commit(tree, rev):
			raise UserError(f'{tree} has no commit "{rev}": prepare the tree '
					'(make prepare) or name an existing commit')
	entries = []
	out = _git_out(tree, 'log', '--reverse', '--no-show-signature', '--format=%H%x00%s%x00',
		       f'{base}..{head}')
	fields = out.split('\0')
	for i in range(0, len(fields) - 1, 2):
		entries.append(PatchLines(commit=fields[i].strip(), subject=fields[i + 1]))
	by_commit = {e.commit: e for e in entries}
	names = _git_out(tree, 'diff', '--name-only', '-z', '--no-renames', '--no-relative',
			 '--diff-filter=d', base, head, '--', *C_PATHSPECS)
	for path in sorted(p for p in names.split('\0') if p and _is_c(p)):
		# An empty --ignore-revs-file drops any blame.ignoreRevsFile of the config.
		blame = _git_out(tree, 'blame', '--porcelain', '--ignore-revs-file=',
				 f'{base}..{head}', '--', path)
		for commit, lines in _parse_blame(blame).items():
			if commit in by_commit:
				by_commit[commit].files[path] = lines
	return entries


def _parse_blame(porcelain: str) -> Dict[str, Set[int]]:
	"""commit -> final line numbers, from git blame --porcelain.

	Each line of the file is a header "<sha> <orig> <final> [<count>]",
	for a commit's first line its metadata lines, and the line itself
	after a TAB: the line after a TAB line is the next header.
	"""
	out: Dict[str, Set[int]] = {}
	want_header = True
	for line in porcelain.split('\n'):
		if line.startswith('\t'):
			want_header = True
		elif want_header and line:
			words = line.split()
			out.setdefault(words[0], set()).add(int(words[2]))
			want_header = False
	return out


# -- since a revision of this repository -------------------------------------

def since_rev(rev: str, repo: str = REPO, tree: Optional[str] = None) -> Dict[str, Set[int]]:
	"""The .c/.h lines at tree's HEAD added or changed since project revision rev.

	rev is a commit-ish of the kunit-rcu repository at repo; tree is the
	prepared tree (default common.tree_dir(), looked up at call time).
	rev's patches/, overlay directories and kunitconfig are taken with git
	archive, the prepared tree of rev is rebuilt from them (rev_tree) and
	the result is git diff -U0 of it against HEAD.  The caller holds the
	tree lock (locks.tree()): prepare must not move HEAD meanwhile.
	"""
	tree = os.path.abspath(tree or tree_dir())
	if not _verify_commit(tree, 'pristine'):
		raise UserError(f'no prepared tree at {tree}: run make prepare first')
	commit = _verify_commit(repo, rev)
	if not commit:
		where = '' if os.path.abspath(repo) == REPO else f' -C {repo}'
		raise UserError(f'unknown revision REV={rev} in {repo}: name a commit of this '
				f'repository (list them with git{where} log --oneline)')
	with tempfile.TemporaryDirectory(prefix='kunit-rcu-rev-') as tmp:
		exported = os.path.join(tmp, 'repo')
		_export(repo, commit, exported)
		state = rev_tree(tree, exported, rev, os.path.join(tmp, 'index'))
	diff = _git_out(tree, 'diff', '-U0', '--no-renames', '--no-color', '--no-ext-diff',
			'--no-relative', '--src-prefix=a/', '--dst-prefix=b/', state, 'HEAD',
			'--', *C_PATHSPECS)
	return {path: lines for path, lines in parse_unified_zero(diff).items() if _is_c(path)}


def _wanted(path: str) -> bool:
	"""A file of the repository that the prepared tree is made of."""
	if '/' not in path:
		return path == 'kunitconfig' or path.startswith('kunitconfig.')
	return path.startswith('patches/') or any(path.startswith(d + '/') for d in OVERLAY_DIRS)


def _export(repo: str, commit: str, dest: str) -> None:
	"""Extracts commit's patches/, overlay directories and kunitconfig files into dest."""
	os.makedirs(dest, exist_ok=True)
	files = [p for p in _git_out(repo, 'ls-tree', '-r', '-z', '--name-only', commit).split('\0')
		 if p and _wanted(p)]
	if not files:
		return
	proc = subprocess.run(['git', '-C', repo, 'archive', '--format=tar', commit, '--', *files],
			      stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
	if proc.returncode != 0:
		raise subprocess.CalledProcessError(proc.returncode, ['git', 'archive', commit],
						    proc.stderr.decode(errors='replace'))
	with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
		# Debian 12's python3 (3.11.2) predates extraction filters (3.11.4)
		if hasattr(tarfile, 'data_filter'):
			tar.extractall(dest, filter='data')
		else:
			tar.extractall(dest)


def rev_tree(tree: str, repo: str, rev: str, index: str) -> str:
	"""The git tree of the prepared tree that repo (a checkout or export of rev) makes.

	What prepare commits in apply/, without a worktree or commits: in the
	temporary index file index, pristine, then each patch of repo's series
	applied like git am -3 does (git apply --cached -3), then repo's overlay
	files and kunitconfig as kernel/rcu/.kunitconfig; returns git
	write-tree's id.  (git am in a worktree costs about a second per patch
	on the kernel tree, re-reading its 75k-entry index each time.)  Writes
	only objects into tree's repository.
	"""
	env = dict(os.environ, GIT_INDEX_FILE=os.path.abspath(index))

	def tree_git(*args: str, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
		return subprocess.run(['git', '-C', tree, *args], env=env, input=stdin or '', text=True,
				      errors='backslashreplace', stdout=subprocess.PIPE,
				      stderr=subprocess.PIPE)

	def check(proc: subprocess.CompletedProcess) -> str:
		if proc.returncode != 0:
			raise subprocess.CalledProcessError(proc.returncode, proc.args,
							    proc.stdout + proc.stderr)
		return proc.stdout

	check(tree_git('read-tree', 'pristine'))
	for patch in series_patches(repo):
		proc = tree_git('apply', '--cached', '-3', patch)
		if proc.returncode != 0:
			why = [l for l in (proc.stderr + proc.stdout).splitlines()
			       if not l.startswith('Applied patch')]
			raise UserError(f'REV={rev}: series patch {os.path.basename(patch)} does not apply '
					'onto pristine and the patches before it:\n' +
					'\n'.join('    ' + l for l in why[:25]) +
					'\n  that revision cannot rebuild this tree: take a later REV '
					'(git log --oneline -- patches/)')
	files = {rel: os.path.join(repo, rel) for rel in overlay_files(repo)}
	if os.path.isfile(kunitconfig_path(repo)):
		# prepare copies kunitconfig there too
		files['kernel/rcu/.kunitconfig'] = kunitconfig_path(repo)
	if files:
		ids = check(tree_git('hash-object', '-w', '--stdin-paths',
				     stdin=''.join(p + '\n' for p in files.values()))).split()
		# New files, as prepare's copies are: mode 100644.
		check(tree_git('update-index', '--add', '-z', '--index-info',
			       stdin=''.join(f'100644 {i}\t{rel}\0' for rel, i in zip(files, ids))))
	return check(tree_git('write-tree')).strip()


# -- unified diffs -----------------------------------------------------------

_HUNK = re.compile(r'^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')


def parse_unified_zero(diff_text: str) -> Dict[str, Set[int]]:
	"""path -> new-side line numbers of the added lines, from git diff (-U0 or any -U).

	The path is the "+++ b/..." one; a deleted file ("+++ /dev/null")
	has none, and neither has a file whose hunks only delete ("+a,0").
	Files without an added line are absent.  A hunk ends when its
	header's line counts are used up.
	"""
	out: Dict[str, Set[int]] = {}
	path: Optional[str] = None
	line = old_left = new_left = 0
	for text in diff_text.split('\n'):
		if old_left > 0 or new_left > 0:
			kind = text[:1] or ' '  # an empty context line may have lost its space
			if kind == '+':
				if path is not None:
					out.setdefault(path, set()).add(line)
				line += 1
				new_left -= 1
			elif kind == '-':
				old_left -= 1
			elif kind == ' ':
				line += 1
				old_left -= 1
				new_left -= 1
			continue  # "\ No newline at end of file" counts nothing
		if text.startswith('diff '):
			path = None
		elif text.startswith('+++ '):
			path = _diff_path(text[4:])
		else:
			m = _HUNK.match(text)
			if m:
				old_left = int(m.group(1) or 1)
				line = int(m.group(2))
				new_left = int(m.group(3) or 1)
	return out


def _diff_path(name: str) -> Optional[str]:
	"""The path of a "+++ " line: None for /dev/null, else without the b/ prefix."""
	name = name.rstrip('\t')
	if name.startswith('"'):
		name = _unquote(name)
	if name == '/dev/null':
		return None
	return name[2:] if name.startswith('b/') else name


_ESCAPES = {'a': 7, 'b': 8, 't': 9, 'n': 10, 'v': 11, 'f': 12, 'r': 13, '"': 34, '\\': 92}


def _unquote(name: str) -> str:
	"""A path git quoted C-style ("...", \\t, \\ooo octal bytes of UTF-8)."""
	body = name[1:name.rindex('"')] if name.count('"') > 1 else name[1:]
	raw = bytearray()
	i = 0
	while i < len(body):
		c = body[i]
		if c == '\\' and i + 1 < len(body):
			nxt = body[i + 1]
			if nxt in '01234567':
				raw.append(int(body[i + 1:i + 4], 8) & 0xff)
				i += 4
				continue
			raw.append(_ESCAPES.get(nxt, ord(nxt)))
			i += 2
			continue
		raw += c.encode()
		i += 1
	return raw.decode(errors='replace')


# -- what the coverage gate counts -------------------------------------------

# KUnit test code: the gate measures the code under test, not the tests.
TEST_FILE_PATTERNS = ('*_kunit.c', '*_test.c', '*-test.c', '*kunit*.h')
TEST_DIRS = ('lib/kunit/', 'include/kunit/', 'tools/')
# The suites' shared library: code the suites run, reported and gated like kernel code.
LIBRARY_DIRS = ('lib/kunit-rcu/',)


def is_test_file(path: str) -> bool:
	"""Whether path (tree-relative) is KUnit test code, which the coverage gate does not count.

	Test code is: a file named *_kunit.c, *_test.c, *-test.c or *kunit*.h,
	and anything under lib/kunit/ and include/kunit/ (KUnit itself) and
	tools/ (kunit.py and its QEMU configs).  lib/kunit-rcu/, the library
	the suites share, is not: the report holds it to the gate like the
	kernel code the series changes (a case removed that was the only
	user of a helper shows up there).  This is the one place that rule
	lives.
	"""
	path = path[2:] if path.startswith('./') else path
	if path.startswith(LIBRARY_DIRS):
		return False
	if path.startswith(TEST_DIRS):
		return True
	name = os.path.basename(path)
	return any(fnmatchcase(name, p) for p in TEST_FILE_PATTERNS)


# -- functions gcov gives no counters ----------------------------------------

# Words that make a function noinstr (its definition carries them):
# noinstr includes __no_profile, which is no_profile_instrument_function.
NOINSTR_WORDS = ('noinstr', '__no_profile', 'no_profile_instrument_function',
		 '__no_profile_instrument_function__')

# Macros whose expansion ends in the declarator of a noinstr function, so
# that the { ... } after "DEFINE_IDTENTRY_RAW(exc_int3)" is a noinstr
# function although no "noinstr" is to be seen.  A scanner does not expand
# macros: they are recognised by name.  From arch/x86/include/asm/idtentry.h
# of 6.1.192-3: DEFINE_IDTENTRY_RAW and _RAW_ERRORCODE are "__visible
# noinstr void func(...)"; _NMI is _RAW; on x86_64 _IST, _DEBUG and _MCE
# are _RAW, _NOIST, _DEBUG_USER and _MCE_USER are _RAW(noist_##func), _DF
# and _VC_KERNEL/_VC_USER are _RAW_ERRORCODE; DEFINE_FREDENTRY_RAW is
# "noinstr void fred_##func(...)" and _NMI, _MCE, _DEBUG are it.  Not in
# the list: DEFINE_IDTENTRY, _ERRORCODE, _SW, _IRQ, _SYSVEC(_SIMPLE),
# whose noinstr wrapper is inside the macro and whose { ... } is the body
# of a static __always_inline or noinline __##func.
NOINSTR_MACROS = (
	'DEFINE_IDTENTRY_RAW', 'DEFINE_IDTENTRY_RAW_ERRORCODE', 'DEFINE_IDTENTRY_NMI',
	'DEFINE_IDTENTRY_IST', 'DEFINE_IDTENTRY_NOIST', 'DEFINE_IDTENTRY_DEBUG',
	'DEFINE_IDTENTRY_DEBUG_USER', 'DEFINE_IDTENTRY_MCE', 'DEFINE_IDTENTRY_MCE_USER',
	'DEFINE_IDTENTRY_DF', 'DEFINE_IDTENTRY_VC_KERNEL', 'DEFINE_IDTENTRY_VC_USER',
	'DEFINE_FREDENTRY_RAW', 'DEFINE_FREDENTRY_NMI', 'DEFINE_FREDENTRY_MCE',
	'DEFINE_FREDENTRY_DEBUG',
)

_NOINSTR = re.compile(r'\b(?:%s)\b|\b(?:%s)\s*\(' % ('|'.join(NOINSTR_WORDS),
						      '|'.join(NOINSTR_MACROS)))

# What the brace scanner must not look into: preprocessor lines (with
# their continuations and comments), comments, string and char literals.
# A literal ends at an unescaped newline, so a stray quote (#error don't)
# cannot swallow the file.
_LEXEME = re.compile(r'''
	(?P<pp> ^[ \t]*\#(?: \\\n | /\*.*?(?:\*/|\Z) | [^\n] )* )
	| (?P<comment> //(?: \\\n | [^\n] )* | /\*.*?(?:\*/|\Z) )
	| (?P<literal> "(?: \\. | [^"\\\n] )*"? | '(?: \\. | [^'\\\n] )*'? )
''', re.M | re.S | re.X)

# After the declaration's ")": attributes without parentheses (__acquires(x) ends in ")").
_DEFINITION_END = re.compile(r'\)(?:\s*__\w+)*\s*$')


def _code_only(text: str) -> str:
	"""text with comments blanked, literals emptied and each preprocessor line made a ";".

	Newlines are kept, so line numbers stay those of text.
	"""
	def blank(m: re.Match) -> str:
		keep = '\n' * m.group(0).count('\n')
		if m.lastgroup == 'pp':
			return ';' + keep  # a top-level declaration ends there
		if m.lastgroup == 'comment':
			return ' ' + keep
		return '""' + keep
	return _LEXEME.sub(blank, text)


def _outside_parens(decl: str) -> str:
	out = []
	depth = 0
	for c in decl:
		if c == '(':
			depth += 1
		elif c == ')':
			depth = max(depth - 1, 0)
		elif depth == 0:
			out.append(c)
	return ''.join(out)


def _is_noinstr_definition(decl: str) -> bool:
	"""decl (the code from the previous top-level ;, } or # line to a top-level {) starts a noinstr function."""
	decl = decl.strip()
	if not _DEFINITION_END.search(decl) or '=' in _outside_parens(decl):
		return False  # a struct, enum or initializer
	return bool(_NOINSTR.search(decl))


def noinstr_lines(text: str) -> Set[int]:
	"""The lines of the noinstr function definitions in C source text, 1-based.

	A function's lines are its declaration's first line through its
	closing brace.  noinstr functions are those whose declaration carries
	a word of NOINSTR_WORDS or starts with a macro of NOINSTR_MACROS; gcov
	gives them no counters (noinstr implies __no_profile), so the coverage
	report calls their lines not instrumentable.

	A small scanner, no preprocessor: it skips comments, literals and
	preprocessor lines and counts braces.  A function definition is a { at
	depth 0 preceded by ) (possibly with attributes between); its
	declaration starts after the previous top-level ;, } or preprocessor
	line, or after the last blank line before the {, if later: macro calls
	that define something without a ";" (arm64's UNHANDLED(el1t, 64, sync)
	lines) are not part of the next declaration.  Limits: a declaration
	split by #if/#else lines or by a blank line is not seen as one,
	macro calls without ";" right above a declaration are taken as part of
	it, and #if branches with unbalanced braces inside a function upset
	the depth count (kernel style avoids all of these).
	"""
	code = _code_only(text)
	newlines = [m.start() for m in re.finditer('\n', code)]
	blank = [n for n, row in enumerate(text.split('\n'), 1) if not row.strip()]

	def line_at(pos: int) -> int:
		return bisect.bisect_left(newlines, pos) + 1

	def after_last_blank_line(start: int, end: int) -> int:
		"""start, or the start of the line after the last blank line of start..end."""
		i = bisect.bisect_left(blank, line_at(end)) - 1
		if i >= 0 and blank[i] >= line_at(start):
			return newlines[blank[i] - 1] + 1
		return start

	out: Set[int] = set()
	depth = 0
	decl_start = 0
	func_start: Optional[int] = None
	for m in re.finditer(r'[{};]', code):
		c, pos = m.group(0), m.start()
		if depth == 0:
			if c == '{':
				decl_start = after_last_blank_line(decl_start, pos)
				decl = code[decl_start:pos]
				func_start = None
				if _is_noinstr_definition(decl):
					func_start = line_at(decl_start + len(decl) - len(decl.lstrip()))
				depth = 1
			else:  # ";" or a stray "}"
				decl_start = pos + 1
		elif c == '{':
			depth += 1
		elif c == '}':
			depth -= 1
			if depth == 0:
				if func_start is not None:
					out.update(range(func_start, line_at(pos) + 1))
				func_start = None
				decl_start = pos + 1
	return out
