// Starts a real gateway on port 0 (with the built-in simulator on its own port) in a fresh data
// folder, plus an admin client and an organization with a key: what every end-to-end test needs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { loadConfig, type GatewayConfig } from '../../lib/config.ts';
import { createGateway, type Gateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import type { RouteName } from '../../lib/ir.ts';

export const ADMIN_TOKEN = 'test-admin-token';

export interface TestGateway {
  gw: Gateway;
  url: string;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  newOrg(opts?: { ownKeys?: RouteName[]; balance?: number; defaultStartWithin?: string }): Promise<{ orgId: string; key: string; keyId: string }>;
  /** Present when started with simulatedTime: move the gateway's clock and timers. */
  clock?: SimulatedClock;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  config?: Partial<GatewayConfig>;
  /** Drive the gateway's clock and timers with a fresh SimulatedClock (or pass `clock`). */
  simulatedTime?: boolean;
  clock?: SimulatedClock;
  file?: string;
  /** A data folder to use and keep (restart tests); by default a fresh one, deleted on close. */
  dataDir?: string;
  drainMs?: number;
}

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'gw-test-'));
  const config = loadConfig(opts.file, opts.config);
  let clock = opts.clock;
  if (!clock && opts.simulatedTime) { clock = new SimulatedClock(); clock.set(Date.UTC(2026, 10, 21, 12, 0, 0)); }
  const gw = await createGateway({
    config, dataDir, adminToken: ADMIN_TOKEN, secret: 'test-secret', port: 0,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    ...(clock ? { clock: { now: () => clock!.now() }, timerClock: clock } : {}),
    drainMs: opts.drainMs ?? 2_000,
  });
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(gw.url + path, {
      method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
  return {
    gw, url: gw.url, admin, clock,
    async newOrg(o = {}) {
      const org = await admin('POST', '/admin/v1/orgs', { name: 'test' });
      const orgId = org.json.id as string;
      for (const r of o.ownKeys ?? []) {
        const cred = (gw.services.config.managed[r] as any);
        const body = r === 'cloud_a' || r === 'cloud_b' ? cred : { key: `own-${r}-key` };
        await admin('PUT', `/admin/v1/orgs/${orgId}/provider-keys/${r}`, body);
      }
      if (o.balance) await admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: o.balance });
      const k = await admin('POST', `/admin/v1/orgs/${orgId}/keys`, { default_start_within: o.defaultStartWithin ?? null });
      return { orgId, key: k.json.key, keyId: k.json.id };
    },
    async close() {
      await gw.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { waitFor, sim } from './wait.ts';
