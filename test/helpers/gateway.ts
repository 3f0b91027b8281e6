// Starts a real gateway on port 0 (with the built-in simulator on its own port) in a fresh data
// folder, plus an admin client and an organization with a key: what every end-to-end test needs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { loadConfig, type GatewayConfig } from '../../lib/config.ts';
import { createGateway, type Gateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { Writable } from 'node:stream';
import type { RouteName } from '../../lib/routes.ts';

export const ADMIN_TOKEN = 'test-admin-token';

export interface TestGateway {
  gw: Gateway;
  url: string;
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  newOrg(opts?: { ownKeys?: RouteName[]; balance?: number; defaultStartWithin?: string; defaultProvider?: RouteName[] }): Promise<{ orgId: string; key: string; keyId: string }>;
  /** Present when started with simulatedTime: move the gateway's clock and timers. */
  clock?: SimulatedClock;
  /** Every log line the gateway wrote (debug level and up). */
  logLines: string[];
  /** Secrets this test used: the admin token, issued API keys, provider credentials it set. */
  secrets: Set<string>;
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
  // Every line is kept, so close() can grep them all for the secrets this test used (issue 13:
  // no error message on any path carries request or key material). TEST_LOG_LEVEL also prints.
  const logLines: string[] = [];
  const echo = process.env.TEST_LOG_LEVEL;
  const sink = new Writable({ write(chunk, _enc, cb) { const l = String(chunk); logLines.push(l); if (echo) process.stdout.write(l); cb(); } });
  const logger = createLogger('debug', sink);
  const secrets = new Set<string>([ADMIN_TOKEN, 'test-secret']);
  const gw = await createGateway({
    config, dataDir, adminToken: ADMIN_TOKEN, secret: 'test-secret', port: 0,
    logger,
    ...(clock ? { clock: { now: () => clock!.now() }, timerClock: clock } : {}),
    drainMs: opts.drainMs ?? 2_000,
    // The hedge calendar sizes its slots from the real event loop's cost per request, which says
    // nothing about a simulated clock's time: a test on one would see hedges moved by the host's
    // speed (its unit tests: test/routing/launch-calendar.test.ts; a real burst: bench/hedge-burst.ts).
    ...(clock ? { hedgeCalendar: false } : {}),
  });
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(gw.url + path, {
      method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    collectSecrets(body, secrets);
    if (typeof json?.key === 'string') secrets.add(json.key);
    return { status: res.status, json };
  };
  for (const m of Object.values(config.managed)) collectSecrets(m, secrets);
  return {
    gw, url: gw.url, admin, clock, logLines, secrets,
    async newOrg(o = {}) {
      const org = await admin('POST', '/admin/v1/orgs', { name: 'test' });
      const orgId = org.json.id as string;
      for (const r of o.ownKeys ?? []) {
        const cred = (gw.services.config.managed[r] as any);
        const body = r === 'cloud_a' || r === 'cloud_b' ? cred : { key: `own-${r}-key` };
        await admin('PUT', `/admin/v1/orgs/${orgId}/provider-keys/${r}`, body);
      }
      if (o.balance) await admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: o.balance });
      const k = await admin('POST', `/admin/v1/orgs/${orgId}/keys`, { default_start_within: o.defaultStartWithin ?? null, default_provider: o.defaultProvider ?? null });
      return { orgId, key: k.json.key, keyId: k.json.id };
    },
    async close() {
      await gw.close();
      assertNoSecrets(logLines, secrets);
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Key-like strings in a body the test sent: `key` values and the secret fields of cloud credentials. */
function collectSecrets(v: unknown, into: Set<string>, name = ''): void {
  if (typeof v === 'string') {
    if (/^(key|private_key|secret_access_key|session_token)$/.test(name) && v.length >= 8) {
      into.add(v);
      // A PEM key's body lines: a log that quoted part of it would not contain the whole.
      for (const line of v.split('\n')) if (line.length >= 40) into.add(line);
    }
    return;
  }
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) collectSecrets(x, into, k);
}

export function assertNoSecrets(lines: string[], secrets: Set<string>): void {
  // Also their first 10 characters: a parser's error once quoted that much of a provider key.
  // (flex_live_ is every API key's public prefix, so those are matched on 4 characters past it.)
  const needles = [...secrets].flatMap((s) => (s.length > 16 ? [s, s.slice(0, s.startsWith('flex_live_') ? 14 : 10)] : [s]));
  for (const line of lines) {
    for (const n of needles) {
      if (line.includes(n)) throw new Error(`a log line carries key material (${n.slice(0, 4)}…): ${line.slice(0, 300)}`);
    }
  }
}

export { waitFor, sim } from './wait.ts';
