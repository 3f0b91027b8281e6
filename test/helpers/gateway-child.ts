// A gateway in its own process, as an operator runs several: the shared store from
// GATEWAY_DATABASE_URL (or SQLite in GATEWAY_DATA_DIR), every route on the simulator at SIM_URL, served as managed. Prints
// `listening <url>` on stdout once it accepts connections. Started by gateway-process.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { createGateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { ROUTES } from '../../lib/config.ts';

const sim = process.env.SIM_URL!;
const config = loadConfig(undefined, {
  routes: Object.fromEntries(ROUTES.filter((r) => !r.startsWith('cloud')).map((r) => [r, { base_url: sim }])),
  managed: { vendor_a: { key: 'sim-key-vendor-a' }, vendor_b: { key: 'sim-key-vendor-b' }, vendor_c: { key: 'sim-key-vendor-c' } },
  useSimulator: false,
  ...(process.env.CHILD_CONFIG ? JSON.parse(process.env.CHILD_CONFIG) : {}),
});
const gw = await createGateway({
  config,
  dataDir: process.env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'gw-child-')),
  databaseUrl: process.env.GATEWAY_DATABASE_URL,
  instanceId: process.env.GATEWAY_INSTANCE_ID,
  adminToken: process.env.GATEWAY_ADMIN_TOKEN,
  secret: process.env.GATEWAY_SECRET_KEY,
  port: 0,
  logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
  drainMs: 500,
});
process.stdout.write(`listening ${gw.url}\n`);
process.once('SIGTERM', () => { gw.close().then(() => process.exit(0), () => process.exit(1)); });
