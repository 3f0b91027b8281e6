// Crash recovery on the embedded store (issue 13; the PostgreSQL run is in shared-ledger.test.ts):
// a real gateway process on a SQLite data folder is killed with SIGKILL under managed streams and
// restarted as the same instance. Its holds are released at start — not after their lease — and
// charged what their last renewal recorded; new managed requests are admitted at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startSimulator } from '../../lib/simulator/server.ts';
import { spawnGateway } from '../helpers/gateway-process.ts';
import { sim, waitFor } from '../helpers/wait.ts';

const ADMIN = 'crash-recovery-admin';
/** Managed streams open when the process is killed: the organization's whole concurrency. */
const STREAMS = 30;

test('SQLite: kill -9 under 30 managed streams, restart as the same instance: admitted at once, holds charged as delivered by the last renewal, once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
  const simulator = await startSimulator({ tokensPerS: 100, outputTokens: 4 });
  const env = {
    GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: ADMIN, GATEWAY_SECRET_KEY: 'crash-secret', SIM_URL: simulator.url,
    GATEWAY_INSTANCE_ID: 'sidecar-1', GATEWAY_DATABASE_URL: '',
    CHILD_CONFIG: JSON.stringify({ ledger: { ramp: [{ week: 0, concurrency: 2, daily_spend_micro_usd: 1_000_000 }], hold_lease_ms: 60_000, hold_renew_ms: 200, pools: [] } }),
  };
  let gw = await spawnGateway(env);
  const db = new Database(join(dataDir, 'gateway.db'), { readonly: true, timeout: 5_000 });
  try {
    const admin = async (method: string, path: string, body?: unknown): Promise<any> =>
      (await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json();
    const { id: orgId } = await admin('POST', '/admin/v1/orgs', { name: 'crash' });
    await admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: 10_000_000 });
    await admin('PUT', `/admin/v1/orgs/${orgId}/overrides`, { concurrency: STREAMS });
    const { key } = await admin('POST', `/admin/v1/orgs/${orgId}/keys`, {});
    const ask = (input: string, stream = false) => fetch(`${gw.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', max_output_tokens: 500, input, stream }),
    });

    const streams = await Promise.all(Array.from({ length: STREAMS }, () => ask(`long ${sim({ output_tokens: 400, tokens_per_s: 20 })}`, true)));
    assert.ok(streams.every((r) => r.status === 200));
    const reading = streams.map(async (r) => { const rd = r.body!.getReader(); try { for (;;) if ((await rd.read()).done) return; } catch { /* killed */ } });
    const live = () => db.prepare('SELECT hold_id, delivered_micro_usd AS d FROM ledger_holds WHERE org_id = ? AND expired_at_ms IS NULL').all(orgId) as Array<{ hold_id: string; d: number }>;
    await waitFor(() => { const l = live(); return l.length === STREAMS && l.every((h) => h.d > 0); }, 'renewals recording delivered output', 8_000);

    await gw.kill();
    await Promise.all(reading);
    const before = new Map(live().map((h) => [h.hold_id, h.d]));
    assert.equal(before.size, STREAMS);

    gw = await spawnGateway(env);
    const again = await ask(`again ${sim({ output_tokens: 2 })}`);
    assert.equal(again.status, 200, 'admitted at once: the predecessor\'s holds were released at start (their lease has 60 s to run)');
    await again.arrayBuffer();

    const expired = db.prepare("SELECT hold_id, detail, cash_micro_usd AS cash FROM ledger_entries WHERE org_id = ? AND kind = 'lease_expired'").all(orgId) as Array<{ hold_id: string; detail: string; cash: number }>;
    assert.equal(expired.length, STREAMS);
    for (const e of expired) {
      assert.equal(JSON.parse(e.detail).charged_micro_usd, before.get(e.hold_id));
      assert.equal(e.cash, -before.get(e.hold_id)!);
    }
    assert.equal((db.prepare("SELECT count(*) AS n FROM ledger_entries WHERE org_id = ? AND kind LIKE 'settle%' AND hold_id IN (SELECT value FROM json_each(?))").get(orgId, JSON.stringify([...before.keys()])) as { n: number }).n, 0, 'never charged twice');
  } finally {
    db.close();
    await gw.stop();
    await simulator.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
