// lib/stream/pools.ts against a real HTTP server on port 0: the bytes and framing of an upstream
// body as the pools send it, and what of it the process still holds while the answer streams.
// A long answer keeps undici's request alive; a large body must not live with it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { DEFAULT_TIMEOUTS } from '../../lib/timeouts.ts';
import { headersOf, Pools, type UpstreamHandler } from '../../lib/stream/pools.ts';
import { gc } from '../helpers/gc.ts';

let server: Server;
let origin: string;
/** What the server saw of each request, and its answer, held open until the test ends it. */
const seen: { headers: Record<string, unknown>; body: Buffer; res: ServerResponse }[] = [];

before(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: Buffer.concat(parts), res });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"first":true}\n\n');   // the answer starts, and stays open
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));

/** Dispatches `body` and resolves once the answer has started; `end` finishes the answer and
 *  resolves when the response ended on the client side. */
function open(pools: Pools, body: string | Buffer): Promise<{ end: () => Promise<void> }> {
  const { handler, started, fail } = answerHandler();
  pools.dispatch('vendor_a', { origin, path: '/v1/responses', headers: { 'content-type': 'application/json' }, body }, handler, undefined, fail);
  return started;
}

/** The handler, made where no request body is in scope: undici holds it, and every closure made
 *  beside it, while the answer streams. */
function answerHandler(): { handler: UpstreamHandler; started: Promise<{ end: () => Promise<void> }>; fail: (err: Error) => void } {
  let resolve!: (v: { end: () => Promise<void> }) => void;
  let fail!: (err: Error) => void;
  const started = new Promise<{ end: () => Promise<void> }>((r, j) => { resolve = r; fail = j; });
  let ended!: () => void;
  const done = new Promise<void>((r) => { ended = r; });
  const handler: UpstreamHandler = {
    onConnect: () => {},
    onHeaders: () => {
      const { res } = seen.at(-1)!;   // this request's: the server answered it last
      resolve({ end: () => { res.end(); return done; } });
      return true;
    },
    onData: () => true,
    onComplete: () => ended(),
    onError: (err) => fail(err),
  };
  return { handler, started, fail };
}

test('a large body goes with its Content-Length, byte for byte, and is let go once written; a small one is sent as a Buffer', async () => {
  const pools = new Pools();
  try {
    const large = Buffer.from(JSON.stringify({ input: 'é'.repeat(60_000) }));
    const text = JSON.stringify({ input: 'ü "quoted" '.repeat(5_000) });
    const small = Buffer.from('{"input":"hi"}');
    for (const body of [large, text, small]) {
      const answer = await open(pools, body);
      const got = seen.at(-1)!;
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      assert.equal(got.headers['content-length'], String(bytes.length));
      assert.equal(got.headers['transfer-encoding'], undefined, 'not sent chunked');
      assert.ok(got.body.equals(bytes));
      await answer.end();
    }

    // While an answer streams: the large body is collectable, the small one is still held.
    const refs = async (size: number): Promise<{ ref: WeakRef<Buffer>; answer: { end: () => Promise<void> } }> => {
      const body = Buffer.alloc(size, 0x61);
      return { ref: new WeakRef(body), answer: await open(pools, body) };
    };
    const big = await refs(200_000);
    const little = await refs(100);
    await new Promise((r) => setImmediate(r));
    gc();
    assert.equal(big.ref.deref(), undefined, 'the 200 KB body was released while its answer is still open');
    assert.notEqual(little.ref.deref(), undefined);
    await big.answer.end();
    await little.answer.end();
  } finally {
    await pools.close();
  }
});

test('raw header lines read as undici reads them: names lower-cased, a repeated name as an array in order', () => {
  const raw = ['Content-Type', 'text/event-stream', 'Set-Cookie', 'a=1', 'retry-after', '7', 'SET-COOKIE', 'b=2', 'set-cookie', 'c=3', 'X-Latin', 'caf\u00e9']
    .map((v) => Buffer.from(v, 'latin1'));
  assert.deepEqual({ ...headersOf(raw) }, {
    'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2', 'c=3'], 'retry-after': '7', 'x-latin': 'caf\u00e9',
  });
  assert.deepEqual({ ...headersOf([]) }, {});
});

test('a non-streamed call is bounded whole even when its connection opens after the bound ran out', async () => {
  // A provider that never answers, reached over a connection that takes 300 ms to open (a slow
  // handshake, a lost SYN), within upstream_connect_ms but past the call's whole bound (100 ms).
  const silent = createServer(() => { /* never answers */ });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as AddressInfo).port;
  const slowOrigin = `http://127.0.0.1:${port}`;
  class SlowConnect extends Pools {
    private pool?: Pool;
    override get(): Pool {
      return this.pool ??= new Pool(slowOrigin, {
        connections: 1, pipelining: 1, headersTimeout: 0, bodyTimeout: 0,
        connect: (_opts, cb) => { setTimeout(() => { const s = netConnect(port, '127.0.0.1', () => cb(null, s)); s.on('error', (e) => cb(e, null)); }, 300); },
      });
    }
  }
  const pools = new SlowConnect({ routes: {}, timeouts: { ...DEFAULT_TIMEOUTS, upstream_nonstream_ms: 100 } });
  try {
    const outcome = await new Promise<string>((resolve) => {
      const handler: UpstreamHandler = {
        onConnect: () => {}, onHeaders: () => { resolve('headers'); return true; }, onData: () => true,
        onComplete: () => resolve('complete'), onError: (err) => resolve(String((err as { code?: string }).code)),
      };
      pools.dispatch('vendor_a', { origin: slowOrigin, path: '/x', headers: { 'content-type': 'application/json' }, body: '{}' }, handler,
        { org: 'o', waitMs: 0, firstByteMs: 0, totalMs: 100 }, (err) => resolve(`refused ${err.message}`));
      setTimeout(() => resolve('still pending after 3 s'), 3_000).unref();
    });
    assert.equal(outcome, 'GATEWAY_UPSTREAM_NONSTREAM_TIMEOUT');
  } finally {
    await pools.close();
    silent.closeAllConnections();
    silent.close();
  }
});
