// The organization-scoped management API and its scope model: an inference-only key manages
// nothing; a manage key creates keys (shown once), revokes its own org's keys only, sets and
// deletes provider keys (never shown back), and the next request on that route runs byok.
// Also: a graceful shutdown writes the queued usage records.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(() => t.close());

const call = async (key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(t.url + path, {
    method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text };
};

async function manageKey(orgId: string): Promise<string> {
  const r = await t.admin('POST', `/admin/v1/orgs/${orgId}/keys`, { scopes: ['inference', 'manage'] });
  assert.equal(r.status, 201);
  assert.deepEqual(r.json.scopes, ['inference', 'manage']);
  return r.json.key;
}

test('an inference-only key reads who it is but manages nothing (403 insufficient_scope)', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const me = await call(org.key, 'GET', '/v1/organization');
  assert.equal(me.status, 200);
  assert.equal(me.json.id, org.orgId);
  assert.deepEqual(me.json.key, { id: org.keyId, scopes: ['inference'] });
  const attempts: Array<[string, string, unknown?]> = [
    ['GET', '/v1/organization/keys'],
    ['POST', '/v1/organization/keys', { scopes: ['inference', 'manage'] }],
    ['DELETE', `/v1/organization/keys/${org.keyId}`],
    ['GET', '/v1/organization/provider-keys'],
    ['PUT', '/v1/organization/provider-keys/vendor_a', { key: 'sk-x' }],
    ['DELETE', '/v1/organization/provider-keys/vendor_a'],
  ];
  for (const [m, p, b] of attempts) {
    const r = await call(org.key, m, p, b);
    assert.equal(r.status, 403, `${m} ${p}`);
    assert.equal(r.json.error.code, 'insufficient_scope');
  }
  assert.equal((await call(org.key, 'GET', '/v1/limits')).status, 200, 'still reads its limits');
  assert.equal((await call(org.key, 'GET', '/v1/usage')).status, 200, 'and its usage');
  assert.equal((await call('flex_live_wrong', 'GET', '/v1/organization')).status, 401);
});

test('a manage key: create (shown once, works), list (no secrets), revoke (then 401); other orgs\' keys are not found', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const other = await t.newOrg({ balance: 1_000_000 });
  const mk = await manageKey(org.orgId);
  const created = await call(mk, 'POST', '/v1/organization/keys', {});
  assert.equal(created.status, 201);
  assert.match(created.json.key, /^flex_live_/);
  assert.deepEqual(created.json.scopes, ['inference']);
  const list = await call(mk, 'GET', '/v1/organization/keys');
  assert.equal(list.status, 200);
  assert.deepEqual(new Set(list.json.data.map((k: any) => k.id)), new Set([org.keyId, created.json.id, list.json.data.find((k: any) => k.scopes.includes('manage')).id]));
  assert.ok(!list.text.includes(created.json.key), 'the key is never listed');
  assert.ok(!list.text.includes('hash'));
  const c = new OpenAI({ apiKey: created.json.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  await c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' } as any);

  assert.equal((await call(mk, 'DELETE', `/v1/organization/keys/${other.keyId}`)).status, 404, 'another org\'s key id');
  assert.equal((await call(other.key, 'GET', '/v1/limits')).status, 200, 'still valid');
  const rev = await call(mk, 'DELETE', `/v1/organization/keys/${created.json.id}`);
  assert.equal(rev.status, 200);
  await assert.rejects(c.responses.create({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' } as any), (e: any) => e.status === 401);
  assert.equal((await call(mk, 'DELETE', `/v1/organization/keys/${created.json.id}`)).status, 404, 'revoked once');
  const bad = await call(mk, 'POST', '/v1/organization/keys', { scopes: ['admin'] });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, 'scopes');
});

test('provider keys from the management API: set → next request runs byok; listed without the key; delete → managed again', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const mk = await manageKey(org.orgId);
  const c = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const ask = () => c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' } as any).withResponse();
  assert.notEqual((await ask()).response.headers.get('x-service-spend-remaining'), 'unlimited');

  const put = await call(mk, 'PUT', '/v1/organization/provider-keys/vendor_a', { key: 'own-vendor_a-secret' });
  assert.equal(put.status, 200);
  assert.ok(!put.text.includes('own-vendor_a-secret'));
  const list = await call(mk, 'GET', '/v1/organization/provider-keys');
  assert.deepEqual(list.json.data.map((p: any) => [p.route, p.configured]), [['vendor_a', true]]);
  assert.ok(!list.text.includes('own-vendor_a-secret'), 'never shown back');
  assert.equal((await ask()).response.headers.get('x-service-spend-remaining'), 'unlimited', 'byok at once');

  assert.equal((await call(mk, 'PUT', '/v1/organization/provider-keys/vendor_z', { key: 'x' })).status, 400);
  assert.equal((await call(mk, 'PUT', '/v1/organization/provider-keys/vendor_a', { nope: 1 })).status, 400);
  assert.equal((await call(mk, 'DELETE', '/v1/organization/provider-keys/vendor_a')).status, 200);
  assert.equal((await call(mk, 'DELETE', '/v1/organization/provider-keys/vendor_a')).status, 404);
  assert.notEqual((await ask()).response.headers.get('x-service-spend-remaining'), 'unlimited');
  await t.gw.services.usage.flush();
  const modes = (await call(org.key, 'GET', '/v1/usage/requests')).json.data.map((r: any) => r.key_mode);
  assert.deepEqual(modes, ['managed', 'byok', 'managed']);
});

test('graceful shutdown writes the queued records (flush timer far away)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-usage-shutdown-'));
  try {
    const g = await startTestGateway({ dataDir, config: { usage: { retention_days: 30, queue_capacity: 100, batch_size: 100, flush_interval_ms: 3_600_000, prune_interval_ms: 3_600_000 } } });
    const org = await g.newOrg({ balance: 1_000_000 });
    const c = new OpenAI({ apiKey: org.key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' } as any);
    assert.equal(g.gw.services.usage.queue.depth, 3, 'still queued');
    await g.close();
    const again = await startTestGateway({ dataDir });
    const r = await fetch(`${again.url}/v1/usage`, { headers: { authorization: `Bearer ${org.key}` } });
    assert.equal(((await r.json()) as any).totals.requests, 3);
    await again.close();
  } finally { rmSync(dataDir, { recursive: true, force: true }); }
});

test('a full usage queue never fails a request: the drops show in /metrics (the log line: queue.test.ts)', async () => {
  const g = await startTestGateway({ config: { usage: { retention_days: 30, queue_capacity: 2, batch_size: 100, flush_interval_ms: 3_600_000, prune_interval_ms: 3_600_000 } } });
  try {
    const org = await g.newOrg({ balance: 1_000_000 });
    const c = new OpenAI({ apiKey: org.key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    const answers = await Promise.all(Array.from({ length: 6 }, () =>
      c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' } as any)));
    assert.ok(answers.every((a) => a.status === 'completed'));
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    assert.match(metrics, /^gateway_usage_records_dropped_total 4$/m);
    await g.gw.services.usage.flush();
    assert.match(await (await fetch(`${g.url}/metrics`)).text(), /^gateway_usage_records_written_total 2$/m);
    const r = await fetch(`${g.url}/v1/usage`, { headers: { authorization: `Bearer ${org.key}` } });
    assert.equal(((await r.json()) as any).totals.requests, 2);
  } finally { await g.close(); }
});

test('malformed percent-encoding in a management path is the caller\'s 400, not a 500', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const mk = await manageKey(org.orgId);
  for (const path of ['/v1/organization/keys/%ZZ', '/v1/organization/provider-keys/%E0%A4%A']) {
    const r = await call(mk, 'DELETE', path);
    assert.equal(r.status, 400, path);
    assert.equal(r.json.error.code, 'invalid_request', path);
  }
});
