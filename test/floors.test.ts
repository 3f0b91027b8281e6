// The floors of lib/: every import goes to the same floor or a lower one, never up, so each floor
// can be read (and tested) with only the floors below it in mind. The table below is the layout
// (README "Layout" says the same in prose); a file no entry places fails the test, so a new module
// is given a floor when it is written. Inside the formats floor, a codec folder
// (lib/formats/<format>/) imports nothing from another codec's folder: adding a format is one
// folder plus one line of lib/formats/index.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LIB = resolve(import.meta.dirname, '../lib');

/** Lowest first. An entry ending in '/' is a folder (everything under it), else one file. */
const FLOORS: Array<{ name: string; members: string[] }> = [
  // The vocabulary every floor speaks: the IR and route names, errors, SSE framing, header and
  // timeout shapes, time, logging, metrics and JSON helpers. Imports nothing of the gateway's.
  {
    name: 'ground',
    members: ['ir.ts', 'routes.ts', 'errors.ts', 'sse.ts', 'headers.ts', 'timeouts.ts', 'clock.ts', 'log.ts', 'metrics.ts', 'json-skip.ts',
      'json-util.ts', 'random-id.ts', 'batched-prune.ts', 'sqlite-lock.ts'],
  },
  // One concern each, knowing only the ground: wire formats, provider adapters, and the records
  // beside them (the model catalog, the money ledger, the abuse limits, the usage records, the
  // built-in provider simulator).
  { name: 'formats and providers', members: ['formats/', 'providers/', 'catalog/', 'ledger/', 'limits/', 'usage/', 'simulator/'] },
  // One upstream attempt and the caller's answer: pools, framing, passthrough and translation.
  { name: 'stream', members: ['stream/'] },
  // The race between attempts (xstate).
  { name: 'machine', members: ['machine/'] },
  // Validation, planning, the flex policy and its slots.
  { name: 'routing', members: ['routing/'] },
  // Assembly of the floors below: the configuration (each floor owns its settings and defaults),
  // the stores that open the ledger and the organizations, and the Services bundle http receives.
  { name: 'wiring', members: ['config.ts', 'store/', 'services.ts'] },
  // The HTTP surface (the dashboard's static files are served from here).
  { name: 'http', members: ['http/', 'dashboard/'] },
  // Process entry points.
  { name: 'app', members: ['app.ts', 'main.ts', 'run-demo.ts', 'cli.ts', 'migrate-to-postgres.ts'] },
];

function floorOf(file: string): number {
  const rel = relative(LIB, file);
  const i = FLOORS.findIndex((f) => f.members.some((m) => (m.endsWith('/') ? rel.startsWith(m) : rel === m)));
  assert.notEqual(i, -1, `lib/${rel} has no floor: add it to FLOORS in test/floors.test.ts and to README "Layout"`);
  return i;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []);
}

// A statement that starts a line: `import …from '…'`, `export …from '…'` (type-only and
// multi-line ones too), a bare `import '…'`; and a dynamic `import('…')` outside a comment line.
const STATIC = /^[ \t]*(?:import|export)\b[^;'"]*?(?:\bfrom[ \t]*)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /^(?![ \t]*(?:\/\/|\*)).*?\bimport\([ \t]*['"]([^'"]+)['"][ \t]*\)/gm;

/** Every relative module a file names, with the line that names it. */
function importsOf(file: string): Array<{ target: string; line: number }> {
  const text = readFileSync(file, 'utf8');
  const lineAt = (index: number): number => text.slice(0, index).split('\n').length;
  return [...text.matchAll(STATIC), ...text.matchAll(DYNAMIC)]
    .filter((m) => m[1]!.startsWith('.'))
    .map((m) => ({ target: resolve(dirname(file), m[1]!), line: lineAt(m.index! + m[0].lastIndexOf(m[1]!)) }));
}

const FILES = tsFiles(LIB);
const EDGES = FILES.flatMap((from) => importsOf(from).filter((i) => i.target.startsWith(LIB + '/')).map((i) => ({ from, ...i })));
const where = (e: { from: string; line: number; target: string }): string =>
  `lib/${relative(LIB, e.from)}:${e.line} → lib/${relative(LIB, e.target)}`;

test('the import parser sees the imports lib has (a parser that saw none would pass everything)', () => {
  const sample = [
    "import type { A } from './a.ts';", 'import {', '  b,', "} from '../b.ts';", "export { c } from './c.ts';",
    "import './d.ts';", "  const m = await import('./e.ts');", "// import('./not-me.ts') in a comment",
    " * import { x } from './nor-me.ts' in a doc comment", "const s = 'import from here';",
  ].join('\n');
  const named = [...sample.matchAll(STATIC), ...sample.matchAll(DYNAMIC)].map((m) => m[1]);
  assert.deepEqual(named.sort(), ['../b.ts', './a.ts', './c.ts', './d.ts', './e.ts']);
  assert.ok(FILES.length > 100, `${FILES.length} files`);
  assert.ok(EDGES.length > 300, `${EDGES.length} imports`);
  const pipeline = EDGES.filter((e) => e.from.endsWith('http/pipeline.ts')).map((e) => relative(LIB, e.target));
  assert.ok(pipeline.includes('routing/validate.ts') && pipeline.includes('stream/respond.ts'), pipeline.join(', '));
  // A dynamic import counts too.
  assert.ok(EDGES.some((e) => e.from.endsWith('app.ts') && e.target.endsWith('simulator/server.ts')));
});

test('every file of lib/ has a floor', () => {
  for (const f of FILES) floorOf(f);
});

type Edge = { from: string; target: string; line: number };
const upward = (edges: Edge[]): string[] => edges.filter((e) => floorOf(e.target) > floorOf(e.from))
  .map((e) => `${where(e)} (${FLOORS[floorOf(e.from)]!.name} imports ${FLOORS[floorOf(e.target)]!.name})`);

test('no import runs up the floors', () => {
  assert.deepEqual(upward(EDGES), []);
});

test('a codec folder imports no other codec folder (shared helpers live in lib/formats/*.ts)', () => {
  const codecFolder = (file: string): string | undefined => /^formats\/([^/]+)\//.exec(relative(LIB, file))?.[1];
  const crossing = EDGES.filter((e) => {
    const from = codecFolder(e.from);
    const to = codecFolder(e.target);
    return from !== undefined && to !== undefined && from !== to;
  }).map(where);
  assert.deepEqual(crossing, []);
});

test('the floor check itself: an upward import is reported, a downward or level one is not', () => {
  const edge = (from: string, target: string): Edge => ({ from: join(LIB, from), target: join(LIB, target), line: 1 });
  assert.deepEqual(upward([edge('stream/respond.ts', 'http/reply.ts')]),
    ['lib/stream/respond.ts:1 → lib/http/reply.ts (stream imports http)']);
  assert.equal(upward([edge('sse.ts', 'formats/types.ts')]).length, 1);
  assert.deepEqual(upward([edge('http/reply.ts', 'formats/index.ts'), edge('providers/bedrock.ts', 'formats/messages/betas.ts')]), []);
});
