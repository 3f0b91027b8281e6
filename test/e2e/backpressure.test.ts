// Backpressure end to end: a caller that stops reading a stream stops the gateway reading the
// provider, so a slow caller costs socket buffers, not the whole answer held in memory; when the
// caller reads again, the stream resumes and arrives whole. The provider here is a real HTTP
// server that writes a long Responses stream as fast as its socket takes it and counts the bytes
// its socket accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { startTestGateway, sim, waitFor } from '../helpers/gateway.ts';
import { DEFAULT_TIMEOUTS } from '../../lib/config.ts';

const TOTAL = 64 * 2 ** 20;   // far more than every socket buffer between provider and caller
const DELTA = `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'x'.repeat(900) })}\n\n`;
const HEAD = `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } })}\n\n`;
const TAIL = `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', service_tier: 'default', usage: { input_tokens: 5, output_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } })}\n\n`;

/** A provider that streams TOTAL bytes of deltas, waiting on 'drain' like any well-behaved server. */
async function longStreamProvider(): Promise<{ url: string; written(): number; done: Promise<void>; aborted: Promise<void>; close(): void }> {
  let written = 0;
  let cut!: () => void;
  const aborted = new Promise<void>((r) => { cut = r; });
  let finished!: () => void;
  const done = new Promise<void>((r) => { finished = r; });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.on('close', () => { if (!res.writableFinished) cut(); });
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(HEAD);
      const delta = Buffer.from(DELTA);
      while (written < TOTAL && !res.destroyed) {
        written += delta.length;
        if (!res.write(delta)) await Promise.race([once(res, 'drain'), aborted]);
      }
      if (!res.destroyed) res.end(TAIL, finished);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, written: () => written, done, aborted, close: () => { server.closeAllConnections(); server.close(); } };
}

function openStream(url: string, key: string): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(`${url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'gpt-5.4-mini', input: 'long', stream: true, start_within: 'now' }));
  });
}

const settle = async (read: () => number): Promise<number> => {
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = read();
    if (now === last) return now;
    last = now;
  }
};

test('a caller that stops reading pauses the provider; reading again resumes the whole stream', async () => {
  const provider = await longStreamProvider();
  const t = await startTestGateway({ config: { routes: { vendor_a: { base_url: provider.url } }, managed: {}, useSimulator: false } });
  try {
    const { key } = await t.newOrg({ ownKeys: ['vendor_a'] });
    const res = await openStream(t.url, key);
    assert.equal(res.statusCode, 200);
    // The caller reads nothing: the provider's writes stall once the buffers between are full.
    const stalledAt = await settle(provider.written);
    assert.ok(stalledAt < TOTAL / 2, `the provider wrote ${stalledAt} of ${TOTAL} bytes to a caller that read nothing`);

    // Reading again resumes the upstream; every byte arrives, ending with the provider's final event.
    let received = 0;
    let tail = '';
    res.on('data', (c: Buffer) => { received += c.length; tail = (tail + c.toString('latin1')).slice(-4096); });
    await once(res, 'end');
    await provider.done;
    assert.ok(provider.written() >= TOTAL);
    assert.equal(received, Buffer.byteLength(HEAD) + provider.written() + Buffer.byteLength(TAIL));
    assert.ok(tail.endsWith(TAIL), 'the stream ends with the provider\'s response.completed');
  } finally {
    await t.close();
    provider.close();
  }
});

test('a caller that reads nothing for timeouts.caller_idle_ms is cut off: the upstream is aborted and the cut counted', async () => {
  const provider = await longStreamProvider();
  const t = await startTestGateway({ config: { routes: { vendor_a: { base_url: provider.url } }, managed: {}, useSimulator: false, timeouts: { ...DEFAULT_TIMEOUTS, caller_idle_ms: 400 } } });
  try {
    const { key } = await t.newOrg({ ownKeys: ['vendor_a'] });
    const res = await openStream(t.url, key);
    assert.equal(res.statusCode, 200);
    res.on('error', () => {});
    // Nothing is read: once the buffers fill and 400 ms pass, the gateway closes the caller's
    // socket (a caller that reads nothing does not see that until it reads) and aborts upstream.
    await provider.aborted;
    res.destroy();
    assert.ok(provider.written() < TOTAL, 'the provider was cut before the end of its stream');
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(metrics, /gateway_timeouts_total\{edge="caller_idle"\} 1/);
  } finally {
    await t.close();
    provider.close();
  }
});

/** A streamed Responses request as raw HTTP/1.1, to pipeline several on one socket. */
function streamedRequest(key: string, input: string): string {
  const body = JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', stream: true, input });
  return `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

test('pipelined streams on one connection, the caller reading everything: the answer queued behind a longer one is not cut as caller idle', async () => {
  // node gives a pipelined request's answer the socket only when the answer before it ends; until
  // then it buffers its output, and no 'drain' can come however fast the caller reads.
  const t = await startTestGateway({ config: { timeouts: { ...DEFAULT_TIMEOUTS, caller_idle_ms: 1_000 } } });
  const { key } = await t.newOrg({ ownKeys: ['vendor_a'] });
  const socket = connect(t.gw.port, '127.0.0.1');
  socket.on('error', () => {});
  try {
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (d: Buffer) => { text += d.toString('latin1'); });   // reads everything
    // The first ≈ 3 s (30 tokens at 10 a second); the second, far more than node buffers for it.
    socket.write(streamedRequest(key, `first ${sim({ output_tokens: 30, tokens_per_s: 10 })}`) + streamedRequest(key, `second ${sim({ output_tokens: 5_000 })}`));
    const completed = (): number => (text.match(/event: response\.completed\n/g) ?? []).length;
    await waitFor(() => completed() === 2 || socket.destroyed, 'both answers to end', 15_000);
    assert.equal((text.match(/HTTP\/1\.1 200 /g) ?? []).length, 2, 'both answers started');
    assert.equal(completed(), 2, 'both answers end with their terminal event');
    const summaries = t.logLines.map((l) => JSON.parse(l)).filter((l) => l.req && l.endpoint && 'status' in l);
    assert.deepEqual(summaries.map((s) => `${s.status} ${s.code ?? ''}`), ['200 ', '200 '], 'both served (the second not 499 client_closed_request)');
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.doesNotMatch(metrics, /gateway_timeouts_total\{edge="caller_idle"\} [1-9]/);
  } finally {
    socket.destroy();
    await t.close();
  }
});

test('a caller that leaves while its pipelined answer is queued behind another stops that request too', async () => {
  const t = await startTestGateway();
  const { key } = await t.newOrg({ ownKeys: ['vendor_a'] });
  const socket = connect(t.gw.port, '127.0.0.1');
  socket.on('error', () => {});
  try {
    await once(socket, 'connect');
    socket.on('data', () => {});
    socket.write(streamedRequest(key, `first ${sim({ output_tokens: 100, tokens_per_s: 10 })}`) + streamedRequest(key, `second ${sim({ output_tokens: 5_000 })}`));
    await waitFor(() => t.gw.services.inflight.size === 2, 'both requests racing or streaming');
    socket.destroy();
    await waitFor(() => t.gw.services.open.size === 0, 'both requests ended once the caller left', 3_000);
    const summaries = t.logLines.map((l) => JSON.parse(l)).filter((l) => l.req && l.endpoint && 'status' in l);
    assert.deepEqual(summaries.map((s) => s.status), [499, 499]);
  } finally {
    socket.destroy();
    await t.close();
  }
});

test('a dozen requests pipelined on one connection are all answered, with one close listener on it, not one each', async () => {
  const t = await startTestGateway();
  const { key } = await t.newOrg({ ownKeys: ['vendor_a'] });
  const warnings: string[] = [];
  const onWarning = (w: Error): void => { warnings.push(w.name); };
  process.on('warning', onWarning);
  const socket = connect(t.gw.port, '127.0.0.1');
  socket.on('error', () => {});
  try {
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (d: Buffer) => { text += d.toString('latin1'); });
    socket.write(Array.from({ length: 12 }, (_, i) => streamedRequest(key, `n${i} ${sim({ output_tokens: 3 })}`)).join(''));
    await waitFor(() => (text.match(/event: response\.completed\n/g) ?? []).length === 12, 'all twelve answered', 15_000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warnings.filter((w) => w === 'MaxListenersExceededWarning'), []);
  } finally {
    process.off('warning', onWarning);
    socket.destroy();
    await t.close();
  }
});
