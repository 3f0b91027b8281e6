// The benchmark run: start an upstream (the minimal upstream, or the provider simulator), the bare
// proxy and the gateway once, each in its own process; then for each scenario race the three
// targets in rounds, rotating their order each round (so no target always runs on a warmer or
// cooler machine), and print every round and the medians. Env: BENCH_DURATION_S (4),
// BENCH_WARMUP_S (2), BENCH_CONNECTIONS (100), BENCH_ROUNDS (3), BENCH_UPSTREAM (`minimal` or
// `simulator`, for a single scenario file), BENCH_CPU_PROF_DIR (when set, the bare proxy and the
// gateway run under `node --cpu-prof` and write their profiles there, named by pid, when they
// stop; read them with profile-top.ts).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, cpus } from 'node:os';
import { printWhereTimeGoes } from './where-time-goes.ts';
import { bundledChild, bundleLocator, envFlags, startFlags } from './bundle.ts';
import { forkServer, type ServerProcess } from './processes.ts';
import { measure, sanityCheck, type LoadOptions, type Target } from './measure.ts';
import { printScenario, printSummary, type ScenarioResult } from './report.ts';
import { TARGETS, type Scenario, type TargetName } from './scenario.ts';

export type UpstreamKind = 'minimal' | 'simulator';

export interface Servers { upstream: ServerProcess; bare: ServerProcess; gateway: ServerProcess; kind: UpstreamKind }

function envNumber(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(v)}`);
  return n;
}

export function loadOptions(): LoadOptions & { rounds: number } {
  return {
    durationS: envNumber('BENCH_DURATION_S', 4),
    warmupS: envNumber('BENCH_WARMUP_S', 2),
    connections: envNumber('BENCH_CONNECTIONS', 100),
    rounds: Math.max(1, envNumber('BENCH_ROUNDS', 3)),
  };
}

function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

export async function startServers(kind: UpstreamKind): Promise<Servers> {
  const upstream = kind === 'minimal'
    ? await forkServer('minimal upstream', './minimal-upstream.ts', [], envFlags('BENCH_UPSTREAM_FLAGS'))
    : await forkServer('simulator', './simulator-child.ts');
  const [bare, gateway] = await Promise.all([
    forkServer('bare proxy', './bare-proxy.ts', [upstream.url], [...profileFlags(), ...envFlags('BENCH_BARE_FLAGS')]),
    forkServer('gateway', process.env.BENCH_GATEWAY_TSX ? './gateway-child.ts' : await bundledChild('gateway-child'), [upstream.url], [...startFlags(), ...profileFlags()]),
  ]);
  if (process.env.BENCH_CPU_PROF_DIR) console.log(`# profiling: bare proxy pid ${bare.pid}, gateway pid ${gateway.pid} → ${process.env.BENCH_CPU_PROF_DIR}`);
  return { upstream, bare, gateway, kind };
}

export async function stopServers(s: Servers): Promise<void> {
  await Promise.all([s.gateway.stop(), s.bare.stop()]);
  await s.upstream.stop();
}

export function targetsFor(s: Scenario, servers: Servers): Record<TargetName, Target> {
  const json = { 'content-type': 'application/json' };
  const upstream = JSON.stringify(s.upstream.body);
  const apiKey = servers.gateway.info[s.org === 'managed' ? 'managedKey' : 'byokKey']!;
  return {
    direct: { name: 'direct', url: servers.upstream.url, path: s.upstream.path, body: upstream, headers: { ...json, authorization: 'Bearer bench-direct-key' } },
    'bare proxy': { name: 'bare proxy', url: servers.bare.url, path: s.upstream.path, body: upstream, headers: { ...json, authorization: 'Bearer bench-direct-key' }, proxy: servers.bare },
    gateway: { name: 'gateway', url: servers.gateway.url, path: s.gateway.path, body: JSON.stringify(s.gateway.body), headers: { ...json, authorization: `Bearer ${apiKey}` }, proxy: servers.gateway },
  };
}

/** Round r measures the targets in TARGETS order rotated by r. */
export function rotated<T>(items: readonly T[], r: number): T[] {
  const k = r % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export function printPreamble(kind: UpstreamKind, opts: ReturnType<typeof loadOptions>): void {
  console.log(`\n# upstream: ${kind === 'minimal' ? 'the minimal upstream (fixed bytes, bench/minimal-upstream.ts)' : 'the provider simulator (no delays, 16 tokens)'}`
    + ` — ${opts.connections} connections, ${opts.rounds} rounds × (${opts.warmupS} s warm-up + ${opts.durationS} s measured) per target, order rotated each round`);
  console.log(`# machine: node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? '?'}), gateway LOG_LEVEL=${process.env.LOG_LEVEL ?? 'info'};`
    + ' each server in its own process, autocannon in the runner; CPU µs/req = that process\'s user+system CPU during the measured run / responses');
}

/** `overrides` set some of the environment's load options for this run only. */
export async function runScenarios(
  scenarios: Scenario[], kind: UpstreamKind, servers?: Servers, overrides: Partial<LoadOptions> = {},
): Promise<ScenarioResult[]> {
  const opts = { ...loadOptions(), ...overrides };
  printPreamble(kind, opts);
  const own = servers ?? await startServers(kind);
  const results: ScenarioResult[] = [];
  try {
    for (const s of scenarios) {
      const targets = targetsFor(s, own);
      for (const name of TARGETS) await sanityCheck(s, targets[name]);
      const rounds = [];
      for (let r = 0; r < opts.rounds; r++) {
        const rows = [];
        for (const name of rotated(TARGETS, r)) rows.push(await measure(targets[name], own.upstream, opts));
        rounds.push(rows);
      }
      const result = { scenario: s, rounds };
      printScenario(result);
      results.push(result);
    }
    if (results.length > 1) printSummary(results, kind);
  } finally {
    if (!servers) await stopServers(own);
  }
  if (!servers && process.env.BENCH_CPU_PROF_DIR) await printProfiles(own, results);
  return results;
}

/** With BENCH_CPU_PROF_DIR: where each proxy's CPU went over the whole run (its profile is
 *  written when it stops), per request served (warm-ups included). The bundled gateway's
 *  functions are placed in their `lib/` files through the bundle's source map. */
export async function printProfiles(servers: Servers, results: ScenarioResult[]): Promise<void> {
  const dir = process.env.BENCH_CPU_PROF_DIR!;
  for (const [name, proc] of [['bare proxy', servers.bare], ['gateway', servers.gateway]] as const) {
    const file = profileOf(dir, proc.pid);
    if (!file) continue;
    const served = servedBy(results, name);
    const locate = name === 'gateway' && !process.env.BENCH_GATEWAY_TSX ? await bundleLocator('gateway-child') : undefined;
    console.log(`\n## where the ${name}'s CPU goes — ${results.map((r) => r.scenario.name).join(', ')}; ${served} requests (${file})`);
    printWhereTimeGoes(file, served, locate);
  }
}

/** The main-thread profile a process wrote to `dir` when it stopped (the largest of its files). */
export function profileOf(dir: string, pid: number): string | undefined {
  const files = readdirSync(dir).filter((f) => f.includes(`.${pid}.`)).map((f) => join(dir, f));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

/** Requests a target served over the results' rounds, warm-ups included (what its profile covers). */
export function servedBy(results: ScenarioResult[], target: TargetName): number {
  return results.flatMap((r) => r.rounds.flat()).filter((m) => m.target === target).reduce((n, m) => n + m.requests + m.warmupRequests, 0);
}

/** Entry point of `npx tsx bench/<scenario>.ts`: its scenarios on BENCH_UPSTREAM (minimal). */
export function runMain(scenarios: Scenario[]): void {
  const kind = (process.env.BENCH_UPSTREAM ?? 'minimal') as UpstreamKind;
  if (kind !== 'minimal' && kind !== 'simulator') throw new Error('BENCH_UPSTREAM must be minimal or simulator');
  runScenarios(scenarios, kind).then(() => process.exit(0), (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
