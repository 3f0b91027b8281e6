// One target under load: a sanity request first (a 200 with a sensible body, or the run stops),
// a short warm-up so the JIT has compiled the path, then the measured autocannon run with the CPU
// time of each process around it.
import autocannon from 'autocannon';
import type { ServerProcess } from './processes.ts';
import type { Scenario, TargetName } from './scenario.ts';

export interface LoadOptions { connections: number; durationS: number; warmupS: number }

export interface Target {
  name: TargetName;
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The process doing the proxying (none for direct: the simulator is the target). */
  proxy?: ServerProcess;
}

export interface Measurement {
  target: TargetName;
  /** Responses in the warm-up before the measured run (profiles cover both). */
  warmupRequests: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU µs per request: the proxy process, the upstream, and the runner (autocannon). */
  proxyCpu?: number;
  upstreamCpu: number;
  loadCpu: number;
}

export async function sanityCheck(scenario: Scenario, t: Target): Promise<void> {
  const res = await fetch(t.url + t.path, { method: 'POST', headers: t.headers, body: t.body });
  const text = await res.text();
  const fail = (why: string): never => {
    throw new Error(`sanity check failed: ${scenario.name} → ${t.name}: ${why}\n${text.slice(0, 600)}`);
  };
  if (res.status !== 200) fail(`status ${res.status}`);
  const wrong = scenario.checkBody(text, t.name);
  if (wrong) fail(wrong);
  if (t.name === 'gateway') {
    const reason = res.headers.get('x-service-flex-reason');
    if (reason !== scenario.flexReason) fail(`x-service-flex-reason ${reason}, expected ${scenario.flexReason}`);
  }
}

function load(t: Target, connections: number, durationS: number): Promise<autocannon.Result> {
  return autocannon({
    url: t.url + t.path, method: 'POST', headers: t.headers, body: t.body,
    connections, pipelining: 1, duration: durationS,
  });
}

export async function measure(t: Target, upstream: ServerProcess, opts: LoadOptions): Promise<Measurement> {
  const warm = opts.warmupS > 0 ? (await load(t, opts.connections, opts.warmupS)).requests.total : 0;
  const cpu = (): Promise<[number, number | undefined, number]> => Promise.all([
    upstream.cpuMicros(), t.proxy?.cpuMicros(), Promise.resolve(ownCpu()),
  ]);
  const before = await cpu();
  const r = await load(t, opts.connections, opts.durationS);
  const after = await cpu();
  const n = Math.max(1, r.requests.total);
  return {
    target: t.name,
    warmupRequests: warm,
    requests: r.requests.total,
    rps: r.requests.mean,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    upstreamCpu: (after[0] - before[0]) / n,
    proxyCpu: t.proxy ? (after[1]! - before[1]!) / n : undefined,
    loadCpu: (after[2] - before[2]) / n,
  };
}

function ownCpu(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}
