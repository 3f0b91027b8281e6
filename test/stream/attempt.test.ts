// An SSE attempt before commit: the bytes read until the first event are kept whole (`head`)
// however the upstream cuts them, searched once each, and an upstream whose first event never ends
// fails the attempt as a malformed stream (retried or fallen back from), its call aborted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AttemptFailed, runAttempt, type Committed } from '../../lib/stream/attempt.ts';
import type { Pools, UpstreamHandler } from '../../lib/stream/pools.ts';
import type { RouteAdapter, UpstreamRequest } from '../../lib/providers/types.ts';
import { MAX_FRAME_BYTES } from '../../lib/sse.ts';
import { countByteWork } from '../helpers/byte-work.ts';

/** An attempt whose upstream is driven by hand: undici's handler calls, made by the test. */
function handAttempt(): { committed: Promise<Committed>; upstream: UpstreamHandler; aborted: Error[]; state: { settled: boolean } } {
  let upstream: UpstreamHandler | undefined;
  const pools = { dispatch: (_route: unknown, _req: unknown, handler: UpstreamHandler) => { upstream = handler; return undefined; } } as unknown as Pools;
  const attempt = runAttempt({
    route: 'vendor_a', tier: 'standard', wire: 'responses', adapter: {} as RouteAdapter,
    request: () => ({}) as UpstreamRequest, streamed: true,
  }, pools, () => 0);
  const aborted: Error[] = [];
  const state = { settled: false };
  attempt.committed.then(() => { state.settled = true; }, () => { state.settled = true; });
  upstream!.onConnect((err) => { aborted.push(err!); upstream!.onError(err!); });
  upstream!.onHeaders(200, [], () => {}, 'OK');
  return { committed: attempt.committed, upstream: upstream!, aborted, state };
}

const FIRST = ': keep-alive\r\n\r\n: x\n\nevent: response.created\r\ndata: {"type":"response.created"}\r\n\r\n';
const AFTER = 'event: response.in_progress\ndata: {}\n\n';

test('the first event cut into 1- and 7-byte chunks at every offset commits where it ends, with every byte read in head', async () => {
  const bytes = Buffer.from(FIRST + AFTER);
  for (const size of [1, 7]) {
    for (let offset = 0; offset < size; offset++) {
      const { committed, upstream, state } = handAttempt();
      const chunks: Buffer[] = offset ? [bytes.subarray(0, offset)] : [];
      for (let at = offset; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      let read = 0;
      let last = 0;
      for (const chunk of chunks) {
        upstream.onData(chunk);
        read += last = chunk.length;
        await Promise.resolve();
        if (state.settled) break;
      }
      const label = `${size}-byte chunks from ${offset}`;
      assert.ok(state.settled, label);
      const c = await committed;
      // Committed by the chunk that brought the first event's blank line, and not before it.
      assert.ok(read >= FIRST.length && read - last < FIRST.length, `${label}: committed after ${read} bytes`);
      assert.equal(c.head.toString(), bytes.subarray(0, read).toString(), label);
    }
  }
});

test('a first event without its blank line costs work in proportion to its size, not its square', () => {
  const line = Buffer.from(`data: ${'x'.repeat(57)}\n`);        // 64 bytes: a line, but no blank line
  const chunk = Buffer.concat(Array.from({ length: 1024 }, () => line));   // 64 KB
  const { upstream, state } = handAttempt();
  const n = 8 * 1024 * 1024;
  const work = countByteWork(() => { for (let read = 0; read < n; read += chunk.length) upstream.onData(chunk); });
  assert.equal(state.settled, false);
  assert.ok(work.allocated < 3 * n, `allocated ${work.allocated} for ${n}`);
  assert.ok(work.searched < 2 * n, `searched ${work.searched} for ${n}`);
});

test('a first event that grows past the limit fails the attempt as a malformed upstream, its call aborted', async () => {
  const { committed, upstream, aborted } = handAttempt();
  const chunk = Buffer.alloc(1024 * 1024, 'data: x\n');
  let went = true;
  for (let read = 0; went && read <= MAX_FRAME_BYTES; read += chunk.length) went = upstream.onData(chunk);
  assert.equal(went, false, 'the read is stopped');
  assert.equal(aborted.length, 1);
  const err = await committed.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof AttemptFailed, String(err));
  assert.equal(err.failure.kind, 'transient', 'retried or fallen back from');
  assert.equal(err.failure.status, 502);
  assert.match(err.failure.message, /upstream event grew past \d+ bytes/);
});
