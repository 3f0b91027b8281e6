// Where the gateway's CPU goes in each throughput scenario, side by side: every scenario of
// `minimal.ts` runs one round on fresh processes, both proxies under `node --cpu-prof`, and each
// profile is split by part of the request path (where-time-goes.ts). The gateway runs from its
// bundle, as `npm start` runs it, its functions placed in their lib/ files through the bundle's
// source map (BENCH_GATEWAY_TSX=1: under tsx instead, as the tables of earlier sessions in
// bench/README.md were made; tsx adds a little of its own, `__name`). Profiled µs are inflated by
// the profiler, so read them as shares and differences. Not part of `make bench`:
// `npx tsx bench/profile-scenarios.ts` (≈ 3 minutes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMain } from './processes.ts';
import { profileOf, runScenarios, servedBy, startServers, stopServers } from './harness.ts';
import { MINIMAL_SCENARIOS } from './minimal.ts';
import { LOADING, whereTimeGoes } from './where-time-goes.ts';
import { fixed, printTable } from './report.ts';
import { bundleLocator, type Locate } from './bundle.ts';

export async function runProfileScenarios(): Promise<void> {
  process.env.BENCH_ROUNDS ??= '1';
  const locate = process.env.BENCH_GATEWAY_TSX ? undefined : await bundleLocator('gateway-child');
  const gateway: Map<string, number>[] = [];
  const bare: number[] = [];
  for (const scenario of MINIMAL_SCENARIOS) {
    const dir = mkdtempSync(join(tmpdir(), 'gw-prof-'));
    process.env.BENCH_CPU_PROF_DIR = dir;
    try {
      const servers = await startServers('minimal');
      let results;
      try { results = await runScenarios([scenario], 'minimal', servers); } finally { await stopServers(servers); }
      const perRequest = (pid: number, served: number, locator?: Locate): Map<string, number> => {
        const us = whereTimeGoes(profileOf(dir, pid)!, locator);
        us.delete(LOADING);
        return new Map([...us].map(([part, t]) => [part, t / served]));
      };
      gateway.push(perRequest(servers.gateway.pid, servedBy(results, 'gateway'), locate));
      bare.push([...perRequest(servers.bare.pid, servedBy(results, 'bare proxy')).values()].reduce((a, b) => a + b, 0));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const parts = [...new Set(gateway.flatMap((m) => [...m.keys()]))]
    .sort((a, b) => gateway.reduce((s, m) => s + (m.get(b) ?? 0), 0) - gateway.reduce((s, m) => s + (m.get(a) ?? 0), 0));
  const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
  console.log(`\n## where the gateway's CPU goes, per scenario — profiled µs per request (one round each, gateway ${locate ? 'bundled' : 'under tsx'})`);
  printTable(['part of the request path', ...MINIMAL_SCENARIOS.map((s) => s.name)], [
    ...parts.map((part) => [part, ...gateway.map((m) => fixed(m.get(part) ?? 0, 1))]),
    ['gateway, all', ...gateway.map((m) => fixed(total(m), 1))],
    ['bare proxy, all', ...bare.map((us) => fixed(us, 1))],
  ]);
}

if (isMain(import.meta.url)) runProfileScenarios().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
