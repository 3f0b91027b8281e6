// Many slow streams at once: 1,000 callers each hold a Responses stream that the minimal upstream
// paces at 20 tokens/s (100 tokens, ≈ 5 s). Measured per proxy (the bare proxy, then the gateway):
// its resident memory after a full GC when idle, while every stream is open, and after they all
// ended, for three waves of streams. Target: the gateway holds ≤ 64 KiB per open stream over idle,
// and does not grow after (a wave leaves RSS where the one before left it).
import { Agent, request } from 'undici';
import { isMain, type ServerProcess } from './processes.ts';
import { startServers, stopServers, targetsFor, type Servers } from './harness.ts';
import { responsesStream } from './responses-stream.ts';
import { PACED_MARK, PACED_TOKENS } from './minimal-upstream.ts';
import { fixed, printTable } from './report.ts';
import type { Target } from './measure.ts';
import { agentBodyWith } from './agent-body.ts';

const STREAMS = Number(process.env.BENCH_OPEN_STREAMS ?? 1_000);

/** One wave: STREAMS paced streams opened at once and read to their end. RSS once all are open
 *  and after they ended; how many finished whole. */
async function wave(t: Target, proxy: ServerProcess, agent: Agent, payload: string): Promise<{ open: number; after: number; complete: number; cpuMicros: number }> {
  const cpu0 = await proxy.cpuMicros();
  let started = 0;
  let complete = 0;
  let allStarted!: () => void;
  const startedAll = new Promise<void>((r) => { allStarted = r; });
  const streams = Array.from({ length: STREAMS }, async () => {
    const res = await request(t.url + t.path, { method: 'POST', headers: t.headers, body: payload, dispatcher: agent });
    let text = '';
    let first = true;
    for await (const chunk of res.body) {
      if (first) { first = false; if (++started === STREAMS) allStarted(); }
      text += chunk.toString();
    }
    if (text.includes('response.completed')) complete++;
  });
  await Promise.race([startedAll, Promise.all(streams)]);
  // The reading of RSS runs a full GC: its CPU is left out of the wave's.
  const gc0 = await proxy.cpuMicros();
  const open = await proxy.rssBytes();
  const gcMicros = await proxy.cpuMicros() - gc0;
  await Promise.all(streams);
  const cpuMicros = await proxy.cpuMicros() - cpu0 - gcMicros;
  return { open, after: await proxy.rssBytes(), complete, cpuMicros };
}

/** Three waves: the first measures memory per open stream; the next two show whether what a wave
 *  leaves behind keeps growing (a leak) or is reused. The second settles the heap a little (both
 *  proxies gained 2–6 MiB in it); the third is compared with the second. */
async function openStreams(t: Target, proxy: ServerProcess): Promise<{ idle: number; open: number; after: number[]; complete: number; cpuPerStream: number[] }> {
  const agent = new Agent({ connections: STREAMS + 10, pipelining: 1 });
  // BENCH_OPEN_STREAMS_BODY=agent: each stream carries a coding agent's 225 KB body (agent-body.ts).
  let body: Record<string, any>;
  if (process.env.BENCH_OPEN_STREAMS_BODY === 'agent') body = agentBodyWith(PACED_MARK);
  else { body = JSON.parse(t.body); body.input = `${body.input} ${PACED_MARK}`; }
  const payload = JSON.stringify(body);
  // Warm the path once, so idle is measured on a process that has served this request.
  const warm = await request(t.url + t.path, { method: 'POST', headers: t.headers, body: payload, dispatcher: agent });
  await warm.body.text();
  const idle = await proxy.rssBytes();
  const waves = [];
  for (let i = 0; i < 3; i++) waves.push(await wave(t, proxy, agent, payload));
  await agent.close();
  return {
    idle, open: waves[0]!.open, after: waves.map((w) => w.after), complete: Math.min(...waves.map((w) => w.complete)),
    cpuPerStream: waves.map((w) => w.cpuMicros / STREAMS),
  };
}

export async function runOpenStreams(servers?: Servers): Promise<{ perStreamKiB: number; growthKiB: number }> {
  const own = servers ?? await startServers('minimal');
  try {
    const targets = targetsFor(responsesStream, own);
    const rows: string[][] = [];
    let gateway = { perStreamKiB: NaN, growthKiB: NaN };
    for (const [name, proxy] of [['bare proxy', own.bare], ['gateway', own.gateway]] as const) {
      const m = await openStreams(targets[name], proxy);
      const perStreamKiB = (m.open - m.idle) / STREAMS / 1024;
      const growthKiB = (m.after[2]! - m.after[1]!) / 1024;
      if (name === 'gateway') gateway = { perStreamKiB, growthKiB };
      rows.push([
        name, fixed(m.idle / 2 ** 20, 1), fixed(m.open / 2 ** 20, 1), m.after.map((b) => fixed(b / 2 ** 20, 1)).join(' / '),
        fixed(perStreamKiB, 1), fixed(growthKiB, 0), `${m.complete}/${STREAMS}`,
        m.cpuPerStream.map((us) => fixed(us / (PACED_TOKENS + 8), 1)).join(' / '),
      ]);
    }
    console.log(`\n## open-streams — ${STREAMS} concurrent streams paced at 20 tokens/s (${PACED_TOKENS} tokens each), three waves, minimal upstream; RSS after a full GC`);
    printTable(['proxy', 'idle MiB', 'open MiB (1st wave)', 'after waves 1 / 2 / 3 MiB', 'KiB per open stream', '3rd − 2nd KiB', 'completed (each wave)', 'CPU µs per event, waves 1 / 2 / 3'], rows);
    console.log(`gateway: ${fixed(gateway.perStreamKiB, 1)} KiB per open stream (target ≤ 64): ${gateway.perStreamKiB <= 64 ? 'ok' : 'BELOW TARGET'};`
      + ` after a third wave RSS moved ${fixed(gateway.growthKiB, 0)} KiB from where the second left it`);
    return gateway;
  } finally {
    if (!servers) await stopServers(own);
  }
}

if (isMain(import.meta.url)) runOpenStreams().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
