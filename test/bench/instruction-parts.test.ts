// The pieces of bench/instruction-parts.ts on hand-made input: node's perf map read and searched,
// a callgrind dump written with --dump-instr=yes (compressed names, relative addresses, calls),
// natives' counts passed up to their JavaScript callers, and a function placed in its file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OUTSIDE_JS, byJavaScript, functionName, fileOf, functionAt, namer, readDump, readPerfMap } from '../../bench/instruction-parts.ts';

const MAP = readPerfMap([
  '2000 100 JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346',
  '1000 80 JS:*handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302',
  '1000 40 JS:^handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302',
  '3000 10 RegExp:^Bearer',
  '',
].join('\n'));

test('the perf map: the function whose code holds an address, the later entry where a range was reused', () => {
  assert.equal(functionAt(MAP, 0x2000), 'JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346');
  assert.equal(functionAt(MAP, 0x20ff), 'JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346');
  assert.equal(functionAt(MAP, 0x2100), undefined, 'just past its end');
  assert.equal(functionAt(MAP, 0x1010), 'JS:^handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302', 'the later of two at one start');
  assert.equal(functionAt(MAP, 0x1050), 'JS:*handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302', 'only the longer one covers it');
  assert.equal(functionAt(MAP, 0x500), undefined);
});

// JIT code (`0x…` functions) at 0x1000 calls a builtin; the builtin calls the runtime; JIT code at
// 0x2000 calls the same builtin; a native with no caller; names compressed after first use;
// addresses relative after the first.
const DUMP = `version: 1
positions: instr
events: Ir

fn=(1) 0x0000000000001000
0x1004 30
+4 10
cfn=(2) Builtins_LoadIC
calls=3 0x9000
* 90

fn=(3) 0x0000000000002000
0x2010 20
cfn=(2)
calls=1 0x9000
+2 30

fn=(2)
0x9000 100
cfn=(4) Runtime_GetProperty
calls=2 0x9100
+8 20

fn=(4)
0x9100 20

fn=(5) main
0x7000 5
`;

test("a dump: each function's own count by name, JIT code named through the map, and each call's cost", () => {
  const counts = readDump(DUMP, namer(MAP));
  const hi = 'JS:^handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302';
  const pick = 'JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346';
  assert.deepEqual(Object.fromEntries(counts.self), { [hi]: 40, [pick]: 20, Builtins_LoadIC: 100, Runtime_GetProperty: 20, main: 5 });
  assert.equal(counts.total, 185);
  assert.deepEqual(Object.fromEntries(counts.calls.get('Builtins_LoadIC')!), { [hi]: 90, [pick]: 30 });
  assert.deepEqual(Object.fromEntries(counts.calls.get('Runtime_GetProperty')!), { Builtins_LoadIC: 20 });
});

test('natives go to their JavaScript callers in proportion to what each call cost; one with no caller stays', () => {
  const hi = 'JS:^handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302';
  const pick = 'JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346';
  const parts = byJavaScript(readDump(DUMP, namer(MAP)));
  // LoadIC (100) and the runtime under it (20): 3/4 to handleInference, 1/4 to pickInto.
  assert.deepEqual(Object.fromEntries(parts), { [hi]: 40 + 90, [pick]: 20 + 30, main: 5 });
  assert.equal([...parts.values()].reduce((a, b) => a + b, 0), 185, 'nothing lost');
});

test("a function's file: lib/ through the bundle's map, a package by name, node's own modules as named", () => {
  const locate = (url: string, line: number): string =>
    url.endsWith('/dist/bench/gateway-child.mjs') ? (line === 1143 ? '/x/lib/json-skip.ts' : '/x/node_modules/@scope/pkg/lib/a.js') : url;
  assert.equal(fileOf('JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346', locate), 'lib/json-skip.ts');
  assert.equal(fileOf('JS:*f file:///x/dist/bench/gateway-child.mjs:9:1', locate), '@scope/pkg');
  assert.equal(fileOf('JS:*clearBuffer node:internal/streams/writable:744:21', locate), 'node:internal/streams/writable');
  assert.equal(fileOf('Builtins_LoadIC', locate), 'Builtins_LoadIC');
});

test('functionName: a JIT function named without its place, tier mark or not', () => {
  assert.equal(functionName('JS:*pickInto file:///x/dist/bench/gateway-child.mjs:1144:6346'), 'pickInto');
  assert.equal(functionName('JS:^handleInference file:///x/g.mjs:1:2'), 'handleInference');
  assert.equal(functionName('JS:~ file:///x/g.mjs:1:2'), '(anonymous)');
  assert.equal(functionName('JIT?'), 'JIT?');
});

test("natives under callgrind's root go outside JavaScript, not to the JIT code callgrind says called the root", () => {
  const dump = `version: 1
positions: instr
events: Ir

fn=(1) 0x0000000000001000
0x1004 10
cfn=(2) (below main)
calls=1 0x8000
* 60

fn=(2)
0x8000 1
cfn=(3) uv_run
calls=1 0x8100
+1 59

fn=(3)
0x8100 9
cfn=(4) uv__io_poll
calls=1 0x8200
+1 50

fn=(4)
0x8200 50
`;
  const parts = byJavaScript(readDump(dump, namer(MAP)));
  const hi = 'JS:^handleInference file:///x/dist/bench/gateway-child.mjs:1201:25302';
  // uv__io_poll (50), uv_run (9) and the root's own 1: outside JavaScript.
  assert.deepEqual(Object.fromEntries(parts), { [hi]: 10, [OUTSIDE_JS]: 60 });
});
