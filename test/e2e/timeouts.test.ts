// Timeouts at every edge but the caller-idle one: request headers, request body (total and idle),
// upstream first byte and upstream idle between chunks. Each ends with its documented code, lets
// go of what the request held (the managed hold), and is counted in gateway_timeouts_total.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
before(async () => {
  t = await startTestGateway({
    config: {
      timeouts: {
        request_headers_ms: 400, request_body_ms: 1_200, request_body_idle_ms: 400,
        upstream_connect_ms: 1_000, upstream_first_byte_ms: 400, upstream_idle_ms: 400,
        upstream_nonstream_ms: 400, caller_idle_ms: 60_000, shutdown_drain_ms: 1_000, stream_head_ms: 240_000,
      },
    },
  });
});
after(() => t.close());

async function metric(edge: string): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const m = new RegExp(`gateway_timeouts_total\\{edge="${edge}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

/** A raw socket: what a slow client really sends. Resolves with everything the server wrote
 *  and when the server closed the connection. */
function rawClient(port: number): { socket: Socket; answer: Promise<{ text: string; closedAt: number }> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => { text += c; });
  socket.on('error', () => {});
  const answer = once(socket, 'close').then(() => ({ text, closedAt: performance.now() }));
  return { socket, answer };
}

function head(key: string, length: number): string {
  return `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
}

test('a slow body (1 byte every 150 ms) is cut at the total body timeout with 408 request_timeout and the connection closes', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  const before = await metric('request_body');
  const { socket, answer } = rawClient(t.gw.port);
  await once(socket, 'connect');
  socket.write(head(org.key, 1_000));
  const t0 = performance.now();
  const drip = setInterval(() => { if (!socket.destroyed) socket.write('{'); }, 150);
  const { text, closedAt } = await answer;
  clearInterval(drip);
  const ms = closedAt - t0;
  assert.match(text, /^HTTP\/1\.1 408/);
  assert.match(text, /"code":"request_timeout"/);
  assert.ok(ms >= 1_100 && ms < 3_000, `cut after ${ms.toFixed(0)} ms (limit 1200)`);
  assert.equal(await metric('request_body'), before + 1);
});

test('a body that stops arriving is cut at the idle timeout', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  const before = await metric('request_body_idle');
  const { socket, answer } = rawClient(t.gw.port);
  await once(socket, 'connect');
  socket.write(head(org.key, 100) + '{"model"');
  const t0 = performance.now();
  const { text, closedAt } = await answer;
  assert.match(text, /^HTTP\/1\.1 408/);
  assert.match(text, /paused for more than 400 ms/);
  assert.ok(closedAt - t0 < 1_200, `cut after ${(closedAt - t0).toFixed(0)} ms`);
  assert.equal(await metric('request_body_idle'), before + 1);
});

test('a management API body that stops arriving is cut at the idle timeout too', async () => {
  const org = await t.newOrg();
  const manager = (await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key as string;
  for (const [method, path] of [['POST', '/v1/organization/keys'], ['PUT', '/v1/organization/provider-keys/vendor_a']]) {
    const { socket, answer } = rawClient(t.gw.port);
    await once(socket, 'connect');
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${manager}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    const t0 = performance.now();
    const { text, closedAt } = await answer;
    assert.match(text, /^HTTP\/1\.1 408/, path);
    assert.ok(closedAt - t0 < 1_200, `${path}: cut after ${(closedAt - t0).toFixed(0)} ms`);
  }
});

test('headers that never finish are cut at the header timeout with 408', async () => {
  const before = await metric('request_headers');
  const { socket, answer } = rawClient(t.gw.port);
  await once(socket, 'connect');
  socket.write('POST /v1/responses HTTP/1.1\r\nHost: x\r\n');
  const t0 = performance.now();
  const { text, closedAt } = await answer;
  assert.match(text, /^HTTP\/1\.1 408/);
  assert.match(text, /"code":"request_timeout"/);
  assert.ok(closedAt - t0 < 2_000, `cut after ${(closedAt - t0).toFixed(0)} ms`);
  assert.equal(await metric('request_headers'), before + 1);
});

test('an upstream that sends no first byte in time: 502 provider_error, the managed hold released', async () => {
  const org = await t.newOrg({ balance: 5_000_000 });
  const before = await metric('upstream_first_byte');
  const t0 = performance.now();
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', input: sim({ standard_start_ms: 5_000 }), start_within: 'now', stream: true }),
  });
  const body = await res.json() as any;
  assert.equal(res.status, 502);
  assert.equal(body.error.code, 'provider_error');
  assert.ok(performance.now() - t0 < 2_000);
  assert.equal(await metric('upstream_first_byte'), before + 1);
  const ledger = await t.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`);
  assert.equal(ledger.json.snapshot.reservedMicroUsd, 0, 'hold released');
  assert.equal(ledger.json.snapshot.cashMicroUsd, 5_000_000, 'nothing charged: the request never committed');
});

test('an upstream that stalls between chunks: the stream ends with the format\'s error event, counted, hold settled', async () => {
  const org = await t.newOrg({ balance: 5_000_000 });
  const before = await metric('upstream_idle');
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', input: sim({ output_tokens: 4, tokens_per_s: 1 }), start_within: 'now', stream: true }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /event: (error|response\.failed)/);
  assert.doesNotMatch(text, /response\.completed/);
  assert.equal(await metric('upstream_idle'), before + 1);
  await waitFor(() => t.gw.services.inflight.size === 0, 'the request to end');
  const ledger = await t.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`);
  assert.equal(ledger.json.snapshot.reservedMicroUsd, 0, 'hold settled');
});

test('a non-streamed answer whose headers come at once and body never ends: cut whole at upstream_nonstream_ms, 502, counted, slot and hold released', async () => {
  // A provider (or a proxy in front of it) that sends its 200 and then a byte every 100 ms forever.
  const trickles = new Set<NodeJS.Timeout>();
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"resp_slow",');
      const drip = setInterval(() => { if (res.destroyed) clearInterval(drip); else res.write(' '); }, 100);
      trickles.add(drip);
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const g = await startTestGateway({
    config: {
      routes: { vendor_a: { base_url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } },
      managed: { vendor_a: { key: 'service-key' } }, useSimulator: false,
      timeouts: { ...t.gw.services.config.timeouts, upstream_nonstream_ms: 600, upstream_idle_ms: 400 },
    },
  });
  try {
    const org = await g.newOrg({ balance: 5_000_000 });
    const metricOf = async (edge: string): Promise<number> => {
      const m = new RegExp(`gateway_timeouts_total\\{edge="${edge}"\\} (\\d+)`).exec(await (await fetch(`${g.url}/metrics`)).text());
      return m ? Number(m[1]) : 0;
    };
    const before = await metricOf('upstream_nonstream');
    const res = await fetch(`${g.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' }),
      signal: AbortSignal.timeout(5_000),
    });
    const body = await res.json() as any;
    assert.equal(res.status, 502);
    assert.equal(body.error.code, 'provider_error');
    assert.equal(await metricOf('upstream_nonstream'), before + 1);
    await waitFor(() => g.gw.services.inflight.size === 0, 'the request to end');
    const ledger = await g.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`);
    assert.equal(ledger.json.snapshot.reservedMicroUsd, 0, 'hold settled');
  } finally {
    for (const drip of trickles) clearInterval(drip);
    upstream.closeAllConnections();
    upstream.close();
    await g.close();
  }
});
