// One connection, one request at a time: what each hop adds to the first byte a streaming caller
// sees, and the tail of the whole request. For each target (direct, bare proxy, gateway) the
// responses-stream request is sent sequentially over one keep-alive connection; the time to the
// first body chunk and to the end are recorded for every request. Rounds rotate the order.
// Targets: the gateway adds ≤ the bare proxy's added first byte + 0.1 ms, and its p99 ≤ 2 ms.
// Each target is warmed with 3,000 requests first: over the first few thousand sequential requests
// every hop is slower, the upstream called directly included (the runner's client and the host
// warm up too), and 300 left the measured requests in that stretch (bench/README.md, "One
// connection: the warm-up").
import { Client } from 'undici';
import { isMain } from './processes.ts';
import { loadOptions, rotated, startServers, stopServers, targetsFor, type Servers } from './harness.ts';
import { responsesStream } from './responses-stream.ts';
import { median, printTable, fixed } from './report.ts';
import { TARGETS, type TargetName } from './scenario.ts';
import type { Target } from './measure.ts';

const REQUESTS = Number(process.env.BENCH_FIRST_BYTE_N ?? 3_000);
const WARMUP = Number(process.env.BENCH_FIRST_BYTE_WARMUP ?? 3_000);

interface Sample { ttfb: number[]; total: number[] }

async function sequential(t: Target, n: number, into?: Sample): Promise<void> {
  const client = new Client(t.url, { pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const res = await client.request({ method: 'POST', path: t.path, headers: t.headers, body: t.body });
      let first = 0;
      for await (const _chunk of res.body) if (!first) first = performance.now();
      const end = performance.now();
      if (res.statusCode !== 200) throw new Error(`${t.name}: status ${res.statusCode}`);
      if (into) { into.ttfb.push(first - t0); into.total.push(end - t0); }
    }
  } finally {
    await client.close();
  }
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

export interface FirstByteResult { added: Record<TargetName, number>; p99: Record<TargetName, number> }

export async function runFirstByte(servers?: Servers): Promise<FirstByteResult> {
  const { rounds } = loadOptions();
  const own = servers ?? await startServers('minimal');
  try {
    const targets = targetsFor(responsesStream, own);
    const samples = Object.fromEntries(TARGETS.map((n) => [n, { ttfb: [], total: [] } as Sample])) as Record<TargetName, Sample>;
    for (const n of TARGETS) await sequential(targets[n], WARMUP);
    for (let r = 0; r < rounds; r++) for (const n of rotated(TARGETS, r)) await sequential(targets[n], Math.ceil(REQUESTS / rounds), samples[n]);
    const p50 = (n: TargetName): number => median(samples[n].ttfb);
    const added = Object.fromEntries(TARGETS.map((n) => [n, p50(n) - p50('direct')])) as Record<TargetName, number>;
    const p99 = Object.fromEntries(TARGETS.map((n) => [n, quantile(samples[n].total, 0.99)])) as Record<TargetName, number>;
    console.log(`\n## first-byte — one connection, ${REQUESTS} sequential responses-stream requests per target (${rounds} rounds, order rotated), minimal upstream`);
    printTable(['target', 'first byte p50 ms', 'added vs direct ms', 'first byte p99 ms', 'total p50 ms', 'total p99 ms'], TARGETS.map((n) => [
      n, fixed(p50(n), 3), fixed(added[n], 3), fixed(quantile(samples[n].ttfb, 0.99), 3), fixed(median(samples[n].total), 3), fixed(p99[n], 3),
    ]));
    const okAdded = added.gateway <= added['bare proxy'] + 0.1;
    console.log(`gateway adds ${fixed(added.gateway, 3)} ms to the first byte, the bare proxy ${fixed(added['bare proxy'], 3)} ms`
      + ` (target ≤ bare + 0.100): ${okAdded ? 'ok' : 'BELOW TARGET'};  gateway p99 ${fixed(p99.gateway, 3)} ms (target ≤ 2): ${p99.gateway <= 2 ? 'ok' : 'BELOW TARGET'}`);
    return { added, p99 };
  } finally {
    if (!servers) await stopServers(own);
  }
}

if (isMain(import.meta.url)) runFirstByte().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
