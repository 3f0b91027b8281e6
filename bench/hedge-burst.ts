// Many hedges at one instant (issue 9: deadlines met under bursts). A batch of requests arrives at
// one gateway process together, each with the same start_within, on a route whose flex queue never
// starts them: every request waits on flex, and every hedge falls on the same instant. Measured in
// the gateway's own terms (gateway_deadline_misses_total: a commit, the tier's first event, after
// arrival + start_within; gateway_hedges_advanced_total and its seconds: the hedges the calendar
// launched early), with the hedge launch calendar
// (lib/routing/launch-calendar.ts) and without it, on a fresh gateway and simulator each round,
// each in its own process (the runner sends; the simulator answers standard after 100 ms).
//
//   npx tsx bench/hedge-burst.ts          (HEDGE_BURST_N=2000 requests, HEDGE_BURST_ROUNDS=2)
//
// A cold gateway (no observation yet: the hedge lead is hedge.initial_lead_ms, here 500 ms) is
// the hard case: nothing tells it the burst is coming until the hedges are booked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { DEFAULT_CAPACITY, loadConfig } from '../lib/config.ts';
import { createGateway } from '../lib/app.ts';
import { createLogger } from '../lib/log.ts';
import { startSimulator } from '../lib/simulator/server.ts';
import { forkServer, isMain, serveAsChild } from './processes.ts';
import { MODEL } from './scenario.ts';

const N = Number(process.env.HEDGE_BURST_N ?? 2_000);
const ROUNDS = Number(process.env.HEDGE_BURST_ROUNDS ?? 2);
const DEADLINE_MS = 10_000;
const ADMIN = 'hedge-burst-admin-token';

/** The simulator: flex never starts (10 minutes), standard's first event after 100 ms, 4 tokens. */
function simulator(): void {
  serveAsChild(() => startSimulator({
    seed: 1, outputTokens: 4, tokensPerS: 0, standard: { startMs: 100 }, flex: { startMs: { min: 600_000, max: 600_000 }, refuseRate: 0 },
  }));
}

/** The gateway: vendor_a on the simulator, one own-key organization, room for the whole burst
 *  (connections, flex race slots), the calendar on or off. */
function gateway(upstream: string, calendar: boolean): void {
  serveAsChild(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-burst-'));
    const config = loadConfig(undefined, {
      routes: { vendor_a: { base_url: upstream, connections: 2 * N + 100 } },
      useSimulator: false, flex_race_slots: N + 100,
      hedge: { initial_lead_ms: 500, min_lead_ms: 200, max_lead_ms: 60_000 },
      capacity: { ...DEFAULT_CAPACITY, connections: 2 * N + 100, org_share: 1, queue: 4 * N },
    });
    const gw = await createGateway({ config, dataDir, adminToken: ADMIN, secret: 'hedge-burst', port: 0, logger: createLogger('warn'), drainMs: 1_000, hedgeCalendar: calendar });
    const admin = async (method: string, path: string, body: unknown): Promise<any> =>
      (await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const org = await admin('POST', '/admin/v1/orgs', { name: 'burst' });
    await admin('PUT', `/admin/v1/orgs/${org.id}/provider-keys/vendor_a`, { key: 'burst-own-vendor-a-key' });
    const key = await admin('POST', `/admin/v1/orgs/${org.id}/keys`, {});
    return { url: gw.url, info: { key: key.key }, async close() { await gw.close(); rmSync(dataDir, { recursive: true, force: true }); } };
  });
}

interface Round { calendar: boolean; missed: number; advanced: number; meanAdvanceS: number; reasons: Record<string, number>; loopMs: number | null; cpuMs: number }

async function round(calendar: boolean): Promise<Round> {
  const self = new URL(import.meta.url).pathname;
  const sim = await forkServer('simulator', self, ['simulator']);
  const gw = await forkServer('gateway', self, ['gateway', sim.url, String(calendar)]);
  const agent = new Agent({ connections: N + 10, headersTimeout: 0, bodyTimeout: 0 });
  try {
    // Every connection open before the burst, so its requests reach the gateway together.
    await Promise.all(Array.from({ length: N }, () => request(`${gw.url}/healthz`, { dispatcher: agent }).then((r) => r.body.dump())));
    const body = JSON.stringify({ model: MODEL, input: 'hi', stream: true, start_within: '00h-00m-10s', provider: ['vendor_a'] });
    const headers = { authorization: `Bearer ${gw.info.key}`, 'content-type': 'application/json' };
    const cpu0 = await gw.cpuMicros();
    const reasons: Record<string, number> = {};
    await Promise.all(Array.from({ length: N }, async () => {
      const res = await request(`${gw.url}/v1/responses`, { method: 'POST', dispatcher: agent, headers, body });
      const reason = `${res.statusCode} ${res.headers['x-service-flex-reason'] ?? ''}`;
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      await res.body.dump();
    }));
    const cpuMs = ((await gw.cpuMicros()) - cpu0) / 1000;
    const metrics = await (await request(`${gw.url}/metrics`)).body.text();
    const scheduler: any = await (await request(`${gw.url}/admin/v1/scheduler`, { headers: { authorization: `Bearer ${ADMIN}` } })).body.json();
    const sum = (name: string): number =>
      [...metrics.matchAll(new RegExp(`^${name}\\{[^}]*\\} ([0-9.e+-]+)`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
    const missed = sum('gateway_deadline_misses_total');
    const advanced = sum('gateway_hedges_advanced_total');
    const advanceS = sum('gateway_hedge_advance_seconds_total');
    return { calendar, missed, advanced, meanAdvanceS: advanced ? advanceS / advanced : 0, reasons, loopMs: scheduler.launches?.loop_ms_per_request ?? null, cpuMs };
  } finally {
    await agent.close();
    await gw.stop();
    await sim.stop();
  }
}

async function main(): Promise<void> {
  console.log(`hedge-burst: ${N} streamed requests at once, start_within ${DEADLINE_MS / 1000} s, flex never starts, standard 100 ms; ${ROUNDS} rounds each, alternated`);
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) for (const calendar of r % 2 ? [true, false] : [false, true]) rounds.push(await round(calendar));
  console.log('calendar  missed  hedges advanced (mean s)  gateway CPU ms  loop ms/request  reasons');
  for (const r of rounds) {
    console.log(`${(r.calendar ? 'on' : 'off').padEnd(8)}  ${String(r.missed).padStart(6)}  ${`${r.advanced} (${r.meanAdvanceS.toFixed(2)})`.padStart(23)}  ${r.cpuMs.toFixed(0).padStart(14)}  ${String(r.loopMs ?? '—').padStart(15)}  ${JSON.stringify(r.reasons)}`);
  }
}

if (isMain(import.meta.url)) {
  const [role, upstream, calendar] = process.argv.slice(2);
  if (role === 'simulator') simulator();
  else if (role === 'gateway') gateway(upstream!, calendar === 'true');
  else await main();
}
