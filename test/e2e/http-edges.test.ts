// The HTTP layer's edges, on a real gateway over real sockets (node:net where a client library
// would hide the behaviour, the official SDKs where a user would use them): a refusal that leaves a
// body unread closes its connection while every ordinary answer keeps it; Expect: 100-continue is
// answered only when the body is about to be read; Messages errors carry `request-id`; 405s carry
// Allow; HEAD answers as GET; an absolute-form target is routed; a compressed request body is
// refused with 415; upstream calls ask for identity, and a compressed answer is a clear
// provider_error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.ts';
import { vendorA } from '../../lib/providers/openai.ts';

const NO_LIMITS = { organization_requests: null, api_key_requests: null, client_ip_requests: null, failed_authentications: null, publish: false };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A raw connection: what it has read, and when (ms after opening) the gateway closed it. */
interface Raw { socket: Socket; text: () => string; closedAt: () => number | undefined; closed: Promise<void> }

async function open(t: TestGateway): Promise<Raw> {
  const socket = connect(t.gw.port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  const t0 = Date.now();
  let text = '';
  let closedAt: number | undefined;
  socket.on('data', (d: Buffer) => { text += d.toString('latin1'); });
  const closed = new Promise<void>((r) => socket.on('close', () => { closedAt = Date.now() - t0; r(); }));
  return { socket, text: () => text, closedAt: () => closedAt, closed };
}

/** Waits for the gateway to close the connection, up to `ms`; true when it did. */
const closedWithin = (raw: Raw, ms: number): Promise<boolean> =>
  Promise.race([raw.closed.then(() => true), sleep(ms).then(() => false)]);

const statusLines = (text: string): string[] => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
const headerOf = (text: string, name: string): string | undefined =>
  new RegExp(`^${name}: *(.*)$`, 'im').exec(text.split('\r\n\r\n')[0]!)?.[1]?.trim();

const responsesBody = (text = 'hi'): string =>
  JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', input: `${text} ${sim({ output_tokens: 3 })}` });

test('a refusal that leaves a declared body unread closes its connection: a wrong key, or GET /healthz, trickling a 1 GB body a byte at a time is cut at once', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS, timeouts: { request_body_ms: 60_000, request_body_idle_ms: 60_000 } } as never });
  try {
    for (const head of [
      'POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer flex_live_wrong\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n',
      'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n',
    ]) {
      const raw = await open(t);
      raw.socket.write(head);
      // A byte every 50 ms: before, node discarded it forever on a kept connection.
      let sent = 0;
      const trickle = setInterval(() => { if (!raw.socket.destroyed) { raw.socket.write(head.includes('chunked') ? '1\r\nx\r\n' : 'x'); sent++; } }, 50);
      const cut = await closedWithin(raw, 1_500);
      clearInterval(trickle);
      raw.socket.destroy();
      const line = head.split('\r\n', 1)[0];
      assert.ok(cut, `${line}: the connection is still open after 1.5 s (${sent} bytes trickled)`);
      assert.equal(statusLines(raw.text()).length, 1, line);
      assert.match(raw.text(), /^HTTP\/1\.1 (401|200)/, line);
      assert.equal(headerOf(raw.text(), 'connection'), 'close', line);
    }
  } finally { await t.close(); }
});

test('answers whose body was read, or that had none, keep their connection: one keep-alive socket serves GETs, HEADs, POSTs, refusals after the body and a wrong key', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  let connections = 0;
  const count = (): void => { connections++; };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    t.gw.server.on('connection', count);
    const call = (method: string, path: string, key: string | null, body?: string): Promise<{ status: number; connection?: string }> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (key) headers.authorization = `Bearer ${key}`;
        const req = request({ host: '127.0.0.1', port: t.gw.port, method, path, agent, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const calls: Array<[string, string, string | null, string | undefined, number]> = [
      ['GET', '/healthz', null, undefined, 200],
      ['HEAD', '/healthz', null, undefined, 200],
      ['GET', '/v1/models', org.key, undefined, 200],
      ['POST', '/v1/responses', org.key, responsesBody(), 200],
      ['POST', '/v1/responses', org.key, '{"model":"gpt-5.4-mini"}', 400],
      ['POST', '/v1/responses', org.key, '{not json', 400],
      ['POST', '/v1/responses', 'flex_live_wrong', responsesBody(), 401],
      ['POST', '/v1/messages', 'flex_live_wrong', '{}', 401],
      ['POST', '/v1/messages/count_tokens', org.key, JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] }), 200],
      ['GET', '/v1/limits', org.key, undefined, 200],
      ['POST', '/v1/responses', org.key, responsesBody('again'), 200],
    ];
    for (const [method, path, key, body, status] of calls) {
      const r = await call(method, path, key, body);
      assert.equal(r.status, status, `${method} ${path}`);
      assert.equal(r.connection, 'keep-alive', `${method} ${path}`);
    }
    assert.equal(connections, 1, 'every request went over the one kept socket');
  } finally {
    agent.destroy();
    t.gw.server.off('connection', count);
    await t.close();
  }
});

test('Expect: 100-continue is answered only when the body is about to be read: a wrong key and an oversize declared body are refused without it, and the connection closes', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    const head = (key: string, length: number, path = '/v1/messages'): string =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

    for (const [name, key, length, status] of [['wrong key, 5 MB', 'flex_live_wrong', 5_000_000, '401'], ['60 MB', org.key, 60_000_000, '413']] as const) {
      const raw = await open(t);
      raw.socket.write(head(key, length));
      assert.ok(await closedWithin(raw, 1_500), `${name}: closed after the refusal`);
      assert.doesNotMatch(raw.text(), /100 Continue/, `${name}: the body was never asked for`);
      assert.deepEqual(statusLines(raw.text()), [`HTTP/1.1 ${status}`], name);
      assert.equal(headerOf(raw.text(), 'connection'), 'close', name);
    }

    // An accepted request gets its 100 once the body is read, then its answer, on a kept connection.
    const body = JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 20, start_within: 'now', messages: [{ role: 'user', content: `hi ${sim({ output_tokens: 3 })} ${'x'.repeat(2_000)}` }] });
    const raw = await open(t);
    raw.socket.write(head(org.key, Buffer.byteLength(body)));
    const until = Date.now() + 2_000;
    while (!raw.text().includes('100 Continue') && Date.now() < until) await sleep(5);
    assert.match(raw.text(), /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    raw.socket.write(body);
    while (!/"type":"message"/.test(raw.text()) && Date.now() < until + 3_000) await sleep(5);
    assert.deepEqual(statusLines(raw.text()), ['HTTP/1.1 100', 'HTTP/1.1 200']);
    assert.equal(headerOf(raw.text().split('HTTP/1.1 200')[1]!, 'connection'), 'keep-alive');
    raw.socket.destroy();
  } finally { await t.close(); }
});

test('the Anthropic SDK reads the request id of Messages errors (request-id equal to x-request-id), on /v1/messages and count_tokens', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    const client = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
    const wrong = new Anthropic({ authToken: 'flex_live_wrong', apiKey: null, baseURL: t.url, maxRetries: 0 });
    const failures: Array<[string, () => Promise<unknown>, number]> = [
      ['invalid body', () => client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [], start_within: 'now' } as never), 400],
      ['wrong key', () => wrong.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], start_within: 'now' } as never), 401],
      ['count_tokens, unknown model', () => client.messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }), 404],
      ['count_tokens, wrong key', () => wrong.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] }), 401],
    ];
    for (const [name, run, status] of failures) {
      const err = await run().then(() => undefined, (e: unknown) => e) as InstanceType<typeof Anthropic.APIError>;
      assert.ok(err instanceof Anthropic.APIError, name);
      assert.equal(err.status, status, name);
      assert.ok(err.requestID, `${name}: the SDK has a request id`);
      assert.equal(err.requestID, err.headers?.get('x-request-id'), name);
    }
    // A 405 on a Messages path carries them too (and Allow).
    const res = await fetch(`${t.url}/v1/messages`, { method: 'GET' });
    assert.equal(res.status, 405);
    assert.ok(res.headers.get('request-id'));
    assert.equal(res.headers.get('request-id'), res.headers.get('x-request-id'));
  } finally { await t.close(); }
});

test('405 carries Allow (RFC 9110), and Allow names exactly the methods each path takes', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    const manage = (await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key as string;
    t.secrets.add(manage);
    const id = org.orgId;
    const paths: Array<[string, string | null]> = [
      ['/v1/responses', org.key], ['/v1/chat/completions', org.key], ['/v1/messages', org.key], ['/v1/messages/count_tokens', org.key],
      ['/v1/interactions', org.key], ['/healthz', null], ['/readyz', null], ['/metrics', null], ['/v1/models', org.key],
      ['/v1/limits', org.key], ['/v1/usage', org.key], ['/v1/usage/requests', org.key], ['/dashboard', null], ['/dashboard/app.js', null],
      ['/v1/organization', manage], ['/v1/organization/keys', manage], ['/v1/organization/keys/key_none', manage],
      ['/v1/organization/provider-keys', manage], ['/v1/organization/provider-keys/vendor_a', manage],
      ['/admin/v1/orgs', ADMIN_TOKEN], [`/admin/v1/orgs/${id}/keys`, ADMIN_TOKEN], ['/admin/v1/keys/key_none', ADMIN_TOKEN],
      [`/admin/v1/orgs/${id}/provider-keys/vendor_a`, ADMIN_TOKEN], [`/admin/v1/orgs/${id}/topups`, ADMIN_TOKEN],
      [`/admin/v1/orgs/${id}/overrides`, ADMIN_TOKEN], [`/admin/v1/orgs/${id}/review`, ADMIN_TOKEN], [`/admin/v1/orgs/${id}/exempt`, ADMIN_TOKEN],
      [`/admin/v1/orgs/${id}/ledger`, ADMIN_TOKEN], ['/admin/v1/scheduler', ADMIN_TOKEN], ['/admin/v1/usage', ADMIN_TOKEN], ['/admin/v1/usage/requests', ADMIN_TOKEN],
    ];
    const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];
    for (const [path, token] of paths) {
      const answers = new Map<string, { status: number; allow: string | null }>();
      for (const method of METHODS) {
        const res = await fetch(t.url + path, {
          method, headers: token ? { authorization: `Bearer ${token}`, 'content-type': 'application/json' } : {},
          // A body the handlers refuse (a PUT/POST that would change something must not go through).
          body: method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{"no_such_field":1}' : undefined,
        });
        await res.arrayBuffer();
        answers.set(method, { status: res.status, allow: res.headers.get('allow') });
      }
      const refused = METHODS.filter((m) => answers.get(m)!.status === 405);
      assert.ok(refused.length, `${path}: some method is refused`);
      const allow = answers.get(refused[0]!)!.allow;
      assert.ok(allow, `${path}: 405 without Allow`);
      for (const m of refused) assert.equal(answers.get(m)!.allow, allow, `${path} ${m}: the same Allow`);
      const allowed = allow.split(/,\s*/);
      assert.deepEqual(METHODS.filter((m) => !refused.includes(m)), METHODS.filter((m) => allowed.includes(m)), `${path}: Allow ${allow} names what is served`);
    }
  } finally { await t.close(); }
});

test('every answer of an inference endpoint, count_tokens included, carries x-request-id, has one summary line with that id and is counted: an oversize body refused before its 100 Continue, a 405, a count', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    const count = JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] });
    const head = (method: string, path: string, key: string, length?: number, extra = ''): string =>
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nConnection: close\r\n`
      + `${length === undefined ? '' : `Content-Length: ${length}\r\n`}${extra}\r\n`;
    const requestsTotal = async (endpoint: string, status: number): Promise<number> => {
      const text = await (await fetch(`${t.url}/metrics`)).text();
      return Number(new RegExp(`^gateway_requests_total\\{endpoint="${endpoint}",status="${status}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    };
    const cases: Array<[string, string, number, string]> = [
      ['oversize with Expect: 100-continue', head('POST', '/v1/responses', org.key, 60_000_000, 'Expect: 100-continue\r\n'), 413, 'responses'],
      ['count_tokens, oversize with Expect: 100-continue', head('POST', '/v1/messages/count_tokens', org.key, 60_000_000, 'Expect: 100-continue\r\n'), 413, 'count_tokens'],
      ['GET /v1/chat/completions', head('GET', '/v1/chat/completions', org.key), 405, 'chat'],
      ['GET /v1/messages', head('GET', '/v1/messages', org.key), 405, 'messages'],
      ['GET /v1/messages/count_tokens', head('GET', '/v1/messages/count_tokens', org.key), 405, 'count_tokens'],
      ['count_tokens', head('POST', '/v1/messages/count_tokens', org.key, Buffer.byteLength(count)) + count, 200, 'count_tokens'],
      ['count_tokens, wrong key', head('POST', '/v1/messages/count_tokens', 'flex_live_wrong', Buffer.byteLength(count)) + count, 401, 'count_tokens'],
    ];
    for (const [name, request, status, endpoint] of cases) {
      const before = await requestsTotal(endpoint, status);
      const raw = await open(t);
      raw.socket.write(request);
      assert.ok(await closedWithin(raw, 5_000), `${name}: answered and closed`);
      assert.deepEqual(statusLines(raw.text()), [`HTTP/1.1 ${status}`], name);
      const id = headerOf(raw.text(), 'x-request-id');
      assert.ok(id, `${name}: x-request-id`);
      const lines = t.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.req === id);
      assert.equal(lines.length, 1, `${name}: one line with the request's id`);
      assert.equal(lines[0]!.msg, status === 200 ? 'request' : 'refused', name);
      assert.equal(lines[0]!.endpoint, endpoint, name);
      assert.equal(lines[0]!.status, status, name);
      assert.equal(await requestsTotal(endpoint, status) - before, 1, `${name}: counted in gateway_requests_total`);
    }
  } finally { await t.close(); }
});

test('HEAD answers as GET without a body, on every GET route', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    for (const [path, key] of [['/healthz', null], ['/readyz', null], ['/v1/models', org.key], ['/v1/limits', org.key], ['/metrics', null], ['/dashboard', null], ['/dashboard/app.js', null], ['/admin/v1/orgs', ADMIN_TOKEN]] as const) {
      const auth = key ? `Authorization: Bearer ${key}\r\n` : '';
      const raw = await open(t);
      // HEAD then GET on one connection: a body after the HEAD's headers would be read as the next answer.
      raw.socket.write(`HEAD ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\nGET ${path} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`);
      await closedWithin(raw, 3_000);
      const [headHead, rest] = [raw.text().slice(0, raw.text().indexOf('\r\n\r\n') + 4), raw.text().slice(raw.text().indexOf('\r\n\r\n') + 4)];
      assert.match(headHead, /^HTTP\/1\.1 200 /, `HEAD ${path}`);
      assert.match(rest, /^HTTP\/1\.1 200 /, `HEAD ${path}: no body before the GET's answer`);
      const length = headerOf(headHead, 'content-length');
      if (length !== undefined && path !== '/metrics' && path !== '/v1/limits' && path !== '/admin/v1/orgs') {
        assert.equal(length, headerOf(rest, 'content-length'), `HEAD ${path}: GET's Content-Length`);
      }
    }
  } finally { await t.close(); }
});

test('an absolute-form request target is routed by its path; a compressed request body is refused with 415 and Accept-Encoding: identity', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    const host = `127.0.0.1:${t.gw.port}`;
    const body = responsesBody();
    const post = (target: string, extra: string, payload: string | Buffer): string =>
      `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n${extra}\r\n`;

    let raw = await open(t);
    raw.socket.write(post(`http://${host}/v1/responses?x=1`, '', body) + body);
    await closedWithin(raw, 5_000);
    assert.match(raw.text(), /^HTTP\/1\.1 200 /);
    assert.match(raw.text(), /"object":"response"/);

    for (const coding of ['gzip', 'br', 'deflate, gzip']) {
      const gz = gzipSync(body);
      raw = await open(t);
      raw.socket.write(Buffer.concat([Buffer.from(post('/v1/responses', `Content-Encoding: ${coding}\r\n`, gz)), gz]));
      await closedWithin(raw, 5_000);
      assert.match(raw.text(), /^HTTP\/1\.1 415 /, coding);
      assert.equal(headerOf(raw.text(), 'accept-encoding'), 'identity', coding);
      assert.equal(JSON.parse(raw.text().split('\r\n\r\n')[1]!).error.code, 'unsupported_content_encoding', coding);
    }
    // identity is no coding at all.
    raw = await open(t);
    raw.socket.write(post('/v1/responses', 'Content-Encoding: identity\r\n', body) + body);
    await closedWithin(raw, 5_000);
    assert.match(raw.text(), /^HTTP\/1\.1 200 /);
  } finally { await t.close(); }
});

test('upstream calls ask for identity; a provider that compresses anyway is a provider_error naming the coding, never compressed bytes', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  const seen: Array<string | undefined> = [];
  const usage = '"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}';
  const json = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5.4-mini","output":[],${usage}}`;
  const sse = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-5.4-mini"}}\n\n'
    + `event: response.completed\ndata: {"type":"response.completed","sequence_number":1,"response":${json}}\n\n`;
  let status = 200;
  const upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push(req.headers['accept-encoding'] as string | undefined);
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const stream = JSON.parse(Buffer.concat(parts).toString()).stream === true;
      res.writeHead(status, { 'content-type': stream && status === 200 ? 'text/event-stream' : 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(status !== 200 ? '{"error":{"message":"bad","type":"invalid_request_error"}}' : stream ? sse : json));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  try {
    (t.gw.services.adapters as Record<string, unknown>).vendor_a = vendorA(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
    const org = await t.newOrg({ ownKeys: ['vendor_a'] });
    for (const [name, extra, code] of [['non-streamed', {}, 200], ['streamed', { stream: true }, 200], ['a refusal', {}, 400]] as const) {
      status = code;
      const res = await fetch(`${t.url}/v1/responses`, {
        method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', input: 'hi', ...extra }),
      });
      const text = await res.text();
      assert.equal(res.status, 502, name);
      const error = JSON.parse(text).error;
      assert.equal(error.code, 'provider_error', name);
      assert.match(error.message, /Content-Encoding: gzip/, name);
      assert.ok(!text.includes('\ufffd') && !/[\x00-\x08]/.test(text), `${name}: no compressed bytes in the answer`);
    }
    assert.ok(seen.length >= 3);
    assert.deepEqual(new Set(seen), new Set(['identity']));
  } finally {
    upstream.close();
    await t.close();
  }
});

test('a caller refused on a non-inference endpoint (a wrong key on /v1/limits, /v1/usage) leaves an info line with its code, not an error with a stack', async () => {
  const t = await startTestGateway();
  try {
    for (const path of ['/v1/limits', '/v1/usage']) {
      const res = await fetch(`${t.url}${path}`, { headers: { authorization: 'Bearer flex_live_wrong' } });
      assert.equal(res.status, 401, path);
      await res.arrayBuffer();
    }
    const lines = t.logLines.map((l) => JSON.parse(l));
    assert.deepEqual(lines.filter((l) => l.level >= 50), [], 'no error lines');
    const refused = lines.filter((l) => l.msg === 'refused' && l.code === 'invalid_api_key');
    assert.ok(refused.some((l) => l.path === '/v1/limits'), JSON.stringify(refused));
    assert.ok(refused.every((l) => l.level === 30 && l.err === undefined));
  } finally {
    await t.close();
  }
});

test('every answer of the API carries a request id of its own, errors included; probes and metrics carry none', async () => {
  const t = await startTestGateway();
  try {
    const org = await t.newOrg({ balance: 1_000_000 });
    const key = { authorization: `Bearer ${org.key}` };
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const asked: Array<[string, Record<string, string>, number]> = [
      ['/v1/models', key, 200], ['/v1/limits', key, 200], ['/v1/usage', key, 200], ['/v1/usage/requests', key, 200],
      ['/v1/organization', key, 200], ['/admin/v1/orgs', admin, 200],
      ['/v1/limits', { authorization: 'Bearer flex_live_wrong' }, 401], ['/v1/nothing-here', key, 404], ['/admin/v1/orgs', {}, 401],
    ];
    const ids = new Set<string>();
    for (const [path, headers, status] of asked) {
      const res = await fetch(`${t.url}${path}`, { headers });
      await res.arrayBuffer();
      assert.equal(res.status, status, path);
      const id = res.headers.get('x-request-id');
      assert.match(id ?? '', /^[0-9a-f-]{36}$/, `${path} ${status}`);
      assert.equal(res.headers.get('request-id'), id, 'the Anthropic SDK\'s name too');
      ids.add(id!);
    }
    assert.equal(ids.size, asked.length, 'one id per answer');
    for (const path of ['/healthz', '/metrics']) {
      const res = await fetch(`${t.url}${path}`);
      await res.arrayBuffer();
      assert.equal(res.headers.get('x-request-id'), null, path);
    }
  } finally {
    await t.close();
  }
});
