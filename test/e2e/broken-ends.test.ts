// How requests end when something breaks at an awkward moment, as a caller sees it: a caller that
// leaves while its request is still being admitted, an upstream that stops in the middle of a
// frame, a provider that ends its own stream with an error event. Each ends with one well-formed
// error (or none the caller is there to read), its record written and nothing held.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';
import { vendorA } from '../../lib/providers/openai.ts';
import { vendorC } from '../../lib/providers/anthropic.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(() => t.close());

const post = (key: string, path: string, body: unknown): Promise<Response> => fetch(t.url + path, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
});

/** The events an SSE client dispatches: blank-line separated, a trailing partial one dropped. */
function events(text: string): Array<{ event?: string; data: string }> {
  return text.split('\n\n').slice(0, -1).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return { event, data };
  });
}

const summaries = (from: number): any[] => t.logLines.slice(from).map((l) => JSON.parse(l)).filter((l) => l.req && 'status' in l);

test('a caller that leaves while its admission is awaited: no request is started, 499 recorded, nothing charged or held', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  // The ledger answers its admission 300 ms late (as a busy shared PostgreSQL ledger may); the
  // caller is gone after 50 ms.
  const ledger = t.gw.services.ledger as { admit: (...a: unknown[]) => Promise<unknown> };
  const admit = ledger.admit;
  ledger.admit = async (...a) => { await new Promise((r) => setTimeout(r, 300)); return admit.apply(ledger, a); };
  const from = t.logLines.length;
  try {
    const body = JSON.stringify({ model: 'gpt-5.4-mini', stream: true, start_within: 'now', input: `x ${sim({ output_tokens: 200, tokens_per_s: 100 })}` });
    const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.write(`POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await waitFor(() => summaries(from).length === 1, 'the summary line', 5_000);
  } finally {
    ledger.admit = admit;
  }
  const [line] = summaries(from);
  assert.equal(line.status, 499);
  assert.equal(line.msg, 'client_closed_request');
  assert.equal(line.route, undefined, 'no upstream attempt was started');
  assert.equal(t.gw.services.inflight.size, 0);
  const limits = await (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${org.key}` } })).json() as any;
  assert.equal(limits.managed.balance.remaining_micro_usd, 10_000_000, 'nothing charged');
  assert.equal(limits.managed.balance.reserved_micro_usd, 0, 'nothing held');
});

test('an upstream that ends cleanly in the middle of a frame: the half frame is dropped, one well-formed error event ends the stream', async () => {
  const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-5.4-mini"}}\n\n';
  const delta = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"output_index":0,"content_index":0,"delta":"Hi"}\n\n';
  const half = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","del';
  const upstream: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(created + delta);
      setTimeout(() => res.end(half), 20);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const adapters = t.gw.services.adapters as Record<string, unknown>;
  const real = adapters.vendor_a;
  adapters.vendor_a = vendorA(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  try {
    const org = await t.newOrg({ ownKeys: ['vendor_a'] });
    const from = t.logLines.length;
    const text = await (await post(org.key, '/v1/responses', { model: 'gpt-5.4-mini', input: 'x', stream: true, start_within: 'now' })).text();
    assert.ok(text.startsWith(created + delta), 'the whole frames as they came');
    assert.ok(!text.includes(half), `no half frame: ${JSON.stringify(text)}`);
    assert.ok(text.endsWith('\n\n'));
    const evs = events(text);
    for (const ev of evs) JSON.parse(ev.data);
    assert.deepEqual(evs.map((e) => e.event), ['response.created', 'response.output_text.delta', 'error']);
    assert.match(evs[2]!.data, /provider_error/);
    await waitFor(() => summaries(from).length === 1, 'the summary line', 5_000);
    assert.equal(summaries(from)[0].stream_error, 'upstream stream ended before its final event');
  } finally {
    adapters.vendor_a = real;
    upstream.close();
  }
});

test("a provider that ends its stream with its own error event: passed through as it came, no second error after it, named in the record", async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_c'] });
  // Vendor C ends with one `error` event; vendor A with `error`, then `response.failed`.
  for (const [path, body, ends] of [
    ['/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 100, stream: true, start_within: 'now', messages: [{ role: 'user', content: `x ${sim({ output_tokens: 30, error_after_tokens: 3 })}` }] }, ['error']],
    ['/v1/responses', { model: 'gpt-5.4-mini', stream: true, start_within: 'now', input: `x ${sim({ output_tokens: 30, error_after_tokens: 3 })}` }, ['error', 'response.failed']],
  ] as const) {
    const from = t.logLines.length;
    const text = await (await post(org.key, path, body)).text();
    const evs = events(text);
    assert.deepEqual(evs.slice(-ends.length).map((e) => e.event), ends, `${path} ends with the provider's error: ${text.slice(-300)}`);
    assert.ok(!text.includes('The provider stream failed'), `${path}: no error of the gateway's after it`);
    await waitFor(() => summaries(from).length === 1, 'the summary line', 5_000);
    assert.match(summaries(from)[0].stream_error, /^the provider's error event: /, path);
  }
});

/** An upstream that answers 200 and sends `first`, then lines of data with no blank line, until
 *  the gateway hangs up (or 40 MiB). Counts its calls and whether each was cut off. */
async function floodingUpstream(first: string): Promise<{ server: Server; calls: number; cutOff: number }> {
  const line = Buffer.from(`data: ${'x'.repeat(1017)}\n`);
  const block = Buffer.concat(Array.from({ length: 256 }, () => line));   // 256 KB
  const state = { server: undefined as unknown as Server, calls: 0, cutOff: 0 };
  state.server = createServer((req, res) => {
    state.calls++;
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (first) res.write(first);
      let closed = false;
      res.on('close', () => { closed = true; });
      for (let sent = 0; !closed && sent < 40 * 1024 * 1024; sent += block.length) {
        if (!res.write(block)) {
          await new Promise<void>((go) => {
            const on = (): void => { res.off('drain', on); res.off('close', on); go(); };
            res.on('drain', on).on('close', on);
          });
        }
      }
      if (closed) state.cutOff++; else res.end();
    });
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  return state;
}

test('an upstream whose event never ends: past the frame limit the caller gets one error event (after commit) or a 502 (before), the upstream is cut off, and the gateway goes on serving', async () => {
  const created = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-5.4-mini"}}\n\n';
  const messageStart = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n';
  const adapters = t.gw.services.adapters as Record<string, unknown>;
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_c'] });
  const responses = { model: 'gpt-5.4-mini', input: 'x', stream: true, start_within: 'now' };
  const cases = [
    { name: 'passthrough, after commit', route: 'vendor_a', first: created, path: '/v1/responses', body: responses },
    { name: 'before commit', route: 'vendor_a', first: '', path: '/v1/responses', body: responses },
    {
      name: 'translated, after commit', route: 'vendor_c', first: messageStart, path: '/v1/chat/completions',
      body: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'x' }], stream: true, start_within: 'now' },
    },
  ];
  for (const c of cases) {
    const upstream = await floodingUpstream(c.first);
    const base = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
    const real = adapters[c.route];
    adapters[c.route] = c.route === 'vendor_a' ? vendorA(base) : vendorC(base, 4096);
    try {
      const from = t.logLines.length;
      const res = await post(org.key, c.path, c.body);
      const text = await res.text();
      await waitFor(() => summaries(from).length === 1, `${c.name}: the summary line`, 10_000);
      if (c.first) {
        assert.equal(res.status, 200, c.name);
        assert.ok(text.length < 64 * 1024, `${c.name}: none of the unended event`);
        const evs = events(text);
        assert.ok(evs.length >= 2, `${c.name}: ${text}`);
        assert.match(evs.at(-1)!.data, /provider_error/, c.name);
        assert.match(evs.at(-1)!.data, /upstream event grew past 33554432 bytes/, c.name);
        assert.match(summaries(from)[0].stream_error, /upstream event grew past/, c.name);
        if (c.route === 'vendor_a') {
          assert.ok(text.startsWith(created), 'the frames before it, as they came');
          assert.deepEqual(evs.map((e) => e.event), ['response.created', 'error']);
        }
      } else {
        // Before commit it is a malformed upstream like any other: retried, then the caller's error.
        assert.equal(res.status, 502, text);
        assert.match(text, /provider_error/);
        assert.match(text, /upstream event grew past 33554432 bytes/);
      }
      await waitFor(() => upstream.cutOff === upstream.calls, `${c.name}: every upstream call cut off`, 10_000);
      assert.equal(t.gw.services.inflight.size, 0, c.name);
    } finally {
      adapters[c.route] = real;
      upstream.server.close();
    }
  }
  // Still serving: the same caller's next stream runs to its end.
  const text = await (await post(org.key, '/v1/responses', { ...responses, input: `x ${sim({ output_tokens: 20 })}` })).text();
  assert.deepEqual(events(text).at(-1)?.event, 'response.completed');
});
