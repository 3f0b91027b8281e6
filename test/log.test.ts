// infoLine: the line it writes for a fixed-shape record is the one pino writes for log.info of the
// same fields (members, order, escaping, undefined left out), on every logger it takes the fast
// path for; a logger with a mixin, a hook or a message prefix gets pino's own line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createLogger, infoLine, member, type Logger } from '../lib/log.ts';

interface Fields { req: string; org?: string; status: number; cost?: number; note?: string; ok?: boolean }
const serialize = (f: Fields): string =>
  member('req', f.req) + member('org', f.org) + member('status', f.status) + member('cost', f.cost) + member('note', f.note) + member('ok', f.ok);

function sink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  return { lines, stream: new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } }) };
}

/** The same record through infoLine and through pino's info, each on its own fresh logger. */
function both(make: (stream: Writable) => Logger, fields: Fields, msg: string): [string, string] {
  const a = sink();
  const b = sink();
  infoLine(make(a.stream), fields, serialize, msg);
  make(b.stream).info(fields, msg);
  assert.equal(a.lines.length, 1);
  assert.equal(b.lines.length, 1);
  return [a.lines[0]!, b.lines[0]!];
}

/** Two lines alike but for their times (written a moment apart). */
const withoutTime = (line: string): string => line.replace(/,"time":\d+/, ',"time":0');

const RECORDS: Fields[] = [
  { req: 'r1', org: 'org_1', status: 200, cost: 1234, ok: true },
  { req: 'r2', status: 502, note: 'quote " backslash \\ newline \n tab \t control \u0001 unicode é ✓', ok: false },
  { req: 'r3', org: undefined, status: 0, cost: Number.NaN },
  { req: 'r4', org: 'plain-id_01', status: 200, note: 'emoji 🙂, a line separator \u2028' },
];

test('infoLine writes what pino writes for log.info of the same fields: members, order, escaping', () => {
  const loggers: Array<[string, (s: Writable) => Logger]> = [
    ['the gateway logger', (s) => createLogger('info', s)],
    ['a child with bindings', (s) => createLogger('info', s).child({ component: 'x' })],
    ['a child with redaction', (s) => createLogger('info', s).child({}, { redact: { paths: ['key'], censor: '[redacted]' } })],
    ['pino with its default base (pid, hostname)', (s) => pino({ level: 'info' }, s)],
  ];
  for (const [name, make] of loggers) {
    for (const fields of RECORDS) {
      const [fast, pinos] = both(make, fields, 'request');
      assert.equal(withoutTime(fast), withoutTime(pinos), `${name}: ${JSON.stringify(fields)}`);
      assert.deepEqual(Object.keys(JSON.parse(fast)), Object.keys(JSON.parse(pinos)));
    }
  }
});

test('a lone surrogate is escaped, as JSON.stringify escapes it (pino writes it raw, which UTF-8 cannot carry)', () => {
  const s = sink();
  infoLine(createLogger('info', s.stream), { req: 'r5', status: 200, note: 'half \ud800 of a pair' }, serialize, 'request');
  assert.match(s.lines[0]!, /"note":"half \\ud800 of a pair"/);
  assert.equal(JSON.parse(s.lines[0]!).note, 'half \ud800 of a pair');
});

test('infoLine writes nothing below the logger level', () => {
  const s = sink();
  infoLine(createLogger('warn', s.stream), RECORDS[0]!, serialize, 'request');
  assert.deepEqual(s.lines, []);
});

test('a logger with a mixin, a log hook or a message prefix gets pino\'s own line', () => {
  const loggers: Array<[string, (s: Writable) => Logger]> = [
    ['mixin', (s) => pino({ base: undefined, mixin: () => ({ extra: 1 }) }, s)],
    ['logMethod hook', (s) => pino({ base: undefined, hooks: { logMethod(args, method) { method.apply(this, [args[0], `hooked ${String(args[1])}`]); } } }, s)],
    ['msgPrefix', (s) => pino({ base: undefined }, s).child({}, { msgPrefix: '[p] ' })],
    ['nestedKey', (s) => pino({ base: undefined, nestedKey: 'payload' }, s)],
  ];
  for (const [name, make] of loggers) {
    const [fast, pinos] = both(make, RECORDS[0]!, 'request');
    assert.equal(withoutTime(fast), withoutTime(pinos), name);
  }
  const [mixed] = both(loggers[0]![1], RECORDS[0]!, 'request');
  assert.equal(JSON.parse(mixed).extra, 1, 'the mixin ran');
});
