// What survives a young-generation GC (a scavenge), by allocation site: one keep-alive connection
// sends a scenario's request sequentially (as first-byte.ts does) to the gateway or the bare proxy,
// whose V8 sampling heap profiler runs through the inspector with objects collected by a scavenge
// left out. What remains was alive at a scavenge: copied, then promoted, then freed only by a full
// GC. At one connection a request lives < 1 ms and scavenges come every ≈ 80 ms, so a request's
// objects should almost never survive; bytes per request here are what makes each scavenge cost
// milliseconds (bench/README.md, "Scavenges at one connection"). Not part of `make bench`:
// `npx tsx bench/scavenge-survivors.ts`; BENCH_SURVIVORS_TARGET=bare (the bare proxy),
// BENCH_SURVIVORS_SCENARIO=responses-nonstream|chat-translated-stream, BENCH_SURVIVORS_N (3,000),
// BENCH_SURVIVORS_DEPTH (frames per stack, 3), BENCH_SURVIVORS_ALL=1 (every allocation, not only
// survivors: what a request allocates).
import { Pool } from 'undici';
import { connectInspector } from './inspector.ts';
import { isMain } from './processes.ts';
import { startServers, stopServers, targetsFor } from './harness.ts';
import { responsesStream } from './responses-stream.ts';
import { responsesNonstream } from './responses-nonstream.ts';
import { chatTranslatedStream } from './chat-translated-stream.ts';
import { fixed, printTable } from './report.ts';

const PORT = 9339;
const N = Number(process.env.BENCH_SURVIVORS_N ?? 3_000);
const DEPTH = Number(process.env.BENCH_SURVIVORS_DEPTH ?? 3);
const ALL = process.env.BENCH_SURVIVORS_ALL === '1';
const CONNECTIONS = Number(process.env.BENCH_SURVIVORS_CONNECTIONS ?? 1);
const SCENARIOS = { 'responses-stream': responsesStream, 'responses-nonstream': responsesNonstream, 'chat-translated-stream': chatTranslatedStream };

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children: ProfileNode[] }
interface SamplingProfile { head: ProfileNode; samples: Array<{ nodeId: number; size: number }> }

/** Bytes per request by allocation stack (DEPTH frames, innermost first). */
function bySite(profile: SamplingProfile, requests: number): Array<[string, number]> {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map<number, ProfileNode>();
  const walk = (n: ProfileNode): void => { byId.set(n.id, n); for (const c of n.children) { parent.set(c.id, n); walk(c); } };
  walk(profile.head);
  const frame = (n: ProfileNode): string =>
    `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const sites = new Map<string, number>();
  for (const s of profile.samples) {
    const chain: string[] = [];
    for (let n: ProfileNode | undefined = byId.get(s.nodeId); n && chain.length < DEPTH; n = parent.get(n.id)) chain.push(frame(n));
    const key = chain.join(' < ');
    sites.set(key, (sites.get(key) ?? 0) + s.size / requests);
  }
  return [...sites].sort((a, b) => b[1] - a[1]);
}

export async function runScavengeSurvivors(): Promise<void> {
  const bare = process.env.BENCH_SURVIVORS_TARGET === 'bare';
  const name = (process.env.BENCH_SURVIVORS_SCENARIO ?? 'responses-stream') as keyof typeof SCENARIOS;
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(`BENCH_SURVIVORS_SCENARIO must be one of ${Object.keys(SCENARIOS).join(', ')}`);
  const flags = bare ? 'BENCH_BARE_FLAGS' : 'BENCH_GATEWAY_FLAGS';
  process.env[flags] = [process.env[flags], `--inspect=127.0.0.1:${PORT}`].filter(Boolean).join(' ');
  const servers = await startServers('minimal');
  const target = targetsFor(scenario, servers)[bare ? 'bare proxy' : 'gateway'];
  const client = new Pool(target.url, { connections: CONNECTIONS, pipelining: 1 });
  const loop = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const res = await client.request({ method: 'POST', path: target.path, headers: target.headers, body: target.body });
      await res.body.arrayBuffer();
    }
  };
  // CONNECTIONS loops at once, N requests in all: with more than one, requests are in flight
  // during a scavenge, as under the throughput scenarios' load.
  const send = async (n: number): Promise<void> => {
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => loop(Math.floor(n / CONNECTIONS) + (i < n % CONNECTIONS ? 1 : 0))));
  };
  const v8 = await connectInspector(PORT);
  try {
    await send(N);   // warm-up: the code is optimised and the heap has its working size
    await v8.call('HeapProfiler.startSampling', {
      samplingInterval: 1024, includeObjectsCollectedByMinorGC: ALL, includeObjectsCollectedByMajorGC: true,
    });
    await send(N);
    const { result } = await v8.call('HeapProfiler.stopSampling');
    const sites = bySite(result.profile as SamplingProfile, N);
    const total = sites.reduce((a, [, b]) => a + b, 0);
    console.log(`\n## scavenge survivors — ${target.name}, ${name}, ${CONNECTIONS === 1 ? 'one connection' : `${CONNECTIONS} connections`}, ${N} requests: `
      + `${fixed(total, 0)} bytes per request ${ALL ? 'allocated' : 'survive a scavenge'} (sampled every 1 KiB)`);
    printTable([`bytes/request`, `allocation site (${DEPTH} frames, innermost first)`], sites.slice(0, Number(process.env.BENCH_SURVIVORS_TOP ?? 25)).map(([site, b]) => [fixed(b, 0), site]));
  } finally {
    v8.close();
    await client.close();
    await stopServers(servers);
  }
}

if (isMain(import.meta.url)) runScavengeSurvivors().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
