// The gateway as a benchmark target, in its own process, run from a bundle as `npm start` runs it
// (bench/bundle.ts): vendor_a points at the benchmark's
// upstream (argv[2]: the minimal upstream or the simulator) and is also served as managed. Two
// organizations are made through the admin API, as an operator would: `byok` with its OWN vendor_a
// key (no admission, no hold, no ledger write per request) and `managed` with a prepaid balance and
// overrides high enough that no ceiling is reached (admission and settlement in the SQLite ledger
// on every request). Logs go to stdout at LOG_LEVEL (default info), which forkServer discards: the
// one summary line per request is part of the gateway's cost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_CAPACITY, DEFAULT_LEDGER, loadConfig } from '../lib/config.ts';
import { createGateway } from '../lib/app.ts';
import { DEFAULT_USAGE } from '../lib/usage/service.ts';
import { createLogger } from '../lib/log.ts';
import { serveAsChild, type Served } from './processes.ts';

async function startBenchGateway(upstream: string): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const adminToken = randomBytes(16).toString('hex');
  const config = loadConfig(undefined, {
    // 1,100 connections: the open-streams scenario holds 1,000 streams upstream at once.
    routes: { vendor_a: { base_url: upstream, connections: 1_100 } },
    managed: { vendor_a: { key: 'bench-managed-vendor-a-key' } },
    useSimulator: false,
    // Every one of the 100 connections may race flex (the default 16 slots would send most of
    // the flex scenario's requests to standard at once as `flex_slots_full`).
    flex_race_slots: 1_000,
    // The shared pool rates would cap the managed scenario far below what is measured.
    ledger: { ...DEFAULT_LEDGER, pools: DEFAULT_LEDGER.pools.map((p) => ({ ...p, per_minute: 1_000_000_000 })) },
    // One organization drives every connection: no per-organization share of the route's
    // connections, and no queue refusals, so the bench measures the path, not the fairness rule.
    capacity: { ...DEFAULT_CAPACITY, org_share: 1, queue: 10_000 },
    // BENCH_USAGE_HOLD=1: usage records wait in the queue (up to 50,000) instead of being written
    // every second, so a count of the request path (instructions.ts) holds no batch write, whose
    // share per request follows how many requests a second the counted process served.
    ...(process.env.BENCH_USAGE_HOLD === '1' ? { usage: { ...DEFAULT_USAGE, flush_interval_ms: 3_600_000, batch_size: 50_000, queue_capacity: 50_000 } } : {}),
  });
  const gw = await createGateway({
    config, dataDir, adminToken, secret: 'bench-secret', port: 0, logger: createLogger(), drainMs: 1_000,
  });
  const admin = async (method: string, path: string, body: unknown): Promise<any> => {
    const res = await fetch(gw.url + path, {
      method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const byok = await admin('POST', '/admin/v1/orgs', { name: 'bench-byok' });
  await admin('PUT', `/admin/v1/orgs/${byok.id}/provider-keys/vendor_a`, { key: 'bench-own-vendor-a-key' });
  // A default start_within, as a coding agent's key has (its requests carry no gateway field:
  // bench/agent-body.ts); the other scenarios send theirs.
  const byokKey = await admin('POST', `/admin/v1/orgs/${byok.id}/keys`, { default_start_within: 'now' });
  const managed = await admin('POST', '/admin/v1/orgs', { name: 'bench-managed' });
  await admin('POST', `/admin/v1/orgs/${managed.id}/topups`, { cash_micro_usd: 1_000_000_000_000 });
  await admin('PUT', `/admin/v1/orgs/${managed.id}/overrides`, { concurrency: 10_000, daily_spend_micro_usd: 1_000_000_000_000 });
  const managedKey = await admin('POST', `/admin/v1/orgs/${managed.id}/keys`, {});
  return {
    url: gw.url,
    info: { byokKey: byokKey.key as string, managedKey: managedKey.key as string },
    async close() {
      await gw.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: gateway-child.ts UPSTREAM_URL (started by forkServer)');
serveAsChild(() => startBenchGateway(upstream));
