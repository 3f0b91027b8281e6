// `make run`: the gateway on port 8080 with the built-in simulator and an embedded SQLite data
// folder. On first start it creates a demo organization with a starting balance; every start
// issues a fresh demo key (keys are stored only as hashes, so an old one cannot be shown again)
// and prints it with the dashboard's address and a ready curl line.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startFromEnv } from './main.ts';

const dataDir = process.env.GATEWAY_DATA_DIR ?? './data';
mkdirSync(dataDir, { recursive: true });
const tokenFile = join(dataDir, 'admin-token');
if (!process.env.GATEWAY_ADMIN_TOKEN) {
  if (!existsSync(tokenFile)) writeFileSync(tokenFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
  process.env.GATEWAY_ADMIN_TOKEN = readFileSync(tokenFile, 'utf8').trim();
}
process.env.GATEWAY_DATA_DIR = dataDir;

// Without a config file the demo's simulator behaves like a real provider: flex starts after a
// spread-out delay and sometimes refuses, standard answers in ~300 ms, tokens arrive at 80/s.
const realistic = {
  simulator: {
    flex: { startMs: { min: 200, max: 8_000 }, refuseRate: 0.05 },
    standard: { startMs: 300 },
    tokensPerS: 80,
    outputTokens: 60,
  },
};
const gw = await startFromEnv(process.env.GATEWAY_CONFIG ? {} : realistic);
const svc = gw.services;
const now = svc.clock.now();
const demoFile = join(dataDir, 'demo-org');
let orgId = existsSync(demoFile) ? readFileSync(demoFile, 'utf8').trim() : '';
if (!orgId || !await svc.orgs.orgExists(orgId)) {
  // The ledger's row first, as the admin API creates an organization (lib/http/admin.ts).
  orgId = svc.orgs.newOrgId();
  await svc.ledger.ensureOrg(orgId, now);
  await svc.orgs.createOrg('demo', now, orgId);
  await svc.ledger.topup(orgId, { cash_micro_usd: svc.config.demo_balance_micro_usd }, now);
  writeFileSync(demoFile, orgId);
}
// The demo key may also manage the organization (keys, provider keys) from the dashboard.
const { key } = await svc.orgs.createKey(orgId, { startWithin: null, provider: null }, now, ['inference', 'manage']);
const url = gw.url.replace('127.0.0.1', 'localhost');
console.log(`
Gateway ready at ${url} (simulator at ${gw.simulator?.url ?? 'not started'})
Demo organization ${orgId}
API key (shown once):   ${key}
Dashboard:              ${url}/dashboard   (sign in with the API key; the admin token opens the operator view)
Admin token:            stored in ${tokenFile}

curl -sN ${url}/v1/responses \\
  -H "Authorization: Bearer ${key}" -H "content-type: application/json" \\
  -d '{"model":"gpt-5.4-mini","input":"Hello!","start_within":"00h-00m-05s","stream":true,"include_cost":true}'
`);
