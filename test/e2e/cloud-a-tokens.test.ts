// cloud_a's access tokens as the gateway mints them (lib/providers/vertex.ts): one token request per
// service account however many requests arrive together, even on a cold process; a token endpoint
// that never answers fails the attempt within the configured limit (upstream_connect_ms +
// upstream_first_byte_ms) instead of holding every request on that key; and a token Vertex answered
// 401 to is not used again. The gateway runs its own adapters (lib/app.ts), pointed at a fake token
// endpoint and a fake Vertex (node:http) in front of a standalone simulator.
//
// The first test must stay first: it needs google-auth-library not yet loaded in this process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { DEFAULT_TIMEOUTS } from '../../lib/timeouts.ts';

/** A provider stand-in: records each request, then answers with the test's handler or forwards
 *  to the simulator. */
interface Fake {
  url: string;
  server: Server;
  seen: Array<{ path: string; auth?: string }>;
  handler?: (req: IncomingMessage, res: ServerResponse, forward: () => Promise<void>) => void | Promise<void>;
}

async function fake(target: () => string): Promise<Fake> {
  const f: Fake = { url: '', server: undefined as unknown as Server, seen: [] };
  f.server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      f.seen.push({ path: req.url!, auth: req.headers.authorization });
      const body = Buffer.concat(parts);
      const forward = async () => {
        const r = await fetch(target() + req.url, {
          method: req.method, body, headers: { 'content-type': String(req.headers['content-type']), authorization: req.headers.authorization ?? '' },
        });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      };
      void Promise.resolve(f.handler ? f.handler(req, res, forward) : forward()).catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => f.server.listen(0, '127.0.0.1', r));
  f.url = `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`;
  return f;
}

const CONNECT_MS = 500;
const FIRST_BYTE_MS = 1000;
const TOKEN_LIMIT_MS = CONNECT_MS + FIRST_BYTE_MS;   // the token request's bound (lib/providers/vertex.ts)

let sim: Simulator;
let token: Fake;
let vertex: Fake;
let t: TestGateway;
const stalled: ServerResponse[] = [];

const serviceAccount = () => ({
  key: {
    type: 'service_account', client_email: `sa-${Math.random().toString(36).slice(2)}@p.iam.gserviceaccount.com`,
    project_id: 'sim-project', token_uri: `${token.url}/token`,
    private_key: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  },
  location: 'us-central1',
});

before(async () => {
  sim = await startSimulator();
  token = await fake(() => sim.url);
  vertex = await fake(() => sim.url);
  t = await startTestGateway({
    config: {
      useSimulator: false,
      routes: { cloud_a: { base_url: vertex.url, allowed_token_uris: [`${token.url}/token`] }, vendor_b: { base_url: sim.url } },
      managed: { cloud_a: serviceAccount() },
      timeouts: { ...DEFAULT_TIMEOUTS, upstream_connect_ms: CONNECT_MS, upstream_first_byte_ms: FIRST_BYTE_MS },
    },
  });
});
after(async () => {
  for (const res of stalled) res.destroy();
  await t.close();
  for (const f of [token, vertex]) { f.server.closeAllConnections(); await new Promise((r) => f.server.close(r)); }
  await sim.close();
});

/** An organization whose own cloud_a key is a fresh service account (its own auth client). */
async function orgWithOwnKey(extra: { ownKeys?: ['vendor_b'] } = {}) {
  const org = await t.newOrg(extra);
  const put = await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/cloud_a`, serviceAccount());
  assert.equal(put.status, 200, JSON.stringify(put.json));
  return org;
}

async function infer(key: string, extra: Record<string, unknown> = {}, waitMs = 10_000) {
  const res = await fetch(`${t.url}/v1/interactions`, {
    method: 'POST', signal: AbortSignal.timeout(waitMs),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-3.5-flash', input: 'hi', start_within: 'now', provider: ['cloud_a'], ...extra }),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const tokenRequests = () => token.seen.length;
const vertexAuth = () => vertex.seen.at(-1)?.auth;

test('a cold process: 100 requests at once on one service account make one token request', async () => {
  const org = await orgWithOwnKey();
  const before = tokenRequests();
  const answers = await Promise.all(Array.from({ length: 100 }, () => infer(org.key, {}, 30_000)));
  assert.deepEqual(answers.map((a) => a.status).filter((s) => s !== 200), [], answers.find((a) => a.status !== 200)?.text);
  assert.equal(tokenRequests() - before, 1, 'one token minted for the whole burst');
  assert.equal(new Set(vertex.seen.slice(-100).map((s) => s.auth)).size, 1, 'every request carried that one token');
});

test('a token endpoint that never answers: 502 provider_error within the limit, and its stalled request is abandoned', async () => {
  const org = await orgWithOwnKey();
  const closedAfter: number[] = [];
  const t0 = Date.now();
  token.handler = (_req, res) => { stalled.push(res); res.on('close', () => closedAfter.push(Date.now() - t0)); };
  try {
    for (const stream of [false, true]) {
      const started = Date.now();
      const x = await infer(org.key, { stream });
      const took = Date.now() - started;
      assert.equal(x.status, 502, x.text);
      assert.equal(JSON.parse(x.text).error.code, 'provider_error');
      assert.match(x.text, /the provider credential could not be used/);
      assert.ok(took >= TOKEN_LIMIT_MS - 100 && took < 2 * TOKEN_LIMIT_MS, `answered after ${took} ms (limit ${TOKEN_LIMIT_MS} ms)`);
    }
    // The shared token request itself times out (the library's client), not only the callers' wait:
    // its connection is closed, so nothing stays stuck behind it.
    assert.ok(closedAfter.length >= 1 && closedAfter[0]! < 2 * TOKEN_LIMIT_MS, `stalled token request closed after ${closedAfter[0]} ms`);
    assert.ok(t.logLines.some((l) => l.includes('cloud_a access token not minted') && l.includes('within')), 'the stall is logged');
  } finally {
    token.handler = undefined;
  }
});

test('a token endpoint that never answers, chain [cloud_a, vendor_b]: the request falls back and is served', async () => {
  const org = await orgWithOwnKey({ ownKeys: ['vendor_b'] });
  token.handler = (_req, res) => { stalled.push(res); };
  try {
    const started = Date.now();
    const x = await infer(org.key, { provider: ['cloud_a', 'vendor_b'] });
    const took = Date.now() - started;
    assert.equal(x.status, 200, x.text);
    assert.equal(x.headers.get('x-service-served-provider'), 'vendor_b');
    assert.equal(x.headers.get('x-service-routing-reason'), 'fallback');
    assert.ok(took < 2 * TOKEN_LIMIT_MS, `served after ${took} ms`);
  } finally {
    token.handler = undefined;
  }
});

test('a token endpoint that answers 503 slowly: the caller waits the limit, not the library\'s retries of it', async () => {
  const org = await orgWithOwnKey();
  const before = tokenRequests();
  token.handler = (_req, res) => {
    setTimeout(() => { res.writeHead(503, { 'content-type': 'application/json' }); res.end('{"error":"backend_error"}'); }, 700);
  };
  try {
    const started = Date.now();
    const x = await infer(org.key);
    const took = Date.now() - started;
    assert.equal(x.status, 502, x.text);
    assert.ok(took < 2 * TOKEN_LIMIT_MS, `answered after ${took} ms (limit ${TOKEN_LIMIT_MS} ms)`);
    assert.ok(tokenRequests() - before >= 2, 'the library retried the 503');
  } finally {
    token.handler = undefined;
  }
});

/** Vertex answers 401 to the tokens in `revoked` (a revoked token: UNAUTHENTICATED). */
function refuse(revoked: Set<string | undefined>): void {
  vertex.handler = async (req, res, forward) => {
    if (!revoked.has(req.headers.authorization)) return forward();
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
    res.end(JSON.stringify({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }));
  };
}

test('own key: a token Vertex answered 401 to is dropped; the next request mints one new token and is served', async () => {
  const org = await orgWithOwnKey();
  assert.equal((await infer(org.key)).status, 200);
  const first = vertexAuth();
  refuse(new Set([first]));
  try {
    const before = tokenRequests();
    const refused = await infer(org.key);
    assert.equal(refused.status, 401, refused.text);
    const next = await infer(org.key);
    assert.equal(next.status, 200, next.text);
    assert.notEqual(vertexAuth(), first, 'a different bearer token');
    assert.equal(tokenRequests() - before, 1, 'exactly one more token request');
    assert.equal((await infer(org.key)).status, 200);
    assert.equal(tokenRequests() - before, 1, 'the new token is cached');
  } finally {
    vertex.handler = undefined;
  }
});

test('managed key: after a 401 the next request, from any organization, carries a fresh token', async () => {
  const a = await t.newOrg({ balance: 50_000_000 });
  const b = await t.newOrg({ balance: 50_000_000 });
  assert.equal((await infer(a.key)).status, 200);
  const first = vertexAuth();
  refuse(new Set([first]));
  try {
    const before = tokenRequests();
    assert.equal((await infer(a.key)).status, 502);
    const other = await infer(b.key);
    assert.equal(other.status, 200, other.text);
    assert.notEqual(vertexAuth(), first);
    assert.equal(tokenRequests() - before, 1, 'exactly one more token request');
  } finally {
    vertex.handler = undefined;
  }
});
