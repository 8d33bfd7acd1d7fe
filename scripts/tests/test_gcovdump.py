# SPDX-License-Identifier: GPL-2.0
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from kunit_rcu import gcovdump
from kunit_rcu.common import UserError
from kunit_rcu.gcovdump import DumpError

BUILD = '/home/u/.cache/kunit-rcu/6.1.192-3/src/.kunit'


def _files(seed: int) -> dict:
	"""Three fake .gcda contents: small, compressible, incompressible.

	The last two take several data lines each.
	"""
	rnd = random.Random(seed)
	return {
		'kernel/rcu/update.gcda': b'adcg' + bytes(20),
		'kernel/rcu/tree.gcda': b'adcgB21*' + bytes(range(256)) * 8,
		'kernel/rcu/rcu_kunit.gcda': rnd.randbytes(1000),
	}


def _console(dump: str) -> str:
	"""dump as a guest prints it: printk timestamps, other kernel lines in between."""
	out = ['[    0.000000] Linux version 6.1.192 (root@host) (gcc 12.2.0)']
	for i, line in enumerate(dump.splitlines()):
		out.append(f'[   {i // 1000:2d}.{i % 1000:06d}] {line}')
		if i % 7 == 3:
			out.append(f'[   {i // 1000:2d}.{i % 1000:06d}] rcu: unrelated line {i}')
		if i % 11 == 5:
			out.append('random noise without a timestamp: gcov-dump is not at the start')
	out.append('[   99.000000] reboot: Power down')
	return '\n'.join(out) + '\n'


INIT = _files(1)
RUN = _files(2)
DUMP = gcovdump.encode('init', INIT, BUILD) + gcovdump.encode('run', RUN, BUILD)
TREE = 'kernel/rcu/tree.gcda'


def _index(lines, pred, nth=0) -> int:
	return [i for i, line in enumerate(lines) if pred(line)][nth]


def _data_line(lines, phase='run', idx=1, nth=0) -> int:
	return _index(lines, lambda l: l.startswith(f'gcov-dump: {phase} data {idx} '), nth)


def _file_line(lines, phase='run', idx=1) -> int:
	return _index(lines, lambda l: l.startswith(f'gcov-dump: {phase} file {idx} '))


class DecodeTest(unittest.TestCase):
	def test_round_trip(self):
		got = gcovdump.decode(_console(DUMP), BUILD)
		self.assertEqual(list(got), ['init', 'run'])
		self.assertEqual(got['init'], INIT)
		self.assertEqual(got['run'], RUN)

	def test_several_data_lines_and_crlf(self):
		lines = DUMP.splitlines()
		self.assertGreater(sum(1 for l in lines if l.startswith('gcov-dump: run data 1 ')), 3)
		got = gcovdump.decode(_console(DUMP).replace('\n', '\r\n'), BUILD + '/')
		self.assertEqual(got['run'], RUN)

	def test_absent_phases(self):
		self.assertEqual(gcovdump.decode(_console(gcovdump.encode('init', INIT, BUILD)), BUILD),
				 {'init': INIT})
		self.assertEqual(gcovdump.decode('no dump at all\n', BUILD), {})
		self.assertEqual(gcovdump.decode(gcovdump.encode('run', {}, BUILD), BUILD), {'run': {}})

	def assertDamaged(self, lines, *words, file=TREE, phase='run'):
		"""decode() of lines raises a DumpError naming phase, file and each of words."""
		with self.assertRaises(DumpError) as cm:
			gcovdump.decode(_console('\n'.join(lines)), BUILD)
		msg = str(cm.exception)
		self.assertIn(f'phase {phase}', msg)
		if file:
			self.assertIn(file, msg)
			self.assertEqual(cm.exception.file, file)
		for word in words:
			self.assertIn(word, msg)
		return cm.exception

	def test_flipped_hex_digit(self):
		lines = DUMP.splitlines()
		i = _data_line(lines, nth=2)
		pos = len(lines[i]) - 10
		digit = lines[i][pos]
		lines[i] = lines[i][:pos] + ('0' if digit != '0' else '1') + lines[i][pos + 1:]
		err = self.assertDamaged(lines)
		self.assertRegex(str(err), 'zlib error|crc mismatch|raw size mismatch')

	def test_bad_hex(self):
		lines = DUMP.splitlines()
		i = _data_line(lines, nth=1)
		lines[i] = lines[i][:-3] + 'g' + lines[i][-2:]
		self.assertDamaged(lines, 'bad hex')
		lines = DUMP.splitlines()
		lines[i] = lines[i][:-1]  # odd number of digits
		self.assertDamaged(lines, 'bad hex')

	def test_dropped_data_line(self):
		lines = DUMP.splitlines()
		del lines[_data_line(lines, nth=1)]
		self.assertDamaged(lines, 'gap', 'expected 64')

	def test_dropped_last_data_line(self):
		lines = DUMP.splitlines()
		del lines[_index(lines, lambda l: l == 'gcov-dump: run end 1') - 1]
		self.assertDamaged(lines, 'compressed size mismatch')

	def test_repeated_data_line(self):
		lines = DUMP.splitlines()
		i = _data_line(lines, nth=1)
		lines.insert(i, lines[i])
		self.assertDamaged(lines, 'overlap')

	def test_truncated_in_a_file(self):
		lines = DUMP.splitlines()
		err = self.assertDamaged(lines[:_data_line(lines, nth=2)], 'truncated',
					 'no "run done"', 'cut after 128 of')
		self.assertEqual(list(err.complete), ['init'])
		self.assertEqual(err.complete['init'], INIT)

	def test_missing_done(self):
		lines = DUMP.splitlines()
		self.assertEqual(lines[-1], 'gcov-dump: run done 3')
		self.assertDamaged(lines[:-1], 'truncated', 'last file seen',
				   file='kernel/rcu/rcu_kunit.gcda')

	def test_missing_done_before_next_phase(self):
		lines = DUMP.splitlines()
		del lines[_index(lines, lambda l: l == 'gcov-dump: init done 3')]
		self.assertDamaged(lines, 'truncated', 'phase run began',
				   file='kernel/rcu/rcu_kunit.gcda', phase='init')

	def test_missing_end(self):
		lines = DUMP.splitlines()
		del lines[_index(lines, lambda l: l == 'gcov-dump: run end 1')]
		self.assertDamaged(lines, 'no "end" line')
		lines = DUMP.splitlines()
		del lines[_index(lines, lambda l: l == 'gcov-dump: run end 2')]
		self.assertDamaged(lines, 'no "end" line', file='kernel/rcu/rcu_kunit.gcda')

	def test_wrong_crc(self):
		lines = DUMP.splitlines()
		i = _file_line(lines)
		words = lines[i].split(' ')
		words[6] = f'{int(words[6], 16) ^ 1:08x}'
		lines[i] = ' '.join(words)
		self.assertDamaged(lines, 'crc mismatch')

	def test_wrong_rawsize(self):
		lines = DUMP.splitlines()
		for delta in (1, -1):
			with self.subTest(delta=delta):
				i = _file_line(lines)
				words = lines[i].split(' ')
				bad = words[:4] + [str(int(words[4]) + delta)] + words[5:]
				self.assertDamaged(lines[:i] + [' '.join(bad)] + lines[i + 1:],
						   'raw size mismatch')

	def test_wrong_zsize(self):
		lines = DUMP.splitlines()
		i = _file_line(lines)
		words = lines[i].split(' ')
		words[5] = str(int(words[5]) + 1)
		lines[i] = ' '.join(words)
		self.assertDamaged(lines, 'compressed size mismatch')

	def test_error_record(self):
		lines = DUMP.splitlines()
		first, end = _data_line(lines), _index(lines, lambda l: l == 'gcov-dump: run end 1')
		lines[first:end + 1] = ['gcov-dump: run error 1 -ENOMEM: out of memory']
		self.assertDamaged(lines, 'could not dump', '-ENOMEM: out of memory')

	def test_error_record_without_file_line(self):
		lines = DUMP.splitlines()
		i = _file_line(lines)
		end = _index(lines, lambda l: l == 'gcov-dump: run end 1')
		lines[i:end + 1] = ['gcov-dump: run error 1 -EFBIG']
		self.assertDamaged(lines, 'could not dump file 1', '-EFBIG', file=None)

	def test_path_outside_build_dir(self):
		other = gcovdump.encode('run', RUN, '/home/u/.cache/kunit-rcu/6.1.192-3/src/.kunit-arm64')
		err = self.assertDamaged(other.splitlines(), 'not under the build dir',
					 file='/home/u/.cache/kunit-rcu/6.1.192-3/src/.kunit-arm64/kernel/rcu/update.gcda')
		self.assertIn(BUILD, str(err))
		for path in ('/elsewhere/x.gcda', BUILD + '/../x.gcda', BUILD + 'x/y.gcda'):
			lines = DUMP.splitlines()
			i = _file_line(lines)
			lines[i] = ' '.join(lines[i].split(' ')[:7] + [path])
			with self.subTest(path=path):
				self.assertDamaged(lines, 'not under the build dir', file=path)

	def test_phase_printed_twice(self):
		twice = DUMP + gcovdump.encode('run', RUN, BUILD)
		self.assertDamaged(twice.splitlines(), 'printed twice', file=None)

	def test_file_count_mismatch(self):
		lines = DUMP.splitlines()
		i = _index(lines, lambda l: l == 'gcov-dump: run begin 3')
		lines[i] = 'gcov-dump: run begin 4'
		self.assertDamaged(lines, 'file count mismatch', file='kernel/rcu/rcu_kunit.gcda')
		lines[i] = 'gcov-dump: run begin 2'
		self.assertDamaged(lines, 'announced 2 files', file='kernel/rcu/rcu_kunit.gcda')

	def test_dropped_file_and_begin_lines(self):
		lines = DUMP.splitlines()
		del lines[_file_line(lines)]
		self.assertDamaged(lines, 'outside a file', file=None)
		lines = DUMP.splitlines()
		del lines[_index(lines, lambda l: l == 'gcov-dump: run begin 3')]
		with self.assertRaisesRegex(DumpError, 'before its "begin" line'):
			gcovdump.decode('\n'.join(lines), BUILD)

	def test_line_cut_by_other_output(self):
		lines = DUMP.splitlines()
		i = _data_line(lines, nth=1)
		lines[i] = lines[i][:50] + '[    3.000000] rcu: other CPU' + lines[i][50:]
		self.assertDamaged(lines, 'malformed "data" record')


C_HEADER = '''static inline int twice(int x)
{
	return 2 * x; /* TWICE */
}
'''
C_OUTSIDE = '''static inline int outside(int x)
{
	return x + 1;
}
'''
C_MAIN = '''#include "h.h"
#include "outside.h"
int b_fn(int);
int main(int argc, char **argv)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += twice(i); /* THRICE */
	if (argc > 5)
		s = 0; /* NEVER */
	return b_fn(outside(s)) > 1000;
}
'''
C_B = '''#include "../h.h"
int b_fn(int v)
{
	return twice(v); /* ONCE */
}
'''


def _line(text: str, marker: str) -> int:
	return [i for i, l in enumerate(text.splitlines(), 1) if marker in l][0]


@unittest.skipUnless(shutil.which('gcc'), 'gcc is missing')
class GcovTest(unittest.TestCase):
	"""A program compiled like kbuild compiles the kernel: from a build dir below the tree."""

	@classmethod
	def setUpClass(cls):
		cls.tmp = tempfile.mkdtemp(prefix='test_gcovdump.')
		cls.tree = os.path.join(cls.tmp, 'src')
		cls.build = os.path.join(cls.tree, '.kunit')
		outside = os.path.join(cls.tmp, 'include')
		for path, text in (('src/h.h', C_HEADER), ('src/a.c', C_MAIN), ('src/sub/b.c', C_B),
				   ('include/outside.h', C_OUTSIDE)):
			os.makedirs(os.path.dirname(os.path.join(cls.tmp, path)), exist_ok=True)
			with open(os.path.join(cls.tmp, path), 'w') as f:
				f.write(text)
		os.makedirs(os.path.join(cls.build, 'sub'))
		cls.cc = ['gcc', '--coverage', '-O0', '-I', outside, '-c']
		for src, obj in (('../a.c', 'a.o'), ('../sub/b.c', 'sub/b.o')):
			subprocess.run(cls.cc + [src, '-o', obj], cwd=cls.build, check=True)
		subprocess.run(['gcc', '--coverage', 'a.o', 'sub/b.o', '-o', 'prog'], cwd=cls.build,
			       check=True)
		subprocess.run(['./prog'], cwd=cls.build, check=True)
		cls.files = {}
		for rel in ('a.gcda', 'sub/b.gcda'):
			with open(os.path.join(cls.build, rel), 'rb') as f:
				cls.files[rel] = f.read()

	@classmethod
	def tearDownClass(cls):
		shutil.rmtree(cls.tmp)

	def objdir(self, name: str) -> str:
		console = _console(gcovdump.encode('run', self.files, self.build))
		files = gcovdump.decode(console, self.build)['run']
		self.assertEqual(files, self.files)
		outdir = os.path.join(self.tmp, name)
		written = gcovdump.write_objdir(files, self.build, outdir)
		self.assertEqual(written, [os.path.join(outdir, 'a.gcda'),
					   os.path.join(outdir, 'sub/b.gcda')])
		return outdir

	def test_line_counts(self):
		outdir = self.objdir('run')
		cov = gcovdump.coverage(gcovdump.gcov_tool('x86_64'), outdir, self.tree)
		counts = cov.lines
		self.assertEqual(sorted(counts), ['a.c', 'h.h', 'sub/b.c'])
		self.assertEqual(counts['a.c'][_line(C_MAIN, 'THRICE')], 3)
		self.assertEqual(counts['a.c'][_line(C_MAIN, 'NEVER')], 0)
		self.assertNotIn(_line(C_MAIN, 'int s = 0') - 1, counts['a.c'])  # "{": not executable
		self.assertEqual(counts['sub/b.c'][_line(C_B, 'ONCE')], 1)
		# The header's line runs 3 times from a.o and once from sub/b.o.
		self.assertEqual(counts['h.h'][_line(C_HEADER, 'TWICE')], 4)
		self.assertEqual(cov.functions['h.h']['twice'].count, 4)
		self.assertEqual((cov.functions['h.h']['twice'].start_line,
				  cov.functions['h.h']['twice'].end_line), (1, 4))
		self.assertEqual(cov.functions['a.c']['main'].count, 1)
		self.assertEqual(gcovdump.line_counts(gcovdump.gcov_tool('x86_64'), outdir, self.tree),
				 counts)

		since_boot = gcovdump.add_counts(counts, counts)
		self.assertEqual(since_boot['h.h'][_line(C_HEADER, 'TWICE')], 8)
		self.assertEqual(counts['h.h'][_line(C_HEADER, 'TWICE')], 4)

		lcov = os.path.join(self.tmp, 'run.info')
		gcovdump.write_lcov(counts, lcov, 'x86_64-default run', self.tree, cov.functions)
		with open(lcov) as f:
			text = f.read()
		self.assertIn('TN:x86_64_default_run\nSF:' + os.path.join(self.tree, 'a.c') + '\n', text)
		self.assertIn(f'DA:{_line(C_MAIN, "NEVER")},0\n', text)
		self.assertIn(f'DA:{_line(C_HEADER, "TWICE")},4\n', text)
		self.assertIn('FN:1,twice\nFNDA:4,twice\nFNF:1\nFNH:1\n', text)
		self.assertEqual(text.count('end_of_record'), 3)
		hits = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
			r'SF:\S+/(\S+)\n(?:.*\n)*?LF:(\d+)\nLH:(\d+)\nend_of_record', text)}
		self.assertEqual(hits['a.c'], (len(counts['a.c']),
					       sum(1 for c in counts['a.c'].values() if c)))

	def test_sources_outside_the_tree(self):
		outdir = self.objdir('outside')
		tool = gcovdump.gcov_tool('x86_64')
		with self.assertRaisesRegex(UserError, 'no source .* is under'):
			gcovdump.line_counts(tool, outdir, os.path.join(self.tmp, 'elsewhere'))
		# The tree moved (or a build dir reused a compile elsewhere): name the compile dir.
		moved = os.path.join(self.tmp, 'moved')
		shutil.copytree(self.tree, moved)
		counts = gcovdump.line_counts(tool, outdir, moved, os.path.join(moved, '.kunit'))
		self.assertEqual(counts['h.h'][_line(C_HEADER, 'TWICE')], 4)

	def test_stale_outdir_files_removed(self):
		outdir = os.path.join(self.tmp, 'stale')
		os.makedirs(os.path.join(outdir, 'old'))
		for name in ('old/x.gcda', 'old/x.gcno', 'keep.txt'):
			open(os.path.join(outdir, name), 'w').close()
		gcovdump.write_objdir(self.files, self.build, outdir)
		self.assertFalse(os.path.exists(os.path.join(outdir, 'old/x.gcda')))
		self.assertFalse(os.path.exists(os.path.join(outdir, 'old/x.gcno')))
		self.assertTrue(os.path.exists(os.path.join(outdir, 'keep.txt')))

	def test_missing_gcno(self):
		files = dict(self.files, **{'gone.gcda': self.files['a.gcda']})
		with self.assertRaisesRegex(DumpError, r'gone\.gcno is missing.*no longer matches.*rebuild'):
			gcovdump.write_objdir(files, self.build, os.path.join(self.tmp, 'missing'))

	def test_rebuilt_object(self):
		build = os.path.join(self.tmp, 'rebuilt')
		shutil.copytree(self.build, build)
		subprocess.run(self.cc + ['../src/a.c', '-o', 'a.o'], cwd=build, check=True)
		with self.assertRaisesRegex(DumpError, r'a\.gcno is from another compile.*rebuild'):
			gcovdump.write_objdir(self.files, build, os.path.join(self.tmp, 'rebuilt-out'))

	def test_gcov_failure_is_reported(self):
		outdir = self.objdir('broken')
		with open(os.path.join(outdir, 'sub/b.gcda'), 'wb') as f:
			f.write(b'garbage')
		with self.assertRaisesRegex(UserError, 'not a gcov data file'):
			gcovdump.line_counts(gcovdump.gcov_tool('x86_64'), outdir, self.tree)


class GcovToolTest(unittest.TestCase):
	def test_names(self):
		found = {'/usr/bin/aarch64-linux-gnu-gcov', '/usr/bin/gcov-13', '/usr/bin/gcov'}

		def which(name):
			path = '/usr/bin/' + name
			return path if path in found else None

		with mock.patch.object(gcovdump, '_major', return_value='13'), \
		     mock.patch.object(gcovdump.shutil, 'which', side_effect=which):
			self.assertEqual(gcovdump.gcov_tool('x86_64'), '/usr/bin/gcov-13')
			self.assertEqual(gcovdump.gcov_tool('arm64'), '/usr/bin/aarch64-linux-gnu-gcov')
			found.clear()
			with self.assertRaisesRegex(UserError, 'gcov-13 or gcov is missing.*apt-get install gcc$'):
				gcovdump.gcov_tool('x86_64')
			with self.assertRaisesRegex(UserError, 'apt-get install gcc-aarch64-linux-gnu'):
				gcovdump.gcov_tool('arm64')
		with self.assertRaises(UserError):
			gcovdump.gcov_tool('riscv')

	def test_lcov_without_functions(self):
		with tempfile.TemporaryDirectory() as tmp:
			path = os.path.join(tmp, 'x.info')
			gcovdump.write_lcov({'b.c': {3: 0, 1: 2}}, path, 't', '/tree')
			with open(path) as f:
				self.assertEqual(f.read(), 'TN:t\nSF:/tree/b.c\nDA:1,2\nDA:3,0\nLF:2\nLH:1\n'
						 'end_of_record\n')


if __name__ == '__main__':
	unittest.main()
