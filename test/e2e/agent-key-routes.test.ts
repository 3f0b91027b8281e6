// An agent key's default route chain (`default_provider`): a client that cannot add the gateway's
// `provider` field (Claude Code, Codex, an SDK app) is routed by its key, as if its body named
// the chain. Set by the admin API and the organization API, kept by both stores, checked like the
// body field (test/routing/validate.test.ts has the rules).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { openDatabase } from '../../lib/store/db.ts';
import { OrgStore } from '../../lib/store/orgs.ts';
import { SecretBox } from '../../lib/store/secrets.ts';
import { sqliteOrgRows } from '../../lib/store/sqlite-orgs.ts';
import { postgresOrgRows } from '../../lib/store/postgres-orgs.ts';
import { createTestDatabase, postgresReachable, testPool } from '../helpers/postgres.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(() => t.close());

test('a Messages caller with neither provider nor start_within is served by its key\'s chain (cloud_b), and its body\'s own chain still wins', async () => {
  const { key } = await t.newOrg({ balance: 10_000_000, defaultStartWithin: 'now', defaultProvider: ['cloud_b', 'vendor_c'] });
  const anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  const { data, response } = await anthropic.messages.create({
    model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }],
  }).withResponse();
  assert.equal(data.type, 'message');
  assert.equal(response.headers.get('x-service-served-provider'), 'cloud_b');
  assert.equal(response.headers.get('x-service-routing-reason'), 'requested', 'the key requested it');

  const own = await anthropic.messages.create({
    model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], provider: ['vendor_c'],
  } as any).withResponse();
  assert.equal(own.response.headers.get('x-service-served-provider'), 'vendor_c');

  // A model no route of the key's chain serves is refused, and the message says whose chain it was.
  const openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  await assert.rejects(openai.responses.create({ model: 'gpt-5.4-mini', input: 'hi' }), (err: any) => {
    assert.equal(err.status, 400);
    assert.equal(err.error.code, 'provider_model_mismatch');
    assert.match(err.error.message, /default_provider/);
    return true;
  });
});

test('count_tokens counts with vendor C only where the key\'s chain may send the prompt: a Bedrock-only key gets the estimate', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_c'] });
  const count = async (defaultProvider?: string[]) => {
    const k = await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { default_provider: defaultProvider ?? null });
    const anthropic = new Anthropic({ authToken: k.json.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
    return (await anthropic.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hello there' }] })) as any;
  };
  assert.equal((await count()).counted_by, 'vendor_c');
  assert.equal((await count(['cloud_b', 'vendor_c'])).counted_by, 'vendor_c');
  assert.equal((await count(['cloud_b'])).counted_by, 'gateway_estimate');
});

test('keys are created with default_provider by the admin API and the organization API, listed with it, and a bad chain is refused naming the field', async () => {
  const org = await t.newOrg();
  const bad = await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { default_provider: ['cloud_b', 'cloud_b'] });
  assert.deepEqual([bad.status, bad.json.error.code, bad.json.error.param], [400, 'invalid_provider_chain', 'default_provider']);
  const manage = await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['inference', 'manage'], default_provider: ['vendor_c'] });
  assert.equal(manage.status, 201);
  const call = (method: string, body?: unknown) => fetch(`${t.url}/v1/organization/keys`, {
    method, headers: { authorization: `Bearer ${manage.json.key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}),
  }).then(async (r) => ({ status: r.status, json: await r.json() as any }));
  const created = await call('POST', { default_start_within: 'now', default_provider: ['cloud_a', 'vendor_b'] });
  assert.equal(created.status, 201);
  assert.deepEqual([created.json.default_start_within, created.json.default_provider], ['now', ['cloud_a', 'vendor_b']]);
  const refused = await call('POST', { default_provider: ['vendor_x'] });
  assert.deepEqual([refused.status, refused.json.error.code, refused.json.error.param], [400, 'invalid_provider_chain', 'default_provider']);
  const listed = await call('GET');
  const byId = new Map(listed.json.data.map((k: any) => [k.id, k.default_provider]));
  assert.deepEqual(byId.get(created.json.id), ['cloud_a', 'vendor_b']);
  assert.deepEqual(byId.get(manage.json.id), ['vendor_c']);
  assert.equal(byId.get(org.keyId), null);
});

/** A key with a chain and one without, read back by hash and listed. */
async function keepsChains(store: OrgStore): Promise<void> {
  const org = await store.createOrg('agents', 1_000);
  const agent = await store.createKey(org.id, { startWithin: 'now', provider: ['cloud_b', 'vendor_c'] }, 2_000);
  const plain = await store.createKey(org.id, { startWithin: null, provider: null }, 3_000);
  assert.equal((await store.findKey(agent.key))!.defaultProvider, 'cloud_b vendor_c');
  assert.equal((await store.findKey(plain.key))!.defaultProvider, null);
  assert.deepEqual((await store.listKeys(org.id)).map((k) => k.default_provider), [null, ['cloud_b', 'vendor_c']]);
}

test('SQLite keeps a key\'s chain; a file from before the column gets it, its keys without a chain', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-keys-'));
  try {
    // The api_keys table as an earlier build left it (no default_provider), one key in it.
    const old = new Database(join(dir, 'gateway.db'));
    old.exec(`CREATE TABLE orgs (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE api_keys (id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), hash TEXT NOT NULL UNIQUE,
        default_start_within TEXT, created_at INTEGER NOT NULL, revoked_at INTEGER, scopes TEXT NOT NULL DEFAULT 'inference');
      INSERT INTO orgs VALUES ('org_old', 'old', 1);
      INSERT INTO api_keys (id, org_id, hash, default_start_within, created_at) VALUES ('key_old', 'org_old', 'h', 'now', 1);`);
    old.close();
    const db = openDatabase(dir);
    try {
      const store = new OrgStore(sqliteOrgRows(db), new SecretBox('s'));
      assert.deepEqual((await store.listKeys('org_old')).map((k) => [k.id, k.default_start_within, k.default_provider]), [['key_old', 'now', null]]);
      await keepsChains(store);
    } finally { db.close(); }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PostgreSQL keeps a key\'s chain (migration 10)', { skip: !(await postgresReachable()) && 'PostgreSQL not reachable' }, async () => {
  const pgdb = await createTestDatabase('agent_keys', { migrated: true });
  const pool = testPool(pgdb.url);
  try {
    await keepsChains(new OrgStore(postgresOrgRows(pool), new SecretBox('s')));
  } finally {
    await pool.end();
    await pgdb.drop();
  }
});
