// The benchmark run: start the simulator, the bare proxy and the gateway once, each in its own
// process, then for each scenario race the three targets in turn (direct → bare proxy → gateway)
// and print the table. Env: BENCH_DURATION_S (10), BENCH_WARMUP_S (2), BENCH_CONNECTIONS (100),
// BENCH_CPU_PROF_DIR (when set, the bare proxy and the gateway run under `node --cpu-prof` and
// write their profiles there, named by pid, when they stop; read them with profile-top.ts).
import { availableParallelism } from 'node:os';
import { forkServer, type ServerProcess } from './processes.ts';
import { measure, sanityCheck, type LoadOptions, type Target } from './measure.ts';
import { printScenario, printSummary, type ScenarioResult } from './report.ts';
import type { Scenario, TargetName } from './scenario.ts';

interface Servers { sim: ServerProcess; bare: ServerProcess; gateway: ServerProcess; apiKey: string }

function envNumber(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(v)}`);
  return n;
}

export function loadOptions(): LoadOptions {
  return {
    durationS: envNumber('BENCH_DURATION_S', 10),
    warmupS: envNumber('BENCH_WARMUP_S', 2),
    connections: envNumber('BENCH_CONNECTIONS', 100),
  };
}

function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

async function startServers(): Promise<Servers> {
  const sim = await forkServer('simulator', './simulator-child.ts');
  const [bare, gateway] = await Promise.all([
    forkServer('bare proxy', './bare-proxy.ts', [sim.url], profileFlags()),
    forkServer('gateway', './gateway-child.ts', [sim.url], profileFlags()),
  ]);
  if (process.env.BENCH_CPU_PROF_DIR) console.log(`# profiling: bare proxy pid ${bare.pid}, gateway pid ${gateway.pid} → ${process.env.BENCH_CPU_PROF_DIR}`);
  return { sim, bare, gateway, apiKey: gateway.info.apiKey! };
}

function targetsFor(s: Scenario, servers: Servers): Target[] {
  const json = { 'content-type': 'application/json' };
  const upstream = JSON.stringify(s.upstream.body);
  const byName: Record<TargetName, Target> = {
    direct: { name: 'direct', url: servers.sim.url, path: s.upstream.path, body: upstream, headers: { ...json, authorization: 'Bearer bench-direct-key' } },
    'bare proxy': { name: 'bare proxy', url: servers.bare.url, path: s.upstream.path, body: upstream, headers: { ...json, authorization: 'Bearer bench-direct-key' }, proxy: servers.bare },
    gateway: { name: 'gateway', url: servers.gateway.url, path: s.gateway.path, body: JSON.stringify(s.gateway.body), headers: { ...json, authorization: `Bearer ${servers.apiKey}` }, proxy: servers.gateway },
  };
  return [byName.direct, byName['bare proxy'], byName.gateway];
}

export async function runScenarios(scenarios: Scenario[]): Promise<ScenarioResult[]> {
  const opts = loadOptions();
  console.log(`# gateway benchmarks — ${opts.connections} connections, ${opts.durationS} s per target after ${opts.warmupS} s warm-up;`
    + ` node ${process.version}, ${availableParallelism()} CPUs, gateway LOG_LEVEL=${process.env.LOG_LEVEL ?? 'info'}`);
  console.log('# each server in its own process (simulator, bare proxy, gateway); autocannon in the runner;');
  console.log('# CPU µs/req = that process\'s user+system CPU during the measured run / responses completed');
  const servers = await startServers();
  const results: ScenarioResult[] = [];
  try {
    for (const s of scenarios) {
      const targets = targetsFor(s, servers);
      for (const t of targets) await sanityCheck(s, t);
      const rows = [];
      for (const t of targets) rows.push(await measure(t, servers.sim, opts));
      const result = { scenario: s, rows };
      printScenario(result);
      results.push(result);
    }
    if (results.length > 1) printSummary(results);
  } finally {
    await Promise.all([servers.gateway.stop(), servers.bare.stop()]);
    await servers.sim.stop();
  }
  return results;
}

/** Entry point of `npx tsx bench/<scenario>.ts` and of run.ts. */
export function runMain(scenarios: Scenario[]): void {
  runScenarios(scenarios).then(() => process.exit(0), (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
