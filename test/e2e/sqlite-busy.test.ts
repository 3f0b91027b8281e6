// Another connection holding the SQLite file's write lock (an operator's `sqlite3 gateway.db` with
// BEGIN IMMEDIATE left open, a VACUUM) costs the gateway a short wait per write try, never the
// process (lib/store/db.ts): /healthz and own-key requests answer while it is held, managed
// admission answers 503 limits_unavailable within the lock patience, an administrative write 503
// store_unavailable; the settlement and the usage records it refused are kept and written once it
// is released, so the books are exact. And two gateway processes on one data folder, the
// supported setup, never see each other's sub-millisecond transactions as errors.
// Real time here: the lock is waited for on the wall clock, whatever clock the gateway is given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { loadConfig } from '../../lib/config.ts';
import { startSimulator } from '../../lib/simulator/server.ts';
import { startTestGateway, waitFor, sim } from '../helpers/gateway.ts';
import { spawnGateway } from '../helpers/gateway-process.ts';

/** Generous: before the fix each probe waited for the lock (5 s per write, one after another). */
const PROMPT_MS = 1_000;

/** Another connection's write lock on the gateway's file, held until release(). */
function holdWriteLock(dataDir: string): { release(): void } {
  const other = new Database(join(dataDir, 'gateway.db'));
  other.exec('BEGIN IMMEDIATE');
  return { release() { other.exec('COMMIT'); other.close(); } };
}

async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

const ask = (url: string, key: string, directive: Record<string, unknown> = { output_tokens: 5 }) =>
  new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
    .responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim(directive)}`, start_within: 'now' } as any);

test('an outside write lock: /healthz and own keys answer, managed admission is refused at once, nothing is lost', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-busy-'));
  const t = await startTestGateway({ dataDir, config: { usage: { ...loadConfig(undefined).usage, flush_interval_ms: 50 } } });
  try {
    const BALANCE = 50_000_000;
    const managed = await t.newOrg({ balance: BALANCE });
    const own = await t.newOrg({ ownKeys: ['vendor_a'] });
    // Admitted before the lock, ending under it: its settlement meets the lock.
    const early = ask(t.url, managed.key, { output_tokens: 5, standard_start_ms: 300 });
    await waitFor(() => t.gw.services.inflight.size === 1, 'the early request admitted');

    const lock = holdWriteLock(dataDir);
    // Probes back to back for as long as the lock is held, so that any wait of the event loop for
    // the lock (this test shares the gateway's loop) lands inside one of them.
    let locked = true;
    const slowest = { healthz: 0, byok: 0 };
    let byokAnswered = 0;
    const probing = (async () => {
      while (locked) {
        const health = await timed(() => fetch(`${t.url}/healthz`));
        assert.equal(health.value.status, 200);
        const byok = await timed(() => ask(t.url, own.key));
        assert.equal(byok.value.status, 'completed');
        slowest.healthz = Math.max(slowest.healthz, health.ms);
        slowest.byok = Math.max(slowest.byok, byok.ms);
        byokAnswered++;
      }
    })();
    try {
      const refused = await timed(() => ask(t.url, managed.key).then(() => null, (err) => err));
      assert.equal(refused.value?.status, 503);
      assert.equal(refused.value?.error?.code, 'limits_unavailable');
      assert.ok(refused.ms < 2 * PROMPT_MS, `the managed refusal took ${Math.round(refused.ms)} ms`);

      const topup = await timed(() => t.admin('POST', `/admin/v1/orgs/${managed.orgId}/topups`, { cash_micro_usd: 1 }));
      assert.equal(topup.value.status, 503);
      assert.equal(topup.value.json.error.code, 'store_unavailable');
      assert.ok(topup.ms < 2 * PROMPT_MS, `the refused top-up took ${Math.round(topup.ms)} ms`);
      const created = await timed(() => t.admin('POST', '/admin/v1/orgs', { name: 'under the lock' }));
      assert.equal(created.value.status, 503);
      assert.equal(created.value.json.error.code, 'store_unavailable');
      assert.ok(created.ms < 2 * PROMPT_MS, `the refused organization took ${Math.round(created.ms)} ms`);

      assert.equal((await early).status, 'completed', 'the early request is answered; its settlement waits');
      await waitFor(() => t.logLines.some((l) => l.includes('settlement deferred')), 'the settlement deferred');
      await waitFor(() => t.logLines.some((l) => l.includes('usage records not written')), 'a usage batch kept');
    } finally {
      locked = false;
      await probing.finally(() => lock.release());
    }
    assert.ok(slowest.healthz < PROMPT_MS, `/healthz took up to ${Math.round(slowest.healthz)} ms under the lock`);
    assert.ok(slowest.byok < PROMPT_MS, `an own-key request took up to ${Math.round(slowest.byok)} ms under the lock`);

    // Released: the deferred settlement is written (once), the kept usage batch too.
    await waitFor(async () => (await t.admin('GET', `/admin/v1/orgs/${managed.orgId}/ledger`)).json.snapshot.inFlight === 0,
      'the deferred settlement written');
    await t.gw.services.usage.flush();
    const { snapshot, entries } = (await t.admin('GET', `/admin/v1/orgs/${managed.orgId}/ledger`)).json;
    const settled = entries.filter((e: any) => e.kind === 'settle');
    assert.equal(settled.length, 1, 'one settlement: the early request, charged once');
    const cost = settled[0].amount_micro_usd as number;
    assert.ok(cost > 0);
    assert.deepEqual([snapshot.cashMicroUsd, snapshot.reservedMicroUsd, snapshot.inFlight, snapshot.dailyUsedMicroUsd],
      [BALANCE - cost, 0, 0, cost], 'balance = top-ups - settled costs, nothing held');
    assert.equal(entries.filter((e: any) => e.kind === 'topup').length, 1, 'the refused top-up left nothing');

    const totals = async (orgId: string) =>
      (await t.gw.services.usage.store.aggregate({ orgId, fromMs: 0, toMs: Date.now() + 60_000 }, [])).totals as any;
    const m = await totals(managed.orgId);
    assert.deepEqual([m.requests, m.errors, m.managed_cost_micro_usd], [2, 1, cost], 'the early request and the refusal, recorded');
    assert.equal((await totals(own.orgId)).requests, byokAnswered, 'every own-key request, recorded');
    assert.ok(!t.logLines.some((l) => l.includes('usage records could not be written')), 'no usage batch dropped');
  } finally {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('two gateway processes on one data folder under managed load: no spurious errors, books exact', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-busy-two-'));
  const simulator = await startSimulator({ standard: { startMs: 2 }, outputTokens: 4 });
  const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: 'busy-admin', GATEWAY_SECRET_KEY: 'busy-secret', SIM_URL: simulator.url };
  // One after the other: the first creates the file; the second starts on it.
  const gws = [await spawnGateway(env), await spawnGateway(env)];
  try {
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(gws[0]!.url + path, {
        method, headers: { authorization: 'Bearer busy-admin', 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      assert.ok(res.ok, `${method} ${path}: ${res.status}`);
      return res.json() as Promise<any>;
    };
    const CASH = 10_000_000_000;
    const { id: orgId } = await admin('POST', '/admin/v1/orgs', { name: 'two' });
    await admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: CASH });
    await admin('PUT', `/admin/v1/orgs/${orgId}/overrides`, { concurrency: 10_000, daily_spend_micro_usd: CASH });
    const { key } = await admin('POST', `/admin/v1/orgs/${orgId}/keys`, {});

    const tally: Record<string, number> = {};
    let sent = 0;
    const until = Date.now() + 4_000;
    const worker = async (url: string) => {
      while (Date.now() < until) {
        sent++;
        const answer = await ask(url, key).then(() => '200', (err) => `${err.status} ${err.error?.code}`);
        tally[answer] = (tally[answer] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, i) => worker(gws[i % 2]!.url)));
    t.diagnostic(`answers: ${JSON.stringify(tally)}`);
    assert.deepEqual(Object.keys(tally), ['200'], `every answer 200: ${JSON.stringify(tally)}`);
    await Promise.all(gws.map((g) => g.stop()));   // drained: settled, usage written

    const db = new Database(join(dataDir, 'gateway.db'), { readonly: true });
    try {
      const cash = db.prepare('SELECT cash_micro_usd FROM ledger_orgs WHERE org_id = ?').pluck().get(orgId);
      const charged = db.prepare("SELECT SUM(amount_micro_usd) FROM ledger_entries WHERE org_id = ? AND kind = 'settle'").pluck().get(orgId);
      const holds = db.prepare('SELECT COUNT(*) FROM ledger_holds WHERE org_id = ?').pluck().get(orgId);
      const usage = db.prepare('SELECT COUNT(*) AS n, SUM(cost_micro_usd) AS cost FROM usage_records WHERE org_id = ?').get(orgId) as any;
      assert.equal(holds, 0, 'nothing held');
      assert.equal(cash, CASH - (charged as number), 'balance = top-up - settled costs');
      assert.deepEqual([usage.n, usage.cost], [sent, charged], 'one usage record per request, costs agreeing with the ledger');
    } finally {
      db.close();
    }
  } finally {
    await Promise.all(gws.map((g) => g.stop()));
    await simulator.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
