// The profile classifier of bench/where-time-goes.ts: each sample goes to the part of the first
// frame, leaf up, that belongs to one. Checked on hand-made .cpuprofiles, one of them of the
// gateway's real bundle, placed in its source files through bundle.ts's source map.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { whereTimeGoes } from '../../bench/where-time-goes.ts';
import { bundledChild, bundleLocator } from '../../bench/bundle.ts';

/** A profile whose samples each end in one path of frames (root first), `us` µs each; a frame may
 *  say where its function is in its script (line and column from 0, as V8 counts). */
type Frame = [fn: string, url: string, position?: [line: number, column: number]];
function profileOf(paths: { frames: Frame[]; us: number }[]): string {
  const nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber?: number; columnNumber?: number }; children: number[] }[] = [];
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  for (const { frames, us } of paths) {
    let parent: (typeof nodes)[number] | undefined;
    for (const [functionName, url, position] of frames) {
      const callFrame = position ? { functionName, url, lineNumber: position[0], columnNumber: position[1] } : { functionName, url };
      const node = { id: nodes.length + 1, callFrame, children: [] as number[] };
      nodes.push(node);
      parent?.children.push(node.id);
      parent = node;
    }
    samples.push(parent!.id);
    timeDeltas.push(us);
  }
  const dir = mkdtempSync(join(tmpdir(), 'wtg-'));
  const file = join(dir, 'p.cpuprofile');
  writeFileSync(file, JSON.stringify({ nodes, samples, timeDeltas }));
  return file;
}

test("a Buffer method counts for its caller's part; node's http and socket writes for every proxy's", () => {
  const file = profileOf([
    // the body's toString called by the body reader: body parsing, not node's http
    { frames: [['check', 'file:///app/lib/http/pipeline.ts'], ['parseJsonObject', 'file:///app/lib/http/body.ts'], ['toString', 'node:buffer'], ['slice', 'node:buffer'], ['utf8Slice', '']], us: 100 },
    // Buffer.concat in the byte splice: request translation
    { frames: [['build', 'file:///app/lib/providers/openai.ts'], ['spliceMembers', 'file:///app/lib/json-skip.ts'], ['concat', 'node:buffer'], ['_copyActual', 'node:buffer']], us: 30 },
    // a response write: node's http
    { frames: [['end', 'node:_http_outgoing'], ['clearBuffer', 'node:internal/streams/writable'], ['writev', '']], us: 50 },
    // a Buffer made by node's http parser stays node's http
    { frames: [['parserOnBody', 'node:_http_common'], ['slice', 'node:buffer']], us: 7 },
    { frames: [['(garbage collector)', '']], us: 20 },
  ]);
  try {
    const us = whereTimeGoes(file);
    assert.equal(us.get('request body parsing'), 100);
    assert.equal(us.get('request translation + serialization'), 30);
    assert.equal(us.get('sockets + node http (every proxy pays)'), 57);
    assert.equal(us.get('garbage collection'), 20);
  } finally {
    rmSync(join(file, '..'), { recursive: true, force: true });
  }
});

test('a bundled function is placed in its source file through the bundle\'s map', async () => {
  const bundle = await bundledChild('gateway-child');
  const text = readFileSync(bundle, 'utf8');
  /** Where a function is declared in the bundle, as V8 counts (line and column from 0). */
  const position = (fn: string): [number, number] => {
    const at = text.indexOf(`function ${fn}(`);
    assert.ok(at > 0, fn);
    return [text.slice(0, at).split('\n').length - 1, at - (text.lastIndexOf('\n', at - 1) + 1)];
  };
  const locate = await bundleLocator('gateway-child');
  const url = pathToFileURL(bundle).href;
  assert.match(locate(url, ...position('checkRequest')), /lib\/routing\/validate\.ts$/);
  assert.match(locate(url, ...position('handleInference')), /lib\/http\/pipeline\.ts$/);
  assert.equal(locate('node:internal/streams/writable', 1, 2), 'node:internal/streams/writable');
  // A profile of the bundle: without the map every bundled function is the bench's (glue); with
  // it, validation is validation.
  const file = profileOf([{ frames: [['handleInference', url, position('handleInference')], ['checkRequest', url, position('checkRequest')]], us: 10 }]);
  try {
    assert.equal(whereTimeGoes(file).get('pipeline + server glue'), 10);
    assert.equal(whereTimeGoes(file, locate).get('validation (ajv + rules)'), 10);
  } finally {
    rmSync(join(file, '..'), { recursive: true, force: true });
  }
});
