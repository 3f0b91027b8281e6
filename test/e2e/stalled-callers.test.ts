// The memory proof, with real processes: 20 callers open 60k-token streams and stop
// reading. The gateway (its own process) must stay under its idle resident memory + 20 × 256 KiB,
// because it stops reading the provider when a caller's socket is full; and the provider (the
// simulator, in this process) must be paused: every stream waiting for 'drain', having written a
// small part of its answer. Before backpressure, each such stream cost ≈ 10.9 MiB. How much of a
// stream the kernel's socket buffers absorb depends on their autotuning (up to 32 MiB of receive
// buffer per socket here): a stream they take whole is finished, not paused, and costs the gateway
// nothing either; the test waits until every stream is one or the other, and needs one paused.
//
// Resident memory is read from /proc after a full garbage collection, asked of the gateway's V8
// from outside through its inspector (no hook in the gateway), so garbage on neither side of the
// comparison counts. Idle is measured after a warm-up of 20 concurrent streams read at full speed:
// the allocator then already holds what such a burst takes (malloc keeps freed memory), which a
// process that served only small requests would still have to grow into — measured that way the
// same run showed ≈ 17 MiB of allocator growth, live memory unchanged. Measured here: 1–1.5 MiB
// over idle for the 20 stalled streams, of 5 MiB allowed (the unbounded gateway took 218 MiB).
// Kernel socket buffers hold much of each stream (≈ 9 of its 14 MiB on this machine's loopback),
// outside the process; the simulator's writers wait on 'drain' for the rest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { DEFAULT_TIMEOUTS } from '../../lib/config.ts';
import { spawnGateway } from '../helpers/gateway-process.ts';
import { connectInspector, rssBytes, type Inspector } from '../helpers/inspector.ts';
import { sim, waitFor } from '../helpers/wait.ts';

const ADMIN = 'stalled-callers-admin';
const CALLERS = 20;
const TOKENS = 60_000;
const WARM_TOKENS = 20_000;
const PER_STREAM = 256 * 1024;

test('20 callers that stop reading 60k-token streams: gateway RSS ≤ idle + 20 × 256 KiB, the simulator paused', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-stalled-'));
  const simulator = await startSimulator();
  const gw = await spawnGateway({
    GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: ADMIN, GATEWAY_SECRET_KEY: 'stalled-secret', SIM_URL: simulator.url,
    GATEWAY_DATABASE_URL: '',
    // The caller-idle cut-off (60 s by default) must not end the stalled streams while a loaded
    // machine runs this test: it is proven in backpressure.test.ts.
    CHILD_CONFIG: JSON.stringify({ timeouts: { ...DEFAULT_TIMEOUTS, caller_idle_ms: 0 } }),
  }, { inspect: true });
  const inspector = await connectInspector(gw.inspectorUrl!);
  const callers: IncomingMessage[] = [];
  try {
    const key = await orgWithOwnKey(gw.url);
    const streamBody = responsesStream(`long ${sim({ output_tokens: TOKENS })}`);

    // Warm-up: 20 concurrent streams read to their end, so idle is a process that has served such a burst.
    const warmBody = responsesStream(`warm ${sim({ output_tokens: WARM_TOKENS })}`);
    const whole = await Promise.all(Array.from({ length: CALLERS }, async () => readAll(await openStream(gw.url, key, warmBody))));
    const streamBytes = whole[0]! * TOKENS / WARM_TOKENS;
    const idle = await settledRss(inspector, gw.pid);
    const idleHeap = await inspector.memoryUsage();

    const { streams } = simulator.stats;
    const written0 = streams.bytesWritten;
    const finished0 = streams.finished;
    for (let i = 0; i < CALLERS; i++) {
      const res = await openStream(gw.url, key, streamBody);
      assert.equal(res.statusCode, 200);
      res.pause();            // … and never read again
      callers.push(res);
    }
    // Not a timing bound: on a loaded 2-core machine filling 20 × 9 MiB of socket buffers takes a while.
    const settled = (): boolean => streams.paused + streams.finished - finished0 === CALLERS;
    await waitFor(settled, `all ${CALLERS} simulator streams waiting for drain or taken whole by the kernel`, 180_000);
    // Read once nothing more is written: until then a stream counted as paused may still get a
    // 'drain' (the kernel's buffers grow as they autotune) and be taken whole.
    const writtenStalled = await steady(() => streams.bytesWritten - written0);
    const paused = streams.paused;
    const stalled = await settledRss(inspector, gw.pid);
    const stalledHeap = await inspector.memoryUsage();
    const kib = (n: number): string => `${(n / 1024).toFixed(0)} KiB`;
    const perStream = (k: 'heapUsed' | 'arrayBuffers'): string => kib((stalledHeap[k] - idleHeap[k]) / CALLERS);
    console.log(`stalled callers: gateway RSS idle ${kib(idle)}, with ${CALLERS} stalled ${kib(stalled)} `
      + `(${kib((stalled - idle) / CALLERS)} per stream; heap ${perStream('heapUsed')}, buffers ${perStream('arrayBuffers')}); `
      + `the simulator wrote ${kib(writtenStalled / CALLERS)} of each ${kib(streamBytes)} stream; ${paused} wait on 'drain'`);

    assert.ok(stalled <= idle + CALLERS * PER_STREAM, `gateway RSS ${kib(stalled)} > idle ${kib(idle)} + ${CALLERS} × 256 KiB`);
    // Still paused, nothing more written, while the memory was measured.
    assert.equal(streams.paused, paused, 'the paused streams stay paused');
    assert.ok(paused > 0, 'the simulator waits on drain');
    assert.equal(streams.bytesWritten - written0, writtenStalled);
  } finally {
    for (const res of callers) res.destroy();
    inspector.close();
    await gw.stop();
    await simulator.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const responsesStream = (input: string): string => JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', stream: true, input });

async function orgWithOwnKey(url: string): Promise<string> {
  const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const admin = async (method: string, path: string, body: unknown): Promise<any> =>
    (await fetch(url + path, { method, headers, body: JSON.stringify(body) })).json();
  const { id } = await admin('POST', '/admin/v1/orgs', { name: 'stalled' });
  await admin('PUT', `/admin/v1/orgs/${id}/provider-keys/vendor_a`, { key: 'own-vendor-a-key' });
  return (await admin('POST', `/admin/v1/orgs/${id}/keys`, {})).key;
}

function openStream(url: string, key: string, body: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // A connection of its own (agent: false), like 20 distinct callers.
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const req = httpRequest(`${url}/v1/responses`, { agent: false, method: 'POST', headers }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

function readAll(res: IncomingMessage): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    res.on('data', (c: Buffer) => { n += c.length; });
    res.on('end', () => resolve(n));
    res.on('error', reject);
  });
}

/** A value that stopped changing for 500 ms. */
async function steady(read: () => number): Promise<number> {
  let last = read();
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = read();
    if (now === last) return now;
    last = now;
  }
}

/** RSS after a full collection, once two consecutive readings agree within 256 KiB. */
async function settledRss(inspector: Inspector, pid: number): Promise<number> {
  let last = Infinity;
  for (let i = 0; i < 10; i++) {
    await inspector.collectGarbage();
    await new Promise((r) => setTimeout(r, 200));
    const now = rssBytes(pid);
    if (Math.abs(now - last) <= 256 * 1024) return Math.max(now, last);
    last = now;
  }
  return last;
}
