// Abuse limits end to end (counted per gateway instance, in memory): organization, API key, client IP and failed authentications per minute, from the
// configuration; refusals are 429 rate_limit_exceeded with Retry-After; the failed-authentication
// lockout cannot be bypassed with many bad keys, a good key, or another endpoint. Simulated time:
// the windows move only when a test moves the clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import OpenAI from 'openai';
import { startTestGateway, sim, ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.ts';
import { loadConfig, type AbuseConfig } from '../../lib/config.ts';
import { createGateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const NONE: AbuseConfig = { organization_requests: null, api_key_requests: null, client_ip_requests: null, failed_authentications: null, publish: false };

const gateway = async (limits: Partial<AbuseConfig>): Promise<TestGateway> => {
  const g = await startTestGateway({ simulatedTime: true, config: { abuse_limits: { ...NONE, ...limits } } });
  g.clock!.set(T0 + 30_000);                       // mid-minute: the sliding window's previous bucket weighs in
  return g;
};

const clientFor = (g: TestGateway, key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${g.url}/v1`, maxRetries: 0 });
const ask = (g: TestGateway, key: string) =>
  clientFor(g, key).responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' } as any).withResponse();

async function status(p: Promise<unknown>): Promise<{ status: number; code?: string; retryAfter?: string | null }> {
  try { await p; return { status: 200 }; } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { status: err.status!, code: err.code ?? undefined, retryAfter: err.headers?.get('retry-after') };
  }
}

/** 429 rate_limit_exceeded with a whole-seconds Retry-After; returns it. */
async function limited(p: Promise<unknown>, what: string): Promise<number> {
  const r = await status(p);
  assert.equal(r.status, 429, `${what}: ${JSON.stringify(r)}`);
  assert.equal(r.code, 'rate_limit_exceeded', what);
  const ra = Number(r.retryAfter);
  assert.ok(Number.isInteger(ra) && ra >= 1 && ra <= 120, `${what}: Retry-After ${r.retryAfter}`);
  return ra;
}

async function ok(p: Promise<unknown>, what: string): Promise<void> {
  const r = await status(p);
  assert.equal(r.status, 200, `${what}: ${JSON.stringify(r)}`);
}

const getLimits = (g: TestGateway, key: string) => fetch(`${g.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } });
const getModels = (g: TestGateway, key: string) => fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });

test('api_key_requests and organization_requests per minute: 429 rate_limit_exceeded with Retry-After; other orgs unaffected; Retry-After is enough', async () => {
  const g = await gateway({ organization_requests: 5, api_key_requests: 3 });
  try {
    const a = await g.newOrg({ balance: 1_000_000 });
    const a2 = await g.admin('POST', `/admin/v1/orgs/${a.orgId}/keys`, {});
    const b = await g.newOrg({ ownKeys: ['vendor_a'] });         // own keys are limited too
    for (let i = 0; i < 3; i++) await ok(ask(g, a.key), `key 1, request ${i + 1}`);
    const keyWait = await limited(ask(g, a.key), 'key 1, request 4 (api_key_requests = 3)');
    for (let i = 0; i < 2; i++) await ok(ask(g, a2.json.key), `key 2, request ${i + 1}`);
    const orgWait = await limited(ask(g, a2.json.key), 'key 2, request 3 (organization_requests = 5)');
    for (let i = 0; i < 3; i++) await ok(ask(g, b.key), `another organization, request ${i + 1}`);
    assert.equal((await g.admin('GET', `/admin/v1/orgs/${a.orgId}/ledger`)).json.snapshot.serving, 'ok', 'an abuse refusal is no pause');
    assert.equal((await getLimits(g, a.key)).status, 429, 'GET /v1/limits is a request of the key and organization too');

    g.clock!.increment((Math.max(keyWait, orgWait) - 1) * 1_000);
    await limited(ask(g, a2.json.key), 'one second before Retry-After');
    g.clock!.increment(1_000);
    await ok(ask(g, a2.json.key), 'after Retry-After');
  } finally { await g.close(); }
});

test('client_ip_requests per minute: every request from the IP counts, whatever the key; 429 with Retry-After; 60 s later it works', async () => {
  const g = await gateway({ client_ip_requests: 4 });
  try {
    const a = await g.newOrg({ balance: 1_000_000 });
    const b = await g.newOrg({ ownKeys: ['vendor_a'] });
    await ok(ask(g, a.key), 'request 1');
    await ok(ask(g, b.key), 'request 2');
    assert.equal((await status(ask(g, 'flex_live_wrong'))).status, 401, 'request 3 (a bad key still counts)');
    await ok(ask(g, a.key), 'request 4');
    await limited(ask(g, b.key), 'request 5, another organization');
    await limited(ask(g, 'flex_live_wrong'), 'request 5, a bad key (refused before authentication)');
    g.clock!.increment(60_000);
    await ok(ask(g, a.key), 'the next minute');
  } finally { await g.close(); }
});

test('failed_authentications: many bad keys lock the IP out; then even a good key is refused until the window frees (60 s)', async () => {
  const g = await gateway({ failed_authentications: 3 });
  try {
    const org = await g.newOrg({ balance: 1_000_000 });
    for (let i = 0; i < 3; i++) {
      const r = await status(ask(g, `flex_live_bad-${i}`));
      assert.deepEqual([r.status, r.code], [401, 'invalid_api_key'], `bad key ${i}`);
    }
    await limited(ask(g, 'flex_live_bad-3'), 'a fourth bad key');
    const wait = await limited(ask(g, org.key), 'a good key from the locked-out IP');
    assert.ok(wait <= 60);
    g.clock!.increment((wait - 1) * 1_000);
    await limited(ask(g, org.key), 'a second before Retry-After');
    await limited(ask(g, 'flex_live_bad-4'), 'a bad key a second before Retry-After');
    g.clock!.increment(1_000);
    await ok(ask(g, org.key), 'the good key once the window frees (Retry-After)');
    // A window later (60 s after the failures) every failure has left the window.
    g.clock!.set(T0 + 30_000 + 60_000);
    for (let i = 0; i < 3; i++) await ok(ask(g, org.key), `60 s after the failures, request ${i + 1}`);
  } finally { await g.close(); }
});

test('failed_authentications: failures on GET /v1/limits count, and the lockout holds on GET /v1/limits (no key-guessing oracle)', async () => {
  const g = await gateway({ failed_authentications: 3 });
  try {
    const org = await g.newOrg({ balance: 1_000_000 });
    for (let i = 0; i < 3; i++) assert.equal((await getLimits(g, `flex_live_guess-${i}`)).status, 401);
    await limited(ask(g, org.key), 'inference after three failures on /v1/limits');
    for (const key of ['flex_live_guess-9', org.key]) {
      const res = await getLimits(g, key);
      assert.equal(res.status, 429, `/v1/limits during the lockout (${key === org.key ? 'good' : 'bad'} key)`);
      assert.equal(((await res.json()) as any).error.code, 'rate_limit_exceeded');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    g.clock!.increment(60_000);
    assert.equal((await getLimits(g, org.key)).status, 200);
  } finally { await g.close(); }
});

test('failed_authentications: the lockout holds on GET /v1/models too', async () => {
  const g = await gateway({ failed_authentications: 3 });
  try {
    const org = await g.newOrg({ balance: 1_000_000 });
    for (let i = 0; i < 3; i++) assert.equal((await getModels(g, `flex_live_guess-${i}`)).status, 401);
    await limited(ask(g, org.key), 'inference after three failures on /v1/models');
    const res = await getModels(g, 'flex_live_guess-9');
    assert.equal(res.status, 429, '/v1/models answers 401/200 during the lockout: an unlimited key-guessing oracle');
  } finally { await g.close(); }
});

test('abuse limits are per instance: a second gateway on the same data folder counts its own minute', async () => {
  const g = await gateway({ api_key_requests: 2 });
  const dataDir = dirname(g.gw.services.store.file!);
  const config = loadConfig(undefined, { abuse_limits: { ...NONE, api_key_requests: 2 } });
  const other = await createGateway({ config, dataDir, adminToken: ADMIN_TOKEN, secret: 'test-secret', port: 0, logger: createLogger('silent'), clock: { now: () => g.clock!.now() }, drainMs: 500 });
  try {
    const org = await g.newOrg({ balance: 1_000_000 });
    const otherT = { ...g, url: other.url } as TestGateway;
    await ok(ask(g, org.key), 'instance 1, request 1');
    await ok(ask(g, org.key), 'instance 1, request 2');
    await limited(ask(g, org.key), 'instance 1, request 3');
    await ok(ask(otherT, org.key), 'instance 2, request 1');
    await ok(ask(otherT, org.key), 'instance 2, request 2');
    await limited(ask(otherT, org.key), 'instance 2, request 3');
  } finally {
    await other.close();
    await g.close();
  }
});
