# SPDX-License-Identifier: GPL-2.0
"""Decodes the gcov data a guest prints on its console, and turns it into line counts.

A kernel built with CONFIG_GCOV_KERNEL prints the .gcda contents of its
profiled objects twice: "init" (boot up to the end of the initcalls) and
"run" (after a counter reset there, up to shutdown: the KUnit tests).
Each record is one console line, anywhere after its prefix:

    gcov-dump: <phase> begin <nfiles>
    gcov-dump: <phase> file <idx> <rawsize> <zsize> <crc32> <path>
    gcov-dump: <phase> data <idx> <offset> <hex>
    gcov-dump: <phase> end <idx>
    gcov-dump: <phase> done <nfiles>

idx counts 0..nfiles-1; rawsize is the length of the .gcda content,
zsize the length of its zlib stream, crc32 zlib.crc32() of the content
(8 lowercase hex digits); path is the .gcda path the object was compiled
with, under the build dir.  The data lines carry the zlib stream as
lowercase hex, at most 64 bytes a line, each line's offset being the
number of bytes on the file's earlier data lines.  Instead of data, the
kernel may print "gcov-dump: <phase> error <idx> <message>" for a file it
could not encode.  encode() prints the format.

decode() checks every record: a damaged or truncated dump raises
DumpError, it never silently gives less data.  write_objdir() puts a
phase's .gcda files next to the build's .gcno files, line_counts() runs
gcov on them, write_lcov() makes a tracefile for genhtml.
"""

import json
import os
import re
import shutil
import subprocess
import zlib
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from .common import ARCHES, UserError, check_arch

PHASES = ('init', 'run')
MARKER = 'gcov-dump: '
# Bytes of the zlib stream on one data line.
CHUNK = 64
# .gcda files per gcov process.
GCOV_BATCH = 200

_RECORD = re.compile(r'gcov-dump: (.*)$')
_HEX = re.compile(r'(?:[0-9a-f]{2})+')
_CRC = re.compile(r'[0-9a-f]{8}')
_NUM = re.compile(r'\d+')

# Debian package of each arch's gcov.
GCOV_PACKAGES = {'x86_64': 'gcc', 'arm64': 'gcc-aarch64-linux-gnu'}

# Line counts: source path relative to the tree -> {line number: count}.
Counts = Dict[str, Dict[int, int]]


class DumpError(UserError):
	"""The gcov dump in a console log is damaged, or does not match the build dir.

	phase and file (relative .gcda path, or None) say where; complete
	holds the phases that were decoded intact before the damage was found.
	"""

	def __init__(self, msg: str, phase: Optional[str] = None, file: Optional[str] = None):
		super().__init__(msg)
		self.phase = phase
		self.file = file
		self.complete: Dict[str, Dict[str, bytes]] = {}


def encode(phase: str, files: Dict[str, bytes], build_dir: str) -> str:
	"""The console lines a kernel prints for files ({path relative to build_dir: .gcda content})."""
	out = [f'{MARKER}{phase} begin {len(files)}']
	for idx, (rel, raw) in enumerate(files.items()):
		z = zlib.compress(raw)
		out.append(f'{MARKER}{phase} file {idx} {len(raw)} {len(z)} '
			   f'{zlib.crc32(raw):08x} {os.path.join(build_dir, rel)}')
		for off in range(0, len(z), CHUNK):
			out.append(f'{MARKER}{phase} data {idx} {off} {z[off:off + CHUNK].hex()}')
		out.append(f'{MARKER}{phase} end {idx}')
	out.append(f'{MARKER}{phase} done {len(files)}')
	return '\n'.join(out) + '\n'


@dataclass
class _File:
	idx: int
	rel: str
	rawsize: int
	zsize: int
	crc: int
	lineno: int
	chunks: List[bytes] = field(default_factory=list)
	received: int = 0


@dataclass
class _Phase:
	name: str
	nfiles: int
	lineno: int
	files: Dict[str, bytes] = field(default_factory=dict)
	cur: Optional[_File] = None
	last: Optional[_File] = None
	done: bool = False


def _under(path: str, roots: Iterable[str]) -> Optional[str]:
	"""path relative to the first of roots it is under, or None."""
	path = os.path.normpath(path)
	for root in roots:
		if path.startswith(root.rstrip('/') + '/'):
			return path[len(root.rstrip('/')) + 1:]
	return None


def _roots(d: str) -> List[str]:
	"""d as given and with symlinks resolved: a recorded path may use either."""
	roots = [os.path.normpath(os.path.abspath(d))]
	real = os.path.realpath(d)
	if real not in roots:
		roots.append(real)
	return roots


class _Decoder:
	def __init__(self, build_dir: str):
		self.build_dir = build_dir
		self.roots = _roots(build_dir)
		self.phases: Dict[str, _Phase] = {}
		self.open: Optional[_Phase] = None
		self.lineno = 0

	def error(self, phase: Optional[_Phase], what: str, f: Optional[_File] = None,
		  name: Optional[str] = None) -> DumpError:
		where = f'gcov dump, phase {phase.name}' if phase else 'gcov dump'
		rel = f.rel if f else name
		if rel:
			where += f', {rel}'
		at = f' (console line {self.lineno})' if self.lineno else ''
		err = DumpError(f'{where}: {what}{at}',
				phase.name if phase else None, rel)
		err.complete = {p.name: p.files for p in self.phases.values() if p.done}
		return err

	def truncated(self, ph: _Phase, why: str) -> DumpError:
		if ph.cur:
			last = (f'last file seen: {ph.cur.rel} (index {ph.cur.idx} of {ph.nfiles} files), '
				f'cut after {ph.cur.received} of {ph.cur.zsize} compressed bytes')
		elif ph.last:
			last = (f'last file seen: {ph.last.rel} (index {ph.last.idx} of {ph.nfiles} files), '
				'complete')
		else:
			last = f'no file of the {ph.nfiles} seen'
		return self.error(ph, f'truncated dump: no "{ph.name} done" line ({why}); {last}; '
				  'the guest stopped or the console lost output during the dump',
				  ph.cur or ph.last)

	def feed(self, lineno: int, payload: str) -> None:
		self.lineno = lineno
		words = payload.split()
		if len(words) < 3:
			raise self.error(self.open, f'malformed record "{payload}"')
		name, kind = words[0], words[1]
		if name not in PHASES:
			raise self.error(self.open, f'unknown phase "{name}" in "{payload}" '
					 f'(known: {", ".join(PHASES)})')
		if kind == 'begin':
			self.begin(name, words, payload)
			return
		ph = self.phases.get(name)
		if ph is None:
			raise self.error(None, f'"{kind}" record of phase {name} before its "begin" line '
					 f'(a line was lost): "{payload}"')
		if ph.done:
			raise self.error(ph, f'"{kind}" record after "{name} done": "{payload}"')
		handler = {'file': self.file, 'data': self.data, 'end': self.end,
			   'error': self.kernel_error, 'done': self.done}.get(kind)
		if handler is None:
			raise self.error(ph, f'unknown record "{kind}": "{payload}"', ph.cur)
		handler(ph, words, payload)

	def number(self, ph: Optional[_Phase], word: str, what: str, payload: str,
		   f: Optional[_File] = None, name: Optional[str] = None) -> int:
		if not _NUM.fullmatch(word):
			raise self.error(ph, f'malformed {what} "{word}" in "{payload}"', f, name)
		return int(word)

	def begin(self, name: str, words: List[str], payload: str) -> None:
		if len(words) != 3:
			raise self.error(None, f'malformed record "{payload}"')
		if name in self.phases:
			raise self.error(self.phases[name], f'phase printed twice (first "begin" on '
					 f'console line {self.phases[name].lineno})')
		if self.open:
			raise self.truncated(self.open, f'phase {name} began on console line {self.lineno}')
		ph = _Phase(name, 0, self.lineno)
		ph.nfiles = self.number(ph, words[2], 'file count', payload)
		self.phases[name] = ph
		self.open = ph

	def check_idx(self, ph: _Phase, word: str, kind: str, payload: str) -> _File:
		idx = self.number(ph, word, 'file index', payload, ph.cur)
		f = ph.cur
		if f is None:
			known = ph.last.rel if ph.last and ph.last.idx == idx else None
			raise self.error(ph, f'"{kind}" record of file {idx} outside a file (its "file" '
					 f'line was lost, or it came after "end"): "{payload}"', name=known)
		if idx != f.idx:
			raise self.error(ph, f'"{kind}" record of file {idx} while file {f.idx} is open '
					 f'(a line was lost): "{payload}"', f)
		return f

	def file(self, ph: _Phase, words: List[str], payload: str) -> None:
		if len(words) < 7:
			raise self.error(ph, f'malformed "file" record "{payload}"', ph.cur)
		if ph.cur:
			raise self.error(ph, f'no "end" line (file {ph.cur.idx}): the next "file" '
					 f'record began', ph.cur)
		path = payload.split(None, 6)[6]
		idx = self.number(ph, words[2], 'file index', payload, name=path)
		rawsize = self.number(ph, words[3], 'raw size', payload, name=path)
		zsize = self.number(ph, words[4], 'compressed size', payload, name=path)
		if not _CRC.fullmatch(words[5]):
			raise self.error(ph, f'malformed crc32 "{words[5]}"', name=path)
		rel = _under(path, self.roots)
		if rel is None:
			raise self.error(ph, f'path {path} is not under the build dir '
					 f'{self.build_dir}: the dump is from another build', name=path)
		if not rel.endswith('.gcda'):
			raise self.error(ph, f'path {path} is not a .gcda file', name=rel)
		expected = ph.last.idx + 1 if ph.last else 0
		if idx != expected:
			raise self.error(ph, f'file index {idx}, expected {expected} (a file was lost)',
					 name=rel)
		if idx >= ph.nfiles:
			raise self.error(ph, f'file {idx}, but "begin" announced {ph.nfiles} files',
					 name=rel)
		if rel in ph.files:
			raise self.error(ph, 'file printed twice', name=rel)
		ph.cur = _File(idx, rel, rawsize, zsize, int(words[5], 16), self.lineno)

	def data(self, ph: _Phase, words: List[str], payload: str) -> None:
		f = self.check_idx(ph, words[2], 'data', payload)
		if len(words) != 5:
			raise self.error(ph, f'malformed "data" record "{payload}"', f)
		off = self.number(ph, words[3], 'offset', payload, f)
		if off > f.received:
			raise self.error(ph, f'gap in data: offset {off}, expected {f.received} '
					 f'({off - f.received} bytes lost: a dropped data line)', f)
		if off < f.received:
			raise self.error(ph, f'overlap in data: offset {off}, expected {f.received} '
					 '(a repeated or damaged data line)', f)
		hexdata = words[4]
		if not _HEX.fullmatch(hexdata) or len(hexdata) > 2 * CHUNK:
			raise self.error(ph, f'bad hex at offset {off}: "{hexdata[:40]}'
					 f'{"..." if len(hexdata) > 40 else ""}" (not lowercase hex pairs '
					 f'or more than {CHUNK} bytes)', f)
		chunk = bytes.fromhex(hexdata)
		f.chunks.append(chunk)
		f.received += len(chunk)

	def end(self, ph: _Phase, words: List[str], payload: str) -> None:
		f = self.check_idx(ph, words[2], 'end', payload)
		if len(words) != 3:
			raise self.error(ph, f'malformed "end" record "{payload}"', f)
		if f.received != f.zsize:
			raise self.error(ph, f'compressed size mismatch: {f.received} bytes received, '
					 f'"file" line says {f.zsize}', f)
		d = zlib.decompressobj()
		try:
			raw = d.decompress(b''.join(f.chunks), f.rawsize + 1)
		except zlib.error as e:
			raise self.error(ph, f'zlib error: {e}', f)
		if len(raw) != f.rawsize or d.unconsumed_tail:
			raise self.error(ph, f'raw size mismatch: {len(raw)}'
					 f'{"+" if d.unconsumed_tail else ""} bytes decompressed, "file" '
					 f'line says {f.rawsize}', f)
		if not d.eof:
			raise self.error(ph, 'zlib error: incomplete stream', f)
		if d.unused_data:
			raise self.error(ph, f'zlib error: {len(d.unused_data)} bytes after the end '
					 'of the stream', f)
		crc = zlib.crc32(raw)
		if crc != f.crc:
			raise self.error(ph, f'crc mismatch: {crc:08x}, "file" line says {f.crc:08x}', f)
		ph.files[f.rel] = raw
		ph.last, ph.cur = f, None

	def kernel_error(self, ph: _Phase, words: List[str], payload: str) -> None:
		message = payload.split(None, 3)[3] if len(words) > 3 else '(no message)'
		idx = self.number(ph, words[2], 'file index', payload, ph.cur)
		# The kernel may give up on a file before or after its "file" line.
		f = ph.cur if ph.cur and ph.cur.idx == idx else None
		raise self.error(ph, f'"error" record: the kernel could not dump file {idx}: '
				 f'{message}', f)

	def done(self, ph: _Phase, words: List[str], payload: str) -> None:
		if len(words) != 3:
			raise self.error(ph, f'malformed "done" record "{payload}"', ph.cur)
		if ph.cur:
			raise self.error(ph, f'no "end" line (file {ph.cur.idx}) before "done"', ph.cur)
		n = self.number(ph, words[2], 'file count', payload)
		if n != ph.nfiles or len(ph.files) != ph.nfiles:
			raise self.error(ph, f'file count mismatch: "begin" says {ph.nfiles}, "done" says '
					 f'{n}, {len(ph.files)} decoded', ph.last)
		ph.done = True
		self.open = None

	def finish(self) -> Dict[str, Dict[str, bytes]]:
		self.lineno = 0
		if self.open:
			raise self.truncated(self.open, 'the console log ends')
		return {name: ph.files for name, ph in self.phases.items()}


def decode(console: str, build_dir: str) -> Dict[str, Dict[str, bytes]]:
	"""The gcov dumps in a console log: {phase: {path relative to build_dir: .gcda content}}.

	Only the phases printed are keys (in the order printed); a phase
	absent from the log is not an error here.  Raises DumpError on any
	damage, naming the phase and the file.
	"""
	dec = _Decoder(build_dir)
	for lineno, line in enumerate(console.split('\n'), 1):
		if MARKER not in line:
			continue
		m = _RECORD.search(line.rstrip('\r'))
		if m:
			dec.feed(lineno, m.group(1).strip())
	return dec.finish()


_GCDA_MAGIC = 0x67636461
_GCNO_MAGIC = 0x67636e6f


def _header(data: bytes) -> Optional[Tuple[int, int, int]]:
	"""(magic, version, stamp) of a .gcda or .gcno file, in its byte order, or None."""
	if len(data) < 12:
		return None
	for order in ('little', 'big'):
		magic = int.from_bytes(data[0:4], order)
		if magic in (_GCDA_MAGIC, _GCNO_MAGIC):
			return (magic, int.from_bytes(data[4:8], order), int.from_bytes(data[8:12], order))
	return None


def write_objdir(files: Dict[str, bytes], build_dir: str, outdir: str) -> List[str]:
	"""Writes <outdir>/<rel> for each .gcda and copies its .gcno from build_dir next to it.

	Returns the .gcda paths written.  .gcda and .gcno files already under
	outdir that are not of files are removed, so gcov on outdir sees this
	set only.  A .gcno missing from build_dir, or of another compile than
	the kernel that ran (its stamp differs), is a DumpError.
	"""
	written: List[str] = []
	wanted = set()
	for rel, raw in files.items():
		gcno_rel = rel[:-len('.gcda')] + '.gcno'
		gcno = os.path.join(build_dir, gcno_rel)
		if not os.path.isfile(gcno):
			raise DumpError(f'{gcno} is missing: the build dir no longer matches the kernel '
					f'that ran; rebuild the kernel and run it again', file=rel)
		data_hdr = _header(raw)
		if not data_hdr or data_hdr[0] != _GCDA_MAGIC:
			raise DumpError(f'gcov dump, {rel}: not .gcda data (bad header)', file=rel)
		with open(gcno, 'rb') as f:
			notes_hdr = _header(f.read(12))
		if not notes_hdr or notes_hdr[0] != _GCNO_MAGIC:
			raise DumpError(f'{gcno} is not a .gcno file: rebuild the kernel', file=rel)
		if notes_hdr[1:] != data_hdr[1:]:
			raise DumpError(f'{gcno} is from another compile than the kernel that ran (gcov '
					f'version/stamp {notes_hdr[1]:08x}/{notes_hdr[2]:08x}, the dump '
					f'has {data_hdr[1]:08x}/{data_hdr[2]:08x}): the build dir no longer '
					'matches that kernel; rebuild the kernel and run it again', file=rel)
		dest = os.path.join(outdir, rel)
		os.makedirs(os.path.dirname(dest), exist_ok=True)
		with open(dest, 'wb') as f:
			f.write(raw)
		shutil.copyfile(gcno, os.path.join(outdir, gcno_rel))
		written.append(dest)
		wanted.update((os.path.normpath(dest), os.path.normpath(os.path.join(outdir, gcno_rel))))
	for dirpath, _, names in os.walk(outdir):
		for name in names:
			path = os.path.normpath(os.path.join(dirpath, name))
			if name.endswith(('.gcda', '.gcno')) and path not in wanted:
				os.unlink(path)
	return written


def _major(cc: str) -> Optional[str]:
	try:
		out = subprocess.run([cc, '-dumpversion'], stdout=subprocess.PIPE,
				     stderr=subprocess.DEVNULL, text=True, check=True).stdout
	except (OSError, subprocess.CalledProcessError):
		return None
	m = re.match(r'(\d+)', out.strip())
	return m.group(1) if m else None


def gcov_tool(arch: str) -> str:
	"""The path of the gcov for arch's compiler: <prefix>gcov-<major>, else <prefix>gcov."""
	check_arch(arch)
	prefix = ARCHES[arch]['cross_compile'] or ''
	major = _major(ARCHES[arch]['cc'])
	names = ([f'{prefix}gcov-{major}'] if major else []) + [f'{prefix}gcov']
	for name in names:
		path = shutil.which(name)
		if path:
			return path
	raise UserError(f'{" or ".join(names)} is missing (gcov for ARCH={arch}): '
			f'apt-get install {GCOV_PACKAGES[arch]}')


@dataclass
class Function:
	name: str
	start_line: int
	end_line: int
	count: int  # calls, summed over the objects that have it


@dataclass
class Coverage:
	"""gcov's view of a set of .gcda files, by source path relative to the tree."""
	lines: Counts = field(default_factory=dict)
	functions: Dict[str, Dict[str, Function]] = field(default_factory=dict)


def _gcdas(objdir: str) -> List[str]:
	out = []
	for dirpath, dirs, names in os.walk(objdir):
		dirs.sort()
		out += [os.path.relpath(os.path.join(dirpath, n), objdir)
			for n in sorted(names) if n.endswith('.gcda')]
	return out


def _run_gcov(tool: str, objdir: str, batch: List[str]) -> List[dict]:
	cmd = [tool, '--json-format', '--stdout', *batch]
	try:
		proc = subprocess.run(cmd, cwd=objdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
				      stdin=subprocess.DEVNULL)
	except OSError as e:
		raise UserError(f'cannot run {tool}: {e}')
	err = proc.stderr.decode(errors='backslashreplace').strip()
	if proc.returncode != 0 or err:
		hint = ''
		if 'stamp mismatch' in err or 'cannot open notes' in err or 'version' in err:
			hint = (' (the .gcno files are not those of the kernel that ran, or gcov is not '
				'the compiler\'s version: rebuild, and use gcov_tool())')
		lines = err.splitlines()
		shown = '\n'.join(lines[:10]) + ('\n...' if len(lines) > 10 else '')
		raise UserError(f'{os.path.basename(tool)} failed (exit {proc.returncode}) in '
				f'{objdir}{hint}:\n{shown}')
	docs = []
	for line in proc.stdout.decode(errors='replace').splitlines():
		if line.strip():
			try:
				docs.append(json.loads(line))
			except ValueError as e:
				raise UserError(f'{os.path.basename(tool)} printed bad JSON in {objdir}: {e}')
	if len(docs) != len(batch):
		raise UserError(f'{os.path.basename(tool)} printed {len(docs)} JSON documents for '
				f'{len(batch)} .gcda files in {objdir}')
	return docs


def coverage(tool: str, objdir: str, tree: str, compile_dir: Optional[str] = None) -> Coverage:
	"""Runs gcov on every .gcda under objdir (each next to its .gcno).

	Source paths are made relative to tree; a relative one is first
	joined to compile_dir, by default to the compile dir each .gcno
	records (for a kernel, the build dir).  Sources outside the tree are
	left out; none inside it is a UserError.  A line or function in
	several objects (a header) has the sum of their counts.
	"""
	if not os.path.isdir(objdir):
		raise UserError(f'no gcov object dir {objdir} (see write_objdir())')
	roots = _roots(tree)
	cov = Coverage()
	gcdas = _gcdas(objdir)
	outside = set()
	for start in range(0, len(gcdas), GCOV_BATCH):
		for doc in _run_gcov(tool, objdir, gcdas[start:start + GCOV_BATCH]):
			cwd = compile_dir or doc.get('current_working_directory') or objdir
			for entry in doc.get('files', []):
				rel = _under(os.path.join(cwd, entry['file']), roots)
				if rel is None:
					outside.add(os.path.normpath(os.path.join(cwd, entry['file'])))
					continue
				lines = cov.lines.setdefault(rel, {})
				for ln in entry.get('lines', []):
					num = ln['line_number']
					lines[num] = lines.get(num, 0) + ln['count']
				funcs = cov.functions.setdefault(rel, {})
				for fn in entry.get('functions', []):
					old = funcs.get(fn['name'])
					if old:
						old.start_line = min(old.start_line, fn['start_line'])
						old.end_line = max(old.end_line, fn['end_line'])
						old.count += fn['execution_count']
					else:
						funcs[fn['name']] = Function(fn['name'], fn['start_line'],
									     fn['end_line'],
									     fn['execution_count'])
	if outside and not cov.lines:
		raise UserError(f'no source that gcov reports for {objdir} is under {tree} (e.g. '
				f'{sorted(outside)[0]}): wrong tree, or pass compile_dir')
	return cov


def line_counts(tool: str, objdir: str, tree: str, compile_dir: Optional[str] = None) -> Counts:
	"""{source path relative to tree: {line: count}} of the .gcda files under objdir.

	See coverage(), which also gives the functions.
	"""
	return coverage(tool, objdir, tree, compile_dir).lines


def add_counts(a: Counts, b: Counts) -> Counts:
	"""The per-line sum of a and b (e.g. init + run: since boot)."""
	out = {path: dict(lines) for path, lines in a.items()}
	for path, lines in b.items():
		mine = out.setdefault(path, {})
		for num, count in lines.items():
			mine[num] = mine.get(num, 0) + count
	return out


def write_lcov(counts: Counts, path: str, test_name: str, tree: str,
	       functions: Optional[Dict[str, Dict[str, Function]]] = None) -> None:
	"""Writes counts as an lcov tracefile (SF: absolute under tree, so genhtml finds the sources)."""
	tn = re.sub(r'\W', '_', test_name)
	root = os.path.abspath(tree)
	out = []
	for src in sorted(counts):
		out.append(f'TN:{tn}')
		out.append(f'SF:{os.path.join(root, src)}')
		funcs = sorted((functions or {}).get(src, {}).values(),
			       key=lambda f: (f.start_line, f.name))
		for fn in funcs:
			out.append(f'FN:{fn.start_line},{fn.name}')
		for fn in funcs:
			out.append(f'FNDA:{fn.count},{fn.name}')
		if functions is not None:
			out.append(f'FNF:{len(funcs)}')
			out.append(f'FNH:{sum(1 for fn in funcs if fn.count)}')
		lines = counts[src]
		for num in sorted(lines):
			out.append(f'DA:{num},{lines[num]}')
		out.append(f'LF:{len(lines)}')
		out.append(f'LH:{sum(1 for c in lines.values() if c)}')
		out.append('end_of_record')
	tmp = path + '.tmp'
	with open(tmp, 'w') as f:
		f.write('\n'.join(out) + ('\n' if out else ''))
	os.replace(tmp, path)
