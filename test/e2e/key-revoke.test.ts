// Revoking a key touches that key alone (docs/decisions.md "Keys and limits"). Two gateways in this
// process on one real PostgreSQL database: A reaches it through a TCP proxy the test cuts, B
// directly. While the database is away, own-key inference runs on A's cached keys; one tenant's
// DELETE of a made-up key id must neither cut the other organizations off that cache nor answer 500.
// A revoke that revoked nothing notifies no process; a real one takes effect at once in A and in B
// through its NOTIFY.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig } from '../../lib/config.ts';
import { createGateway, type Gateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { CACHE_CHANNEL } from '../../lib/store/postgres-orgs.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';
import { sim, waitFor } from '../helpers/wait.ts';

const ADMIN = 'key-revoke-admin-token';
const available = await postgresReachable();
const skip = available ? false : 'PostgreSQL not reachable';
let db: TestDatabase;
let proxy: TcpProxy;
let a: Gateway;
let b: Gateway;
const dirs: string[] = [];

async function gateway(databaseUrl: string): Promise<Gateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-revoke-'));
  dirs.push(dataDir);
  return createGateway({
    config: loadConfig(undefined, {}), dataDir, databaseUrl, adminToken: ADMIN, secret: 'key-revoke-secret', port: 0,
    logger: createLogger('warn', new Writable({ write(_chunk, _enc, cb) { cb(); } })), drainMs: 500,
  });
}

before(async () => {
  if (!available) return;
  db = await createTestDatabase('revoke');
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(db.url).port || 5432));
  const viaProxy = new URL(db.url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  a = await gateway(viaProxy.toString());
  b = await gateway(db.url);
});

after(async () => {
  if (!available) return;
  proxy.restore();
  for (const g of [a, b]) await Promise.race([g?.close(), new Promise((r) => setTimeout(r, 5_000))]);
  await proxy.close();
  await db.drop().catch(() => {});
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function admin(g: Gateway, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(g.url + path, {
    method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** An organization on its own vendor_a key (served through an outage) with an inference key. */
async function ownKeyOrg(): Promise<{ orgId: string; key: string; keyId: string }> {
  const { id: orgId } = await admin(a, 'POST', '/admin/v1/orgs', { name: 'own' });
  await admin(a, 'PUT', `/admin/v1/orgs/${orgId}/provider-keys/vendor_a`, { key: 'own-vendor-a-key' });
  const key = await admin(a, 'POST', `/admin/v1/orgs/${orgId}/keys`, {});
  return { orgId, key: key.key, keyId: key.id };
}

async function manageKey(orgId: string): Promise<string> {
  return (await admin(a, 'POST', `/admin/v1/orgs/${orgId}/keys`, { scopes: ['inference', 'manage'] })).key;
}

async function ask(g: Gateway, key: string): Promise<{ status: number; code: string | undefined }> {
  const res = await fetch(`${g.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' }),
  });
  const json = await res.json() as any;
  return { status: res.status, code: json.error?.code };
}

/** Both gateways' cache listeners are connected: a listener that (re)connects drops every cached
 *  lookup (notifications sent meanwhile were lost), which would race the cache a test builds. */
async function listenersUp(): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await waitFor(async () => (await client.query(
      `SELECT count(*)::INT AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ${CACHE_CHANNEL}'`,
    )).rows[0].n === 2, 'both cache listeners connected', 5_000);
  } finally {
    await client.end();
  }
  await new Promise((r) => setTimeout(r, 200));
}

const revoke = async (g: Gateway, key: string, keyId: string): Promise<{ status: number; code: string | undefined }> => {
  const res = await fetch(`${g.url}/v1/organization/keys/${keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, code: ((await res.json()) as any).error?.code };
};

test('database away: a tenant\'s DELETE of a made-up key id is 503 store_unavailable and every other organization keeps its cached key', { skip }, async () => {
  const victim = await ownKeyOrg();
  const attacker = await ownKeyOrg();
  const attackerManage = await manageKey(attacker.orgId);
  await listenersUp();
  assert.equal((await ask(a, victim.key)).status, 200);
  assert.equal((await fetch(`${a.url}/v1/organization`, { headers: { authorization: `Bearer ${attackerManage}` } })).status, 200);

  proxy.cut();
  try {
    assert.deepEqual(await ask(a, victim.key), { status: 200, code: undefined }, 'own keys work on the cached key');
    assert.deepEqual(await revoke(a, attackerManage, 'key_made_up'), { status: 503, code: 'store_unavailable' });
    assert.deepEqual(await revoke(a, attackerManage, victim.keyId), { status: 503, code: 'store_unavailable' });
    assert.deepEqual(await ask(a, victim.key), { status: 200, code: undefined }, 'the victim is not cut off');
  } finally {
    proxy.restore();
  }
  await waitFor(async () => (await fetch(`${a.url}/readyz`)).status === 200, 'A ready again', 5_000);
});

test('a revoke that revoked nothing notifies no process; a real one drops that key at once here and in B, and no other key', { skip }, async () => {
  const victim = await ownKeyOrg();
  const owner = await ownKeyOrg();
  const ownerManage = await manageKey(owner.orgId);
  await listenersUp();
  for (const g of [a, b]) {
    assert.equal((await ask(g, victim.key)).status, 200);
    assert.equal((await ask(g, owner.key)).status, 200);
  }
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  const notes: string[] = [];
  listener.on('notification', (note) => notes.push(note.payload ?? ''));
  await listener.query(`LISTEN ${CACHE_CHANNEL}`);
  try {
    assert.deepEqual(await revoke(a, ownerManage, 'key_made_up'), { status: 404, code: 'key_not_found' });
    assert.deepEqual(await revoke(a, ownerManage, victim.keyId), { status: 404, code: 'key_not_found' }, 'another org\'s key');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(notes, [], 'nothing was revoked, so no process drops its cache');

    assert.equal((await revoke(a, ownerManage, owner.keyId)).status, 200);
    assert.equal((await ask(a, owner.key)).status, 401, 'at once in the process that revoked');
    await waitFor(async () => (await ask(b, owner.key)).status === 401, 'B to refuse the revoked key', 1_000);
    await waitFor(async () => notes.length === 1, 'one notification', 1_000);
    assert.match(notes[0]!, /^keys [0-9a-f]{64}$/);
  } finally {
    await listener.end();
  }

  // The revoke dropped the owner's key alone: A still holds the victim's through an outage.
  proxy.cut();
  try {
    assert.deepEqual(await ask(a, victim.key), { status: 200, code: undefined });
    assert.notEqual((await ask(a, owner.key)).status, 200, 'the revoked key never comes back from a cache');
  } finally {
    proxy.restore();
  }
  await waitFor(async () => (await fetch(`${a.url}/readyz`)).status === 200, 'A ready again', 5_000);
});
