// Browser callers on other origins (lib/http/cors.ts), read off a real gateway on the simulator:
// off by default; on, a preflight on /v1/... is answered 204 without a key and without being
// counted, an origin not listed gets 403 and no CORS header, and every answer to an allowed origin
// (200, 401, 400, 405, 429, an event stream, count_tokens) names it and exposes the gateway's headers. The admin
// API, the dashboard and the probes never answer CORS. A cors setting that is not a list of origins
// is refused at start.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { EXPOSED_HEADERS, corsHeadersFor, corsPolicy, withCorsHeaders } from '../../lib/http/cors.ts';
import { startTestGateway, sim, ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.ts';

const APP = 'http://app.example:3000';
const OTHER = 'https://evil.example';
/** What the OpenAI SDK asks for in its preflight (with x-stainless-* and its own idempotency key). */
const SDK_HEADERS = 'authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-os,x-stainless-package-version,x-stainless-retry-count,x-stainless-runtime,x-stainless-runtime-version,x-stainless-timeout';

let off: TestGateway;
let on: TestGateway;
let key: string;
before(async () => {
  off = await startTestGateway();
  on = await startTestGateway({ config: { cors: { allowed_origins: [APP, 'https://other-app.example'] } } });
  key = (await on.newOrg({ balance: 10_000_000 })).key;
});
after(async () => { await off?.close(); await on?.close(); });

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** One request over node:http (fetch would refuse to send Origin as a browser does). */
function call(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const preflight = (url: string, path: string, origin: string, method = 'POST', asked = SDK_HEADERS): Promise<Answer> =>
  call(url, 'OPTIONS', path, { origin, 'access-control-request-method': method, 'access-control-request-headers': asked });

const corsHeaders = (a: Answer): string[] => Object.keys(a.headers).filter((h) => h.startsWith('access-control-'));

const requestsCounted = async (g: TestGateway): Promise<number> => {
  const text = (await call(g.url, 'GET', '/metrics')).body;
  return [...text.matchAll(/^gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
};

test('off by default: no CORS header on any answer, and OPTIONS is routed as before (405 on an inference path)', async () => {
  const pre = await preflight(off.url, '/v1/responses', APP);
  assert.equal(pre.status, 405);
  assert.deepEqual(corsHeaders(pre), []);
  const answer = await call(off.url, 'GET', '/v1/models', { origin: APP, authorization: 'Bearer nope' });
  assert.deepEqual(corsHeaders(answer), []);
  assert.equal(answer.headers.vary, undefined);
});

test('a preflight from an allowed origin: 204 with the origin, the path\'s methods, the asked headers echoed, a max age; no key, not counted', async () => {
  const before = await requestsCounted(on);
  const paths: Array<[string, string]> = [
    ['/v1/responses', 'POST'], ['/v1/chat/completions', 'POST'], ['/v1/messages', 'POST'], ['/v1/messages/count_tokens', 'POST'],
    ['/v1/interactions', 'POST'], ['/v1/models', 'GET, HEAD'], ['/v1/models/gpt-5.4', 'GET, HEAD'], ['/v1/limits', 'GET, HEAD'],
    ['/v1/usage', 'GET, HEAD'], ['/v1/organization/keys', 'GET, HEAD, POST'],
  ];
  for (const [path, methods] of paths) {
    const pre = await preflight(on.url, path, APP);
    assert.equal(pre.status, 204, path);
    assert.equal(pre.headers['access-control-allow-origin'], APP, path);
    assert.equal(pre.headers['access-control-allow-methods'], methods, path);
    assert.equal(pre.headers['access-control-allow-headers'], SDK_HEADERS, path);
    assert.equal(pre.headers['access-control-max-age'], '7200', path);
    assert.match(String(pre.headers.vary), /^Origin\b/, path);
    assert.equal(pre.headers['access-control-allow-credentials'], undefined, 'credentials are headers, never cookies');
    assert.equal(pre.body, '');
  }
  // The Anthropic and genai SDKs' own headers are allowed alike.
  const asked = 'anthropic-dangerous-direct-browser-access,anthropic-version,x-api-key,content-type';
  assert.equal((await preflight(on.url, '/v1/messages', 'https://other-app.example', 'POST', asked)).headers['access-control-allow-headers'], asked);
  assert.equal(await requestsCounted(on), before, 'a preflight is not a request');
  assert.ok(!on.logLines.some((l) => l.includes('"OPTIONS"') || /"status":40[35]/.test(l)), 'nor logged as a refusal');
});

test('a preflight from an origin not listed: 403 with no CORS header (the browser blocks the request)', async () => {
  for (const origin of [OTHER, 'http://app.example:3001', 'http://app.example:3000.evil.example', 'null']) {
    const pre = await preflight(on.url, '/v1/responses', origin);
    assert.equal(pre.status, 403, origin);
    assert.deepEqual(corsHeaders(pre), [], origin);
    assert.equal(pre.headers.vary, 'Origin');
  }
});

const sent = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 5 })}`, start_within: 'now', ...extra });

/** The headers every answer to an allowed origin carries. */
function assertAllowed(a: Answer, what: string): void {
  assert.equal(a.headers['access-control-allow-origin'], APP, what);
  assert.equal(a.headers.vary, 'Origin', what);
  assert.equal(a.headers['access-control-expose-headers'], EXPOSED_HEADERS, what);
  assert.equal(a.headers['access-control-allow-credentials'], undefined, what);
}

test('answers to an allowed origin name it and expose the gateway headers: 200, an event stream, 401, 400, 405, count_tokens, models', async () => {
  const ok = await call(on.url, 'POST', '/v1/responses', { origin: APP, authorization: `Bearer ${key}` }, sent());
  assert.equal(ok.status, 200, ok.body);
  assertAllowed(ok, '200');
  for (const name of ['x-request-id', 'x-service-cost', 'x-service-flex-reason', 'x-service-served-provider']) {
    assert.ok(ok.headers[name] !== undefined, `${name} is sent`);
    assert.ok(EXPOSED_HEADERS.split(', ').includes(name), `${name} is exposed`);
  }

  const stream = await call(on.url, 'POST', '/v1/chat/completions', { origin: APP, authorization: `Bearer ${key}` },
    JSON.stringify({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `hi ${sim({ output_tokens: 5 })}` }], start_within: 'now', stream: true }));
  assert.equal(stream.status, 200);
  assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
  assert.match(stream.body, /data: \[DONE\]/);
  assertAllowed(stream, 'event stream');

  const wrongKey = await call(on.url, 'POST', '/v1/messages', { origin: APP, authorization: 'Bearer sk-wrong' }, sent());
  assert.equal(wrongKey.status, 401);
  assertAllowed(wrongKey, '401');
  assert.ok(wrongKey.headers['request-id'], 'the Messages request id a page reads');

  const badJson = await call(on.url, 'POST', '/v1/responses', { origin: APP, authorization: `Bearer ${key}` }, '{');
  assert.equal(badJson.status, 400);
  assertAllowed(badJson, '400');

  const wrongMethod = await call(on.url, 'GET', '/v1/responses', { origin: APP });
  assert.equal(wrongMethod.status, 405);
  assertAllowed(wrongMethod, '405');

  // count_tokens sets its request id before it answers (node then merges the head's headers).
  const counted = await call(on.url, 'POST', '/v1/messages/count_tokens', { origin: APP, authorization: `Bearer ${key}` },
    JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'count me' }] }));
  assert.equal(counted.status, 200, counted.body);
  assertAllowed(counted, 'count_tokens');
  assert.equal(counted.headers['request-id'], counted.headers['x-request-id']);

  const models = await call(on.url, 'GET', '/v1/models', { origin: APP, authorization: `Bearer ${key}` });
  assert.equal(models.status, 200);
  assertAllowed(models, 'models');
});

test('an answer to an origin not listed has no CORS header (it varies by Origin); one without Origin has neither', async () => {
  const other = await call(on.url, 'POST', '/v1/responses', { origin: OTHER, authorization: `Bearer ${key}` }, sent());
  assert.equal(other.status, 200, 'served: the browser, not the gateway, keeps the page from reading it');
  assert.deepEqual(corsHeaders(other), []);
  assert.equal(other.headers.vary, 'Origin');
  const server = await call(on.url, 'GET', '/v1/models', { authorization: `Bearer ${key}` });
  assert.deepEqual(corsHeaders(server), []);
  assert.equal(server.headers.vary, undefined);
});

test('the admin API, the dashboard and the probes never answer CORS, even to an allowed origin', async () => {
  const adminPre = await preflight(on.url, '/admin/v1/orgs', APP, 'GET', 'authorization');
  assert.notEqual(adminPre.status, 204);
  assert.deepEqual(corsHeaders(adminPre), []);
  const admin = await call(on.url, 'GET', '/admin/v1/orgs', { origin: APP, authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(admin.status, 200);
  assert.deepEqual(corsHeaders(admin), []);
  for (const path of ['/dashboard', '/metrics', '/healthz', '/readyz']) {
    const a = await call(on.url, 'GET', path, { origin: APP });
    assert.equal(a.status, 200, path);
    assert.deepEqual(corsHeaders(a), [], path);
    assert.deepEqual(corsHeaders(await preflight(on.url, path, APP, 'GET')), [], `${path} preflight`);
  }
});

test('"*" allows every origin (echoed), a 429 included', async () => {
  const any = await startTestGateway({
    config: {
      cors: { allowed_origins: ['*'] },
      abuse_limits: { organization_requests: null, api_key_requests: 2, client_ip_requests: null, failed_authentications: null, publish: false },
    },
  });
  try {
    const k = (await any.newOrg()).key;
    const pre = await preflight(any.url, '/v1/limits', OTHER, 'GET', 'authorization');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], OTHER);
    let last: Answer | undefined;
    for (let i = 0; i < 3; i++) last = await call(any.url, 'GET', '/v1/limits', { origin: OTHER, authorization: `Bearer ${k}` });
    assert.equal(last!.status, 429);
    assert.equal(last!.headers['access-control-allow-origin'], OTHER);
    assert.ok(last!.headers['retry-after'] !== undefined && EXPOSED_HEADERS.includes('retry-after'), 'the SDK can read Retry-After');
  } finally { await any.close(); }
});

test('the CORS headers join a head given as an object, a flat array, pairs or nothing, on a plain node server', async () => {
  const pairs = corsHeadersFor(corsPolicy({ allowed_origins: [APP] })!, APP);
  const heads: unknown[] = [{ 'x-a': '1', 'set-cookie': ['p=1', 'q=2'] }, ['x-a', '1', 'set-cookie', ['p=1', 'q=2']], [['x-a', '1'], ['set-cookie', ['p=1', 'q=2']]], undefined];
  const server: Server = createServer((req, res) => res.writeHead(200, withCorsHeaders(heads[Number(req.url!.slice(1))] as any, pairs)).end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    for (let i = 0; i < heads.length; i++) {
      const a = await call(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'GET', `/${i}`);
      assert.equal(a.headers['access-control-allow-origin'], APP, `head ${i}`);
      assert.equal(a.headers.vary, 'Origin');
      if (heads[i]) assert.deepEqual([a.headers['x-a'], a.headers['set-cookie']], ['1', ['p=1', 'q=2']], `head ${i}`);
    }
  } finally { await new Promise((r) => server.close(r)); }
});

test('every x-service-* header the gateway writes is exposed to pages', () => {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.ts')) for (const m of readFileSync(join(dir, e.name), 'utf8').matchAll(/'(x-service-[a-z-]+)'/g)) names.add(m[1]!);
    }
  };
  walk(new URL('../../lib', import.meta.url).pathname);
  assert.ok(names.size >= 8, `found ${[...names]}`);
  const exposed = EXPOSED_HEADERS.split(', ');
  for (const name of names) assert.ok(exposed.includes(name), `${name} is in EXPOSED_HEADERS`);
});

test('a cors setting that is not a list of origins is refused at start, naming the entry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cors-config-'));
  try {
    const refusal = (cors: unknown): string => {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ cors }));
      try { loadConfig(file); } catch (err) { return (err as Error).message; }
      assert.fail(`loaded: ${JSON.stringify(cors)}`);
    };
    assert.match(refusal({ allowed_origins: ['https://app.example.com/'] }),
      /\/cors\/allowed_origins\/0 must be "\*" or an origin scheme:\/\/host\[:port\].*\(did you mean https:\/\/app\.example\.com\?\)/);
    assert.match(refusal({ allowed_origins: ['https://ok.example', 'app.example.com'] }), /\/cors\/allowed_origins\/1 must be "\*" or an origin/);
    assert.match(refusal({ allowed_origins: ['localhost:3000'] }), /\/cors\/allowed_origins\/0 .*its scheme is localhost:/);
    assert.match(refusal({ allowed_origins: ['HTTPS://App.Example.com'] }), /did you mean https:\/\/app\.example\.com\?/);
    const withPassword = refusal({ allowed_origins: ['https://user:hunter22@app.example.com'] });
    assert.doesNotMatch(withPassword, /hunter22/, 'an entry\'s credentials are never quoted');
    assert.match(refusal({ allowed_origins: ['null'] }), /allowed_origins\/0 must be/);
    // No browser sends a wildcard in Origin: such an entry would never match.
    assert.match(refusal({ allowed_origins: ['https://*.example.com'] }), /allowed_origins\/0 .*wildcards are not supported/);
    assert.match(refusal({ allowed_origins: 'https://app.example.com' }), /\/cors\/allowed_origins must be array/);
    assert.match(refusal({ allow_origins: ['*'] }), /\/cors must NOT have additional properties \("allow_origins"\)/);
    assert.throws(() => loadConfig(undefined, { cors: { allowed_origins: ['ftp://x.example'] } }), /invalid configuration: \/cors\/allowed_origins\/0 .*its scheme is ftp:/);
    assert.deepEqual(loadConfig(undefined).cors, { allowed_origins: [] }, 'off by default');
    writeFileSync(join(dir, 'ok.json'), JSON.stringify({ cors: { allowed_origins: ['*', 'http://127.0.0.1:5173', 'https://app.example.com'] } }));
    assert.deepEqual(loadConfig(join(dir, 'ok.json')).cors.allowed_origins, ['*', 'http://127.0.0.1:5173', 'https://app.example.com']);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
