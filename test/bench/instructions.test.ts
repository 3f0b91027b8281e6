// The callgrind dump reader of bench/instructions.ts, on hand-made dump files: with
// --separate-threads callgrind writes one file per thread of each dump, and the count is the last
// dump's main thread (01) and its sum over every thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastDumpTotals } from '../../bench/instructions.ts';

function dumpDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'instr-test-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const dump = (total: number, key = 'totals'): string => `version: 1\ncreator: callgrind-3.19.0\nevents: Ir\n${key}: ${total}\n`;

test('the last dump: its main thread, and the sum over its threads; earlier dumps and other files left out', () => {
  const dir = dumpDir({
    cg: dump(1), // the dump valgrind writes at exit has no part number
    'cg.1-01': dump(1_000), 'cg.1-03': dump(500),
    'cg.2-01': dump(3_000), 'cg.2-02': dump(0, 'summary'), 'cg.2-04': dump(700),
  });
  try {
    assert.deepEqual(lastDumpTotals(dir), { main: 3_000, all: 3_700 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the tenth dump is later than the ninth (by number, not by name), and a dump without a main thread is refused', () => {
  const dir = dumpDir({ 'cg.9-01': dump(9), 'cg.10-01': dump(10), 'cg.10-02': dump(5) });
  const noMain = dumpDir({ 'cg.1-02': dump(5) });
  try {
    assert.deepEqual(lastDumpTotals(dir), { main: 10, all: 15 });
    assert.throws(() => lastDumpTotals(noMain), /no main thread/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(noMain, { recursive: true, force: true });
  }
});
