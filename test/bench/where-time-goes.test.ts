// The profile classifier of bench/where-time-goes.ts: each sample goes to the part of the first
// frame, leaf up, that belongs to one. Checked on a hand-made .cpuprofile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { whereTimeGoes } from '../../bench/where-time-goes.ts';

/** A profile whose samples each end in one path of frames (root first), `us` µs each. */
function profileOf(paths: { frames: [fn: string, url: string][]; us: number }[]): string {
  const nodes: { id: number; callFrame: { functionName: string; url: string }; children: number[] }[] = [];
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  for (const { frames, us } of paths) {
    let parent: (typeof nodes)[number] | undefined;
    for (const [functionName, url] of frames) {
      const node = { id: nodes.length + 1, callFrame: { functionName, url }, children: [] as number[] };
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
