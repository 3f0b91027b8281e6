// The offline move from one gateway on SQLite to gateways on PostgreSQL (lib/store/sqlite-to-postgres.ts):
// a real gateway on a kept data folder serves own-key and managed organizations through the
// OpenAI SDK, stops, the migration copies its file into a fresh database, and a gateway on that
// database answers as the first did: the same keys (a revoked one still refused), the own key
// opened with the new secret, the same limits, usage history and ledger, the stored conversation
// continued, the pauses and the review held. What the migration must refuse leaves the target
// untouched. Both gateways use one provider (a simulator of their own), as a real deployment keeps
// its providers, so stored responses outlive the move.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { SimulatedClock } from 'xstate';
import { loadConfig, ROUTES, type GatewayConfig } from '../../lib/config.ts';
import { createGateway, type Gateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import {
  COPIED_TABLES, MigrationRefused, POSTGRES_ONLY, SQLITE_ONLY, migrateSqliteToPostgres, type MigrationOptions,
} from '../../lib/store/sqlite-to-postgres.ts';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';
import Database from 'better-sqlite3';

const available = await postgresReachable();
const pgSkip = available ? false : 'PostgreSQL not reachable';
const ENTRY = fileURLToPath(new URL('../../lib/migrate-to-postgres.ts', import.meta.url));
const SQLITE_SECRET = 'test-secret';   // what startTestGateway seals provider keys with
const PG_SECRET = 'migrated-pg-secret';

let simulator: Simulator;
const cleanup: Array<() => Promise<void> | void> = [];

before(async () => {
  if (!available) return;
  simulator = await startSimulator({ standard: { startMs: 5 }, tokensPerS: 1_000, outputTokens: 4 });
});
after(async () => {
  for (const step of cleanup.reverse()) await step();
  await simulator?.close();
});

/** Every gateway of a test on the one simulator, the direct routes managed on its keys. */
function config(): Partial<GatewayConfig> {
  const sim = simulator.url;
  return {
    routes: Object.fromEntries(ROUTES.filter((r) => !r.startsWith('cloud')).map((r) => [r, { base_url: sim }])),
    managed: { vendor_a: { key: 'sim-key-vendor-a' }, vendor_b: { key: 'sim-key-vendor-b' }, vendor_c: { key: 'sim-key-vendor-c' } },
    useSimulator: false,
  };
}

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-migrate-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function database(tag: string): Promise<TestDatabase> {
  const db = await createTestDatabase(tag);
  cleanup.push(() => db.drop());
  return db;
}

function options(dir: string, db: TestDatabase, extra: Partial<MigrationOptions> = {}): MigrationOptions & { lines: string[] } {
  const lines: string[] = [];
  return { dataDir: dir, sourceSecret: SQLITE_SECRET, databaseUrl: db.url, targetSecret: PG_SECRET, print: (l) => lines.push(l), lines, ...extra };
}

/** The tables of the target's schema, or none while it was never migrated. */
async function targetRows(db: TestDatabase): Promise<Record<string, number>> {
  const pool = testPool(db.url, 1);
  try {
    const tables = (await pool.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'")).rows;
    const out: Record<string, number> = {};
    for (const { t } of tables) out[t] = Number((await pool.query(`SELECT COUNT(*) AS n FROM ${t}`)).rows[0].n);
    return out;
  } finally { await pool.end(); }
}

async function call(
  url: string, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url + path, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** A top-up a billing job sends with its Idempotency-Key: credited once, wherever it is retried. */
const CREDIT = { credit_micro_usd: 1_234_567 };
const topupOnce = (url: string, orgId: string) =>
  call(url, 'POST', `/admin/v1/orgs/${orgId}/topups`, ADMIN_TOKEN, CREDIT, { 'idempotency-key': 'billing-run-42' });

const sdk = (url: string, key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
const ask = (url: string, key: string, extra: Record<string, unknown> = {}): Promise<any> =>
  sdk(url, key).responses.create({ model: 'gpt-5.4-mini', input: 'Remember the number 7.', start_within: 'now', ...extra } as any);

/** What an organization's callers and the operator read of it: compared before and after the move. */
async function views(url: string, org: { orgId: string; key: string }): Promise<Record<string, unknown>> {
  return {
    limits: (await call(url, 'GET', '/v1/limits', org.key)).json,
    usage: (await call(url, 'GET', '/v1/usage?group_by=model', org.key)).json,
    requests: (await call(url, 'GET', '/v1/usage/requests?limit=100', org.key)).json,
    ledger: (await call(url, 'GET', `/admin/v1/orgs/${org.orgId}/ledger`, ADMIN_TOKEN)).json,
  };
}

/** The entry (`npm run migrate-to-postgres`) as an operator runs it: its exit code and output. */
function runEntry(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', ENTRY], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (err as { code?: number }).code ?? 1 : 0, stdout, stderr });
    });
  });
}

test('a SQLite gateway moves to PostgreSQL: the same keys, money, usage, conversations and pauses; refusals leave the target untouched', { skip: pgSkip }, async () => {
  const clock = new SimulatedClock();
  clock.set(Date.UTC(2026, 10, 21, 12, 0, 0));
  const dir = dataDir();
  const t: TestGateway = await startTestGateway({ dataDir: dir, config: config(), clock });
  let closed = false;
  cleanup.push(async () => { if (!closed) await t.close(); });

  // Organizations of every kind the ledger tells apart.
  const own = await t.newOrg({ ownKeys: ['vendor_a'] });
  const revoked = (await t.admin('POST', `/admin/v1/orgs/${own.orgId}/keys`, {})).json;
  assert.equal((await t.admin('DELETE', `/admin/v1/keys/${revoked.id}`)).status, 200);
  const managed = await t.newOrg({ balance: 50_000_000 });
  assert.equal((await topupOnce(t.url, managed.orgId)).status, 200);
  assert.equal((await t.admin('PUT', `/admin/v1/orgs/${managed.orgId}/overrides`, { concurrency: 5, daily_spend_micro_usd: 40_000_000 })).status, 200);
  const other = await t.newOrg({ balance: 10_000_000 });
  const review = await t.newOrg({ balance: 10_000_000 });
  assert.equal((await t.admin('POST', `/admin/v1/orgs/${review.orgId}/review`)).status, 200);
  const capped = await t.newOrg({ balance: 10_000_000 });
  assert.equal((await t.admin('PUT', `/admin/v1/orgs/${capped.orgId}/overrides`, { daily_spend_micro_usd: 1 })).status, 200);
  const exempt = await t.newOrg({ balance: 3_000_000 });
  assert.equal((await t.admin('PUT', `/admin/v1/orgs/${exempt.orgId}/exempt`, { exempt: true })).status, 200);
  const broke = await t.newOrg();

  // Requests through the SDK: own key, managed (a stored response to continue later), exempt; the
  // capped org passes its ceiling with its first request and is paused by its second.
  const ownAnswer = await ask(t.url, own.key);
  assert.equal(ownAnswer.status, 'completed');
  const stored = await ask(t.url, managed.key);
  assert.match(stored.id, /^resp_/);
  await sdk(t.url, managed.key).chat.completions.create({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now' } as any);
  await ask(t.url, exempt.key);
  await ask(t.url, capped.key);
  const refusals = async (url: string): Promise<Record<string, number>> => ({
    review: (await ask(url, review.key).catch((e) => e)).status,
    capped: (await ask(url, capped.key).catch((e) => e)).status,
    broke: (await ask(url, broke.key).catch((e) => e)).status,
    revoked: (await ask(url, revoked.key).catch((e) => e)).status,
  });
  const refusedBefore = await refusals(t.url);
  assert.deepEqual(refusedBefore, { review: 403, capped: 429, broke: 402, revoked: 401 });
  await t.gw.services.usage.flush();
  const named = { own, managed, other, review, capped, exempt, broke };
  const before: Record<string, any> = Object.fromEntries(await Promise.all(
    Object.entries(named).map(async ([name, org]) => [name, await views(t.url, org)])));
  assert.ok(before.managed.ledger.snapshot.dailyUsedMicroUsd > 0, 'the managed org has spent today');
  assert.equal(before.own.requests.data.length, 1);
  assert.equal(before.own.requests.data[0].key_mode, 'byok');

  // While the gateway runs, its file is refused.
  const target = await database('migrate');
  await assert.rejects(migrateSqliteToPostgres(options(dir, target)), (e) => e instanceof MigrationRefused && /is open in process/.test(e.message));
  await t.close();
  closed = true;
  const sourceBytes = readFileSync(join(dir, 'gateway.db'));

  // Refused: no target secret; a source secret that does not open the provider key. Untouched.
  await assert.rejects(migrateSqliteToPostgres(options(dir, target, { targetSecret: undefined })),
    (e) => e instanceof MigrationRefused && /GATEWAY_SECRET_KEY is not set/.test(e.message));
  await assert.rejects(migrateSqliteToPostgres(options(dir, target, { sourceSecret: 'not-the-secret' })),
    (e) => e instanceof MigrationRefused && new RegExp(`1 of 1 provider key.*${own.orgId}/vendor_a`).test(e.message));
  assert.deepEqual(await targetRows(target), {}, 'nothing was created in the target');

  // The move.
  const run = options(dir, target);
  const summary = await migrateSqliteToPostgres(run);
  assert.ok(readFileSync(join(dir, 'gateway.db')).equals(sourceBytes), 'the SQLite file is unchanged');
  const snapshots = Object.values(before).map((view) => view.ledger.snapshot);
  const total = (field: string): bigint => snapshots.reduce((sum, s) => sum + BigInt(s[field]), 0n);
  assert.equal(summary.rows.orgs, 7);
  assert.equal(summary.rows.api_keys, 8, 'one key per org and the revoked one');
  assert.equal(summary.rows.provider_keys, 1);
  assert.equal(summary.rows.usage_records, Object.values(before).reduce((n, view) => n + view.requests.data.length, 0));
  assert.deepEqual(summary.money, {
    orgs: 7, cashMicroUsd: total('cashMicroUsd'), creditMicroUsd: total('creditMicroUsd'),
    dailySpendMicroUsd: total('dailyUsedMicroUsd'), usageCostMicroUsd: Object.values(before).reduce((sum, view) => sum + BigInt(view.usage.totals.cost_micro_usd), 0n),
  });
  assert.match(run.lines.join('\n'), new RegExp(`verified per organization \\(7\\): cash ${total('cashMicroUsd')} micro-USD`));

  // A gateway on PostgreSQL with the new secret.
  const pgDir = dataDir();
  const gw: Gateway = await createGateway({
    config: loadConfig(undefined, config()), dataDir: pgDir, databaseUrl: target.url, adminToken: ADMIN_TOKEN, secret: PG_SECRET, port: 0,
    clock: { now: () => clock.now() }, timerClock: clock, drainMs: 500,
    logger: createLogger('warn', new Writable({ write(_c, _e, cb) { cb(); } })),
  });
  cleanup.push(() => gw.close());
  assert.equal(gw.services.store.kind, 'postgres');

  // Everything the callers and the operator read is as it was.
  for (const [name, org] of Object.entries(named)) {
    assert.deepEqual(await views(gw.url, org), before[name], `${name}: limits, usage, requests, ledger and keys as before`);
  }
  assert.deepEqual(await refusals(gw.url), refusedBefore, 'review, ceiling and balance pauses hold; the revoked key stays revoked');

  // A top-up retried after the move is known by its Idempotency-Key: not credited twice.
  const replay = await topupOnce(gw.url, managed.orgId);
  assert.equal(replay.status, 200);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.json.creditMicroUsd, before.managed.ledger.snapshot.creditMicroUsd);

  // The own key opens with the new secret; the stored conversation continues for its org alone.
  // (The org has no managed money: a key that did not open could not be served on the service's.)
  assert.equal((await ask(gw.url, own.key)).status, 'completed');
  const next = await sdk(gw.url, managed.key).responses.create(
    { model: 'gpt-5.4-mini', input: 'Which number?', previous_response_id: stored.id, start_within: 'now' } as any).withResponse();
  assert.equal(next.response.headers.get('x-service-routing-reason'), 'pinned');
  await assert.rejects(ask(gw.url, other.key, { previous_response_id: stored.id }), (e: any) => e.status === 404, 'another org cannot name it');

  // New rows continue after the copied ids (the sequences moved on).
  const lastEntry = Math.max(...Object.values(before).flatMap((view) => view.ledger.entries.map((e: any) => e.id)));
  const ledgerNow = (await call(gw.url, 'GET', `/admin/v1/orgs/${managed.orgId}/ledger`, ADMIN_TOKEN)).json;
  assert.ok(ledgerNow.entries[0].id > lastEntry, 'a new ledger entry follows the copied ones');
  await gw.services.usage.flush();
  const ownRecords = (await call(gw.url, 'GET', '/v1/usage/requests?limit=100', own.key)).json.data;
  assert.deepEqual(ownRecords.map((r: any) => [r.key_mode, r.status]), [['byok', 200], ['byok', 200]]);
  const records = (await call(gw.url, 'GET', '/v1/usage/requests?limit=100', managed.key)).json.data;
  assert.equal(records.length, before.managed.requests.data.length + 1, 'the new record was written after the copied ones');

  // A second run refuses (exit 2) and changes nothing.
  const rowsBefore = await targetRows(target);
  const second = await runEntry({ GATEWAY_DATA_DIR: dir, GATEWAY_DATABASE_URL: target.url, GATEWAY_SECRET_KEY: PG_SECRET, GATEWAY_SOURCE_SECRET_KEY: SQLITE_SECRET });
  assert.equal(second.code, 2, second.stderr);
  assert.match(second.stderr, /refused, nothing changed: the target database already holds data \(orgs: 7/);
  assert.deepEqual(await targetRows(target), rowsBefore);
});

test('a file with a live hold is refused, and the target is not touched', { skip: pgSkip }, async () => {
  const dir = dataDir();
  const t = await startTestGateway({ dataDir: dir, config: config() });
  const org = await t.newOrg({ balance: 5_000_000 });
  // A request in flight when the process went away: its hold is placed and never settled.
  const admitted = await t.gw.services.ledger.admit({ orgId: org.orgId, holdMicroUsd: 1_000, nowMs: Date.now(), route: 'vendor_a' });
  assert.equal(admitted.ok, true);
  await t.close();
  const target = await database('migrate_hold');
  await assert.rejects(migrateSqliteToPostgres(options(dir, target)),
    (e) => e instanceof MigrationRefused && /1 hold\(s\) of 1 organization\(s\) are live/.test(e.message));
  assert.deepEqual(await targetRows(target), {});
  // The entry says so with exit code 2.
  const run = await runEntry({ GATEWAY_DATA_DIR: dir, GATEWAY_DATABASE_URL: target.url, GATEWAY_SECRET_KEY: PG_SECRET });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /are live/);
});

test('every table is accounted for: copied, or named with the reason it is not', { skip: pgSkip }, async () => {
  const dir = dataDir();
  const t = await startTestGateway({ dataDir: dir, config: config() });
  await t.close();
  const target = await database('migrate_tables');
  await migrateSqliteToPostgres(options(dir, target));
  const copied = new Set<string>(COPIED_TABLES);
  for (const table of Object.keys(await targetRows(target))) {
    assert.ok(copied.has(table) || table in POSTGRES_ONLY, `PostgreSQL table ${table} is neither copied nor named in POSTGRES_ONLY`);
  }
  const sqlite = new Database(join(dir, 'gateway.db'), { readonly: true });
  const tables = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  sqlite.close();
  for (const table of tables) assert.ok(copied.has(table) || table in SQLITE_ONLY, `SQLite table ${table} is neither copied nor named in SQLITE_ONLY`);
});

test('a value that does not convert exactly fails the whole copy: nothing is committed', { skip: pgSkip }, async () => {
  const dir = dataDir();
  const t = await startTestGateway({ dataDir: dir, config: config() });
  const org = await t.newOrg({ balance: 1_000_000 });
  await t.close();
  // A key's creation time that is not an integer (the table is not STRICT): copied after the
  // organizations, so the copy fails half way.
  const sqlite = new Database(join(dir, 'gateway.db'));
  sqlite.prepare('UPDATE api_keys SET created_at = 1.5 WHERE id = ?').run(org.keyId);
  sqlite.close();
  const target = await database('migrate_rollback');
  await assert.rejects(migrateSqliteToPostgres(options(dir, target)), (e: any) => !(e instanceof MigrationRefused) && /api_keys\.created_at: number value 1\.5 does not convert to bigint/.test(e.message));
  const rows = await targetRows(target);
  assert.ok('orgs' in rows, 'the schema was migrated');
  assert.deepEqual(Object.entries(rows).filter(([table, n]) => n > 0 && table !== 'gateway_schema_migrations'), [], 'no row was committed');
});
