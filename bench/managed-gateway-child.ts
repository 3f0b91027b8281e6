// The gateway as the managed-ledger benchmark's target, in its own process: vendor_a on the
// benchmark's simulator (argv[2]); argv[3] = byok | sqlite | postgres; argv[4] = the PostgreSQL URL.
// byok: the org's own key (no ledger); sqlite / postgres: served as managed, so every request is
// admitted (a hold) and settled in that store. The org's ceilings are raised so nothing refuses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../lib/config.ts';
import { createGateway } from '../lib/app.ts';
import { createLogger } from '../lib/log.ts';
import { serveAsChild, type Served } from './processes.ts';

async function start(upstream: string, mode: string, databaseUrl: string | undefined): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-ledger-'));
  const adminToken = randomBytes(16).toString('hex');
  const config = loadConfig(undefined, {
    routes: { vendor_a: { base_url: upstream } },
    managed: mode === 'byok' ? {} : { vendor_a: { key: 'bench-managed-key' } },
    useSimulator: false,
  });
  const gw = await createGateway({
    config, dataDir, adminToken, secret: 'bench-secret', port: 0, logger: createLogger(), drainMs: 1_000,
    databaseUrl: mode === 'postgres' ? databaseUrl : undefined,
  });
  const admin = async (method: string, path: string, body: unknown): Promise<any> => {
    const res = await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const org = await admin('POST', '/admin/v1/orgs', { name: 'bench' });
  if (mode === 'byok') await admin('PUT', `/admin/v1/orgs/${org.id}/provider-keys/vendor_a`, { key: 'bench-own-key' });
  else {
    await admin('POST', `/admin/v1/orgs/${org.id}/topups`, { cash_micro_usd: 1_000_000_000_000 });
    await admin('PUT', `/admin/v1/orgs/${org.id}/overrides`, { concurrency: 100_000, daily_spend_micro_usd: 1_000_000_000_000 });
  }
  const key = await admin('POST', `/admin/v1/orgs/${org.id}/keys`, {});
  return {
    url: gw.url,
    info: { apiKey: key.key as string },
    async close() { await gw.close(); rmSync(dataDir, { recursive: true, force: true }); },
  };
}

const [upstream, mode, url] = process.argv.slice(2);
if (!upstream || !mode) throw new Error('usage: managed-gateway-child.ts UPSTREAM MODE [DATABASE_URL]');
serveAsChild(() => start(upstream, mode, url));
