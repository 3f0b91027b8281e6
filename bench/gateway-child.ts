// The gateway as a benchmark target, in its own process: vendor_a points at the benchmark's
// simulator (argv[2]); nothing is served as managed. An organization with its OWN vendor_a key
// (byok: no admission, no hold, no ledger write per request) and an API key are created through
// the admin API, as an operator would. Logs go to stdout at LOG_LEVEL (default info), which
// forkServer discards: the one summary line per request is part of the gateway's cost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../lib/config.ts';
import { createGateway } from '../lib/app.ts';
import { createLogger } from '../lib/log.ts';
import { serveAsChild, type Served } from './processes.ts';

async function startBenchGateway(upstream: string): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const adminToken = randomBytes(16).toString('hex');
  const config = loadConfig(undefined, {
    routes: { vendor_a: { base_url: upstream } },
    managed: {},
    useSimulator: false,
    // Every one of the 100 connections may race flex (the default 16 slots would send most of
    // the flex scenario's requests to standard at once as `flex_slots_full`).
    flex_race_slots: 1_000,
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
  const org = await admin('POST', '/admin/v1/orgs', { name: 'bench' });
  await admin('PUT', `/admin/v1/orgs/${org.id}/provider-keys/vendor_a`, { key: 'bench-own-vendor-a-key' });
  const key = await admin('POST', `/admin/v1/orgs/${org.id}/keys`, {});
  return {
    url: gw.url,
    info: { apiKey: key.key as string },
    async close() {
      await gw.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: gateway-child.ts UPSTREAM_URL (started by forkServer)');
serveAsChild(() => startBenchGateway(upstream));
