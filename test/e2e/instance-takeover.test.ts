// Two processes under one instance id, as `npm start` runs them (lib/main.ts: the default instance
// id is host:PORT): a second start on the port of a live gateway fails to listen and must touch
// nothing of it; a restart that binds while the old process still drains its streams must leave
// that process's holds to it. Only a predecessor that is provably gone (its pid dead on this host,
// crash-recovery.test.ts) has its holds released at start (lib/ledger/liveness.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { sim, waitFor } from '../helpers/wait.ts';

const MAIN = fileURLToPath(new URL('../../lib/main.ts', import.meta.url));
const ADMIN = 'takeover-admin';

interface MainProcess {
  /** Resolves with the URL once it listens, or rejects with its stderr if it exits first. */
  listening: Promise<string>;
  exited: Promise<{ code: number | null; stderr: string }>;
  stop(): void;
}

/** `npm start`'s entry point (under tsx), configured by environment only. */
function startMain(env: Record<string, string>): MainProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr += d; });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /"url":"(http:[^"]+)".*"msg":"gateway listening"/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void exited.then(({ code }) => reject(new Error(`exited (${code}) before listening: ${stderr.trim().split('\n').pop()}`)));
  });
  listening.catch(() => {});
  return { listening, exited, stop: () => { if (child.exitCode === null) child.kill('SIGTERM'); } };
}

const freePort = (): Promise<number> => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address() as AddressInfo; s.close(() => resolve(port)); });
});

test('a second start on a live gateway\'s port fails to listen and releases none of its holds; a restart binding while it drains leaves them to it: its stream keeps the concurrency and settles its real cost', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-takeover-'));
  const configFile = join(dataDir, 'config.json');
  // Concurrency 1; a 60 s lease renewed every 200 ms; 15 s to drain.
  writeFileSync(configFile, JSON.stringify({
    ledger: { ramp: [{ week: 0, concurrency: 1, daily_spend_micro_usd: 1_000_000 }], hold_lease_ms: 60_000, hold_renew_ms: 200, pools: [] },
    timeouts: { shutdown_drain_ms: 15_000 },
  }));
  const env = {
    PORT: String(await freePort()), GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configFile, GATEWAY_ADMIN_TOKEN: ADMIN,
    GATEWAY_SECRET_KEY: 'takeover-secret', GATEWAY_DATABASE_URL: '', GATEWAY_INSTANCE_ID: '',
  };
  const a = startMain(env);
  const running: MainProcess[] = [a];
  let db: Database.Database | undefined;
  try {
    const url = await a.listening;
    db = new Database(join(dataDir, 'gateway.db'), { readonly: true, timeout: 5_000 });
    const admin = async (method: string, path: string, body?: unknown): Promise<any> =>
      (await fetch(url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json();
    const { id: orgId } = await admin('POST', '/admin/v1/orgs', { name: 'takeover' });
    await admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: 10_000_000 });
    const { key } = await admin('POST', `/admin/v1/orgs/${orgId}/keys`, {});
    const ask = (input: string, stream = false, signal?: AbortSignal) => fetch(`${url}/v1/responses`, {
      method: 'POST', signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', max_output_tokens: 500, input, stream }),
    });
    type HoldRow = { hold_id: string; delivered: number; expired_at_ms: number | null };
    const holds = () => db!.prepare('SELECT hold_id, delivered_micro_usd AS delivered, expired_at_ms FROM ledger_holds WHERE org_id = ?').all(orgId) as HoldRow[];

    // A streams (for a minute, unless its caller leaves); its hold is renewed with what it delivered.
    const caller = new AbortController();
    const s1 = await ask(`long ${sim({ output_tokens: 1_200, tokens_per_s: 20 })}`, true, caller.signal);
    assert.equal(s1.status, 200);
    const streamed = s1.text().catch(() => 'left');
    await waitFor(() => holds()[0]?.delivered! > 0, 'a renewal recording delivered output', 5_000);
    const [hold] = holds();

    // A second `npm start` on the same port: same instance id, fails to listen.
    const b = startMain(env);
    await assert.rejects(b.listening);
    const { code, stderr } = await b.exited;
    assert.equal(code, 1);
    assert.match(stderr, /EADDRINUSE/);
    assert.deepEqual(holds().map((h) => [h.hold_id, h.expired_at_ms]), [[hold!.hold_id, null]], 'A\'s hold is still live');
    const refused = await ask(`second ${sim({ output_tokens: 2 })}`);
    assert.equal(refused.status, 429, 'A\'s stream still holds the organization\'s one slot');
    await refused.arrayBuffer();

    // A restart: A is told to stop and drains its stream; C binds the freed port meanwhile.
    a.stop();
    const c = startMain(env);
    running.push(c);
    const urlC = await c.listening;
    assert.equal(holds()[0]?.expired_at_ms, null, 'C left the hold of the draining A alone');
    const viaC = await fetch(`${urlC}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', input: `via C ${sim({ output_tokens: 2 })}` }),
    });
    assert.equal(viaC.status, 429, 'the slot is still A\'s');
    await viaC.arrayBuffer();

    // The caller leaves: A ends the request and settles it itself, then exits.
    caller.abort();
    assert.equal(await streamed, 'left');
    assert.equal((await a.exited).code, 0);
    const entries = db.prepare('SELECT kind, amount_micro_usd AS amount, cash_micro_usd AS cash FROM ledger_entries WHERE hold_id = ?').all(hold!.hold_id) as Array<{ kind: string; amount: number; cash: number }>;
    assert.deepEqual(entries.map((e) => e.kind), ['settle'], 'settled by A, never released as a lapse');
    const { cost } = db.prepare('SELECT cost_micro_usd AS cost FROM usage_records WHERE org_id = ? AND cost_micro_usd > 0').get(orgId) as { cost: number };
    assert.equal(entries[0]!.amount, cost, 'charged the cost A settled, not a lapse');
    const { cash } = db.prepare('SELECT cash_micro_usd AS cash FROM ledger_orgs WHERE org_id = ?').get(orgId) as { cash: number };
    assert.equal(cash, 10_000_000 - cost);

    const served = await fetch(`${urlC}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', input: `after ${sim({ output_tokens: 2 })}` }),
    });
    assert.equal(served.status, 200, 'C serves once A\'s stream has settled');
    await served.arrayBuffer();
  } finally {
    db?.close();
    for (const p of running) p.stop();
    await Promise.all(running.map((p) => p.exited));
    rmSync(dataDir, { recursive: true, force: true });
  }
});
