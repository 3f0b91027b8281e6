// Many gateways, one ledger (issue 8's proof): three real gateway processes on one real PostgreSQL
// database, reaching it through a TCP proxy the test can cut, and one simulator that counts the
// managed requests open upstream at every instant. Leases are real time here (separate processes
// cannot share an injected clock), so the lease is 5 s, renewed every 0.5 s: a process starved of
// CPU for a few seconds (a loaded CI machine) still renews in time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { Catalog, costOf, DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';
import { spawnGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';
import { sim, waitFor } from '../helpers/wait.ts';

const ADMIN = 'shared-ledger-admin-token';
const LEASE_MS = 5_000;
const MODEL = 'gpt-5.4-mini';

const available = await postgresReachable();
let db: TestDatabase;
let proxy: TcpProxy;
let simulator: Simulator;
let pool: pg.Pool;
const gws: GatewayProcess[] = [];
let env: Record<string, string>;

before(async () => {
  if (!available) return;
  db = await createTestDatabase('e2e');
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(db.url).port || 5432));
  simulator = await startSimulator({ standard: { startMs: 20 }, tokensPerS: 100, outputTokens: 4 });
  const url = new URL(db.url);
  url.host = `127.0.0.1:${proxy.port}`;
  env = {
    GATEWAY_DATABASE_URL: url.toString(), GATEWAY_ADMIN_TOKEN: ADMIN, GATEWAY_SECRET_KEY: 'shared-ledger-secret', SIM_URL: simulator.url,
    CHILD_CONFIG: JSON.stringify({ ledger: { ramp: [{ week: 0, concurrency: 2, daily_spend_micro_usd: 1_000_000 }], hold_lease_ms: LEASE_MS, hold_renew_ms: 500, pools: [] } }),
  };
  // Three processes starting at once run the migrations once (advisory lock).
  gws.push(...await Promise.all([0, 1, 2].map(() => spawnGateway(env))));
  pool = testPool(db.url);
});

after(async () => {
  if (!available) return;
  await Promise.all(gws.map((g) => g.stop()));
  await pool?.end();
  await simulator?.close();
  await proxy?.close();
  await db?.drop();
});

const skip = available ? false : 'PostgreSQL not reachable';

async function admin(g: GatewayProcess, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(g.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function newOrg(g: GatewayProcess, o: { cash?: number; concurrency?: number; daily?: number; ownKey?: boolean } = {}): Promise<{ orgId: string; key: string; keyId: string }> {
  const { id: orgId } = await admin(g, 'POST', '/admin/v1/orgs', { name: 'shared' });
  if (o.cash) await admin(g, 'POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: o.cash });
  if (o.concurrency !== undefined || o.daily !== undefined) {
    await admin(g, 'PUT', `/admin/v1/orgs/${orgId}/overrides`, { concurrency: o.concurrency ?? null, daily_spend_micro_usd: o.daily ?? null });
  }
  if (o.ownKey) await admin(g, 'PUT', `/admin/v1/orgs/${orgId}/provider-keys/vendor_a`, { key: 'own-vendor-a-key' });
  const k = await admin(g, 'POST', `/admin/v1/orgs/${orgId}/keys`, {});
  return { orgId, key: k.key, keyId: k.id };
}

const body = (input: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: MODEL, start_within: 'now', max_output_tokens: 64, input, ...extra });

const ask = (g: GatewayProcess, key: string, b: string, signal?: AbortSignal): Promise<Response> =>
  fetch(`${g.url}/v1/responses`, { method: 'POST', body: b, signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });

/** The org's money straight from the database: the balance, and every ledger entry. */
async function books(orgId: string) {
  const o = (await pool.query('SELECT cash_micro_usd AS cash FROM ledger_orgs WHERE org_id = $1', [orgId])).rows[0];
  const entries = (await pool.query('SELECT kind, hold_id, amount_micro_usd AS amount, detail FROM ledger_entries WHERE org_id = $1 ORDER BY id', [orgId])).rows as Array<{ kind: string; hold_id: string | null; amount: number | null; detail: string | null }>;
  const holds = (await pool.query('SELECT count(*)::INT AS n FROM ledger_holds WHERE org_id = $1 AND expired_at_ms IS NULL', [orgId])).rows[0].n as number;
  const charged = entries.filter((e) => e.kind === 'settle' || e.kind === 'settle_after_expiry').reduce((s, e) => s + e.amount!, 0);
  // What lapsed holds were charged (the output delivered by their last renewal).
  const lapsed = entries.filter((e) => e.kind === 'lease_expired').reduce((s, e) => s + (JSON.parse(e.detail ?? '{}').charged_micro_usd ?? 0), 0);
  return { cash: o.cash as number, entries, liveHolds: holds, charged, lapsed };
}

test('1,000 concurrent managed requests over three processes: no overspend, concurrency never exceeded upstream, books exact', { skip }, async (t) => {
  const CONCURRENCY = 12;
  const b = body(`many ${sim({ output_tokens: 8 })}`);
  const price = new Catalog(DEFAULT_MODELS).get(MODEL)!.prices.standard;
  const hold = costOf(price, { inputTokens: Math.ceil(b.length / 4), cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 64, reasoningTokens: 0 });
  const DAILY = 30 * hold;                // the daily ceiling binds long before the balance
  const CASH = 1_000 * hold;
  const org = await newOrg(gws[0]!, { cash: CASH, concurrency: CONCURRENCY, daily: DAILY });
  simulator.stats.peakOpen = simulator.stats.open;

  const statuses = await Promise.all(Array.from({ length: 1_000 }, async (_, i) => {
    const res = await ask(gws[i % 3]!, org.key, b);
    const json = await res.json() as any;
    return { status: res.status, code: json?.error?.code as string | undefined, cost: Number(res.headers.get('x-service-cost') ?? 0) };
  }));

  const by = (s: number) => statuses.filter((r) => r.status === s);
  const tally: Record<string, number> = {};
  for (const r of statuses) tally[`${r.status} ${r.code ?? ''}`] = (tally[`${r.status} ${r.code ?? ''}`] ?? 0) + 1;
  t.diagnostic(`answers: ${JSON.stringify(tally)}; peak upstream ${simulator.stats.peakOpen}`);
  assert.equal(by(200).length + by(429).length, 1_000, `every answer is 200 or 429: ${JSON.stringify(tally)}`);
  assert.ok(by(429).every((r) => r.code === 'rate_limit_exceeded' || r.code === 'spend_velocity_exceeded'));
  assert.ok(simulator.stats.peakOpen <= CONCURRENCY, `upstream saw ${simulator.stats.peakOpen} at once, limit ${CONCURRENCY}`);

  assert.ok(by(200).length >= CONCURRENCY, `served ${by(200).length}`);

  // Then waves until the daily ceiling pauses the org: the ceiling is shared by the three.
  let paused = by(429).some((r) => r.code === 'spend_velocity_exceeded');
  for (let wave = 0; wave < 60 && !paused; wave++) {
    const answers = await Promise.all(Array.from({ length: 36 }, async (_, i) => {
      const res = await ask(gws[i % 3]!, org.key, b);
      const json = await res.json() as any;
      return { status: res.status, code: json?.error?.code as string | undefined, cost: Number(res.headers.get('x-service-cost') ?? 0) };
    }));
    statuses.push(...answers);
    paused = answers.some((r) => r.code === 'spend_velocity_exceeded');
  }
  assert.ok(paused, 'the daily ceiling was reached');
  assert.ok(simulator.stats.peakOpen <= CONCURRENCY, `upstream saw ${simulator.stats.peakOpen} at once, limit ${CONCURRENCY}`);

  await waitFor(async () => (await books(org.orgId)).liveHolds === 0, 'reserved = 0 afterwards (settlement follows the response)', 3_000);
  const bk = await books(org.orgId);
  assert.equal(bk.charged, by(200).reduce((s, r) => s + r.cost, 0), 'what the ledger charged is what the responses reported');
  assert.equal(bk.cash, CASH - bk.charged, 'the balance is the top-up minus the entries, exactly');
  // Admission refuses once settled + held reaches the ceiling, so today's spend passes it by at
  // most the one hold admitted just under it (costs never exceed holds).
  assert.ok(bk.charged <= DAILY + hold, `charged ${bk.charged} > ceiling ${DAILY} + one hold ${hold}`);
  const limits = await (await fetch(`${gws[2]!.url}/v1/limits`, { headers: { authorization: `Bearer ${org.key}` } })).json() as any;
  assert.equal(limits.managed.balance.reserved_micro_usd, 0);
  assert.equal(limits.managed.balance.cash_micro_usd, bk.cash);
  assert.equal(limits.managed.daily_spend.used_micro_usd, bk.charged);
});

test('a key revoked through process A is refused by process C within 1 s; a provider key set through A is used by C within 1 s', { skip }, async () => {
  const org = await newOrg(gws[0]!, { cash: 5_000_000, concurrency: 8 });
  const b = body(`hi ${sim({ output_tokens: 2 })}`);
  const first = await ask(gws[2]!, org.key, b);                  // C caches the key (and "no own key")
  assert.equal(first.status, 200);
  assert.match(first.headers.get('x-service-spend-remaining')!, /^-?\d+$/, 'managed before the own key is set');

  await admin(gws[0]!, 'PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/vendor_a`, { key: 'own-vendor-a-key' });
  let t0 = Date.now();
  await waitFor(async () => (await ask(gws[2]!, org.key, b)).headers.get('x-service-spend-remaining') === 'unlimited', 'C to use the own key', 1_000);
  const keyMs = Date.now() - t0;

  await admin(gws[0]!, 'DELETE', `/admin/v1/keys/${org.keyId}`);
  t0 = Date.now();
  await waitFor(async () => (await ask(gws[2]!, org.key, b)).status === 401, 'C to refuse the revoked key', 1_000);
  const revokeMs = Date.now() - t0;
  assert.ok(keyMs < 1_000 && revokeMs < 1_000, `provider key ${keyMs} ms, revocation ${revokeMs} ms`);
});

test('SIGKILL one of three under 30 managed streams: the others serve, its holds lapse after the lease, nothing charged twice, a restart serves', { skip }, async () => {
  const CASH = 50_000_000;
  const org = await newOrg(gws[0]!, { cash: CASH, concurrency: 100 });
  const slow = body(`stream ${sim({ output_tokens: 400, tokens_per_s: 20 })}`, { stream: true });
  const victim = gws[2]!;
  const streams = await Promise.all(Array.from({ length: 30 }, () => ask(victim, org.key, slow)));
  assert.ok(streams.every((r) => r.status === 200));
  await Promise.all(streams.map(async (r) => { await r.body!.getReader().read(); }));  // every stream has begun
  assert.equal((await books(org.orgId)).liveHolds, 30);

  await victim.kill();
  for (const g of gws.slice(0, 2)) {
    const r = await ask(g, org.key, body(`after ${sim({ output_tokens: 2 })}`));
    assert.equal(r.status, 200, 'the other processes keep serving');
    await r.arrayBuffer();
  }
  await waitFor(async () => (await books(org.orgId)).liveHolds === 0, 'the dead process\'s holds to lapse', LEASE_MS + 4_000);

  const bk = await books(org.orgId);
  const expired = bk.entries.filter((e) => e.kind === 'lease_expired');
  assert.equal(expired.length, 30);
  const chargesPerHold = new Map<string, number>();
  for (const e of bk.entries) if (e.kind === 'settle' || e.kind === 'settle_after_expiry' || e.kind === 'lease_expired') chargesPerHold.set(e.hold_id!, (chargesPerHold.get(e.hold_id!) ?? 0) + 1);
  assert.ok([...chargesPerHold.values()].every((n) => n === 1), 'each hold ends exactly once');
  assert.equal(bk.cash, CASH - bk.charged - bk.lapsed, 'settlements plus what the lapses charged');

  gws[2] = await spawnGateway(env);
  const again = await ask(gws[2]!, org.key, body(`restarted ${sim({ output_tokens: 2 })}`));
  assert.equal(again.status, 200, 'a restarted process serves again');
  await again.arrayBuffer();
  await waitFor(async () => (await books(org.orgId)).liveHolds === 0, 'its hold settled', 3_000);
});

test('PostgreSQL unreachable for a few seconds: own keys keep working, managed admission 503 limits_unavailable, /readyz says so; all recovers by itself', { skip }, async () => {
  const own = await newOrg(gws[0]!, { ownKey: true });
  const managed = await newOrg(gws[0]!, { cash: 5_000_000, concurrency: 8 });
  const b = body(`hi ${sim({ output_tokens: 2 })}`);
  let servedManaged = 0;
  for (const g of gws) {                                         // every process has seen both keys
    for (const k of [own.key, managed.key]) {
      const r = await ask(g, k, b);
      assert.equal(r.status, 200);
      await r.arrayBuffer();
      if (k === managed.key) servedManaged++;
    }
  }

  proxy.cut();
  try {
    for (const g of gws) {
      const o = await ask(g, own.key, b);
      assert.equal(o.status, 200, 'own keys keep working');
      assert.equal(o.headers.get('x-service-spend-remaining'), 'unlimited');
      await o.arrayBuffer();
      const m = await ask(g, managed.key, b);
      assert.equal(m.status, 503);
      assert.equal(((await m.json()) as any).error.code, 'limits_unavailable');
      assert.equal(m.headers.get('x-service-spend-remaining'), null);
      const ready = await fetch(`${g.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(((await ready.json()) as any).database, 'unreachable');
      assert.equal((await fetch(`${g.url}/healthz`)).status, 200, 'the process lives');
    }
    await new Promise((r) => setTimeout(r, 2_000));             // a few seconds down in all
  } finally {
    proxy.restore();
  }

  for (const g of gws) {
    await waitFor(async () => (await fetch(`${g.url}/readyz`)).status === 200, 'ready again', 5_000);
    const m = await ask(g, managed.key, b);
    assert.equal(m.status, 200, 'managed admission recovers by itself');
    await m.arrayBuffer();
    servedManaged++;
  }
  // A settlement cut off by the outage is retried, not lost: every served request is charged once.
  // (A hold whose lease ran out while the database was away is released by a sweep first; its
  // queued settlement then lands as settle_after_expiry and still charges.)
  const settled = (bk: Awaited<ReturnType<typeof books>>) => bk.entries.filter((e) => e.kind === 'settle' || e.kind === 'settle_after_expiry').length;
  await waitFor(async () => settled(await books(managed.orgId)) === servedManaged, 'every served request settled', 5_000);
  const bk = await books(managed.orgId);
  assert.equal(bk.liveHolds, 0);
  assert.equal(bk.cash, 5_000_000 - bk.charged - bk.lapsed);
});

test('kill -9 under 30 managed streams, restart as the same instance: admitted again at once, the 30 holds charged what their last renewal recorded, never twice', { skip }, async () => {
  const CASH = 50_000_000;
  const org = await newOrg(gws[0]!, { cash: CASH, concurrency: 30 });
  // A long lease (60 s) renewed every 300 ms: only the restart can free the slots in time.
  const victimEnv = { ...env, GATEWAY_INSTANCE_ID: 'victim-host:9000', CHILD_CONFIG: JSON.stringify({ ledger: { ramp: [{ week: 0, concurrency: 2, daily_spend_micro_usd: 1_000_000 }], hold_lease_ms: 60_000, hold_renew_ms: 300, pools: [] } }) };
  let victim = await spawnGateway(victimEnv);
  try {
    const slow = body(`crash ${sim({ output_tokens: 400, tokens_per_s: 20 })}`, { stream: true });
    const streams = await Promise.all(Array.from({ length: 30 }, () => ask(victim, org.key, slow)));
    assert.ok(streams.every((r) => r.status === 200));
    const readers = streams.map((r) => r.body!.getReader());
    const reading = readers.map(async (rd) => { try { for (;;) if ((await rd.read()).done) return; } catch { /* cut by the kill */ } });
    const delivered = async () => (await pool.query<{ hold_id: string; delivered: number }>(
      'SELECT hold_id, delivered_micro_usd AS delivered FROM ledger_holds WHERE org_id = $1 AND expired_at_ms IS NULL', [org.orgId])).rows;
    await waitFor(async () => { const d = await delivered(); return d.length === 30 && d.every((h) => h.delivered > 0); }, 'renewals recording delivered output', 8_000);

    await victim.kill();
    await Promise.all(reading);
    const before = new Map((await delivered()).map((h) => [h.hold_id, h.delivered]));   // static now: their process is gone
    assert.equal(before.size, 30);
    const blocked = await ask(gws[0]!, org.key, body(`blocked ${sim({ output_tokens: 2 })}`));
    assert.equal(blocked.status, 429, 'the dead process\'s holds fill the concurrency (60 s lease)');
    await blocked.arrayBuffer();

    victim = await spawnGateway(victimEnv);
    // From the restarted process listening (its start under tsx is not the gateway's; npm start's is
    // lean-process.test.ts's) to a new managed request admitted: within 2 s.
    const t0 = Date.now();
    const again = await ask(gws[0]!, org.key, body(`again ${sim({ output_tokens: 2 })}`));
    assert.equal(again.status, 200, 'admitted again once the instance restarted');
    await again.arrayBuffer();
    assert.ok(Date.now() - t0 < 2_000, `admission after the restart took ${Date.now() - t0} ms`);

    await waitFor(async () => (await books(org.orgId)).liveHolds === 0, 'the last request settled', 3_000);
    const bk = await books(org.orgId);
    const expired = (await pool.query<{ hold_id: string; detail: string }>("SELECT hold_id, detail FROM ledger_entries WHERE org_id = $1 AND kind = 'lease_expired'", [org.orgId])).rows;
    assert.equal(expired.length, 30);
    for (const e of expired) assert.equal(JSON.parse(e.detail).charged_micro_usd, before.get(e.hold_id), 'charged what the last renewal recorded');
    const lapsed = [...before.values()].reduce((a, b) => a + b, 0);
    assert.ok(lapsed > 0);
    assert.equal(bk.lapsed, lapsed);
    assert.equal(bk.entries.filter((e) => e.hold_id && before.has(e.hold_id) && e.kind !== 'lease_expired').length, 0, 'no settlement besides the lapse');
    assert.equal(bk.cash, CASH - bk.charged - lapsed, 'the balance is exact: settlements plus lapse charges');
  } finally {
    await victim.stop();
  }
});
