// Instructions per request, counted by valgrind (callgrind): a count does not move with whatever
// else the machine is doing, as timings on this shared 2-core host do; how much it still moves
// between runs of the same code is in bench/README.md ("Counting instead of timing"). The bare
// proxy and the gateway each run alone under callgrind (both bundled, on plain node with the same
// flags as in the throughput scenarios); the minimal upstream runs natively. After a warm-up, the
// counters are zeroed, N requests are sent
// over C keep-alive connections, and the counters are dumped: instructions / N. Each thread is
// counted apart (--separate-threads): the main thread, which runs the requests, and V8's helper
// threads (background compilation, concurrent marking, parallel scavenging), whose share moved a
// total by a fifth and more between runs of the same code, as their work fell in the counted window
// or not. Under callgrind a process runs ≈ 50× slower, so N is small and the run takes a few
// minutes. The gateway keeps its usage records queued while it is counted (BENCH_USAGE_HOLD=1,
// bench/gateway-child.ts): their batch write each second would put into each request's count a
// share that follows how many requests a second the slowed process served. One connection by
// default: requests one after another, as the count of one request's path. Not part of `make bench`:
// `npx tsx bench/instructions.ts`; BENCH_INSTR_N (2,000), BENCH_INSTR_WARMUP (3,000),
// BENCH_INSTR_CONNECTIONS (1), BENCH_INSTR_SCENARIO (responses-stream, or any throughput scenario).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { forkServer, isMain, type ServerProcess } from './processes.ts';
import { targetsFor } from './harness.ts';
import type { Target } from './measure.ts';
import { bundledChild, envFlags, startFlags } from './bundle.ts';
import { MINIMAL_SCENARIOS as SCENARIOS } from './minimal.ts';
import { printTable, fixed } from './report.ts';

const N = Number(process.env.BENCH_INSTR_N ?? 2_000);
const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 3_000);
const CONNECTIONS = Number(process.env.BENCH_INSTR_CONNECTIONS ?? 1);
const SCENARIO = process.env.BENCH_INSTR_SCENARIO ?? 'responses-stream';

/** callgrind_control on a running process: -z zeroes its counters, -d dumps them. */
function control(pid: number, flag: '-z' | '-d'): void {
  const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${r.stderr || r.stdout}`);
}

/** The files of the last dump in `dir`, written with --separate-threads as one file per thread,
 *  `<out>.<dump>-<thread>` (thread 01 is the main one): the main thread's and every thread's. */
export function lastDump(dir: string): { main: string; threads: string[] } {
  const files = readdirSync(dir).map((f) => /\.(\d+)-(\d+)$/.exec(f)).filter((m) => m !== null);
  if (!files.length) throw new Error(`no callgrind dump in ${dir}`);
  const last = Math.max(...files.map((m) => Number(m[1])));
  const threads = files.filter((m) => Number(m[1]) === last);
  const main = threads.find((m) => Number(m[2]) === 1);
  if (!main) throw new Error(`no main thread in dump ${last} of ${dir}`);
  return { main: join(dir, main.input), threads: threads.map((m) => join(dir, m.input)) };
}

/** The instructions of the last dump in `dir` (each file's `totals:` line): the main thread's and
 *  every thread's. */
export function lastDumpTotals(dir: string): { main: number; all: number } {
  const total = (file: string): number => {
    const m = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'));
    if (!m) throw new Error(`no totals in ${file}`);
    return Number(m[1]);
  };
  const { main, threads } = lastDump(dir);
  return { main: total(main), all: threads.reduce((sum, file) => sum + total(file), 0) };
}

/** Sends `warmup` requests of `t`, zeroes the counters of `pid` (a process under callgrind), sends
 *  `n` more over `connections` keep-alive connections, and dumps the counters: the counted window
 *  holds those `n` requests alone. Every answer must be a 200. */
export async function countWindow(pid: number, t: Target, warmup: number, n: number, connections: number): Promise<void> {
  const clients = Array.from({ length: connections }, () => new Client(t.url, { pipelining: 1 }));
  const send = (count: number): Promise<unknown> => Promise.all(clients.map(async (client) => {
    for (let i = 0; i < count / connections; i++) {
      const res = await client.request({ method: 'POST', path: t.path, headers: t.headers, body: t.body });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${t.name}: ${res.statusCode} ${text.slice(0, 200)}`);
    }
  }));
  try {
    await send(warmup);
    control(pid, '-z');
    await send(n);
    control(pid, '-d');
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export async function runInstructions(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) { console.log('\n## instructions — skipped: valgrind is not installed'); return; }
  const scenario = SCENARIOS.find((s) => s.name === SCENARIO);
  if (!scenario) throw new Error(`unknown scenario ${SCENARIO}: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  process.env.BENCH_USAGE_HOLD ??= '1';   // inherited by the gateway's process
  const upstream = await forkServer('minimal upstream', './minimal-upstream.ts');
  const perRequest: Record<string, { main: number; all: number }> = {};
  try {
    for (const name of ['bare proxy', 'gateway'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'gw-instr-'));
      const wrap = ['valgrind', '-q', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'cg')}`];
      const child: ServerProcess = name === 'gateway'
        ? await forkServer(name, await bundledChild('gateway-child'), [upstream.url], startFlags(), wrap)
        : await forkServer(name, await bundledChild('bare-proxy'), [upstream.url], envFlags('BENCH_BARE_FLAGS'), wrap);
      try {
        const servers = { upstream, bare: child, gateway: child, kind: 'minimal' as const };
        await countWindow(child.pid, targetsFor(scenario, servers)[name], WARMUP, N, CONNECTIONS);
        const totals = lastDumpTotals(dir);
        perRequest[name] = { main: totals.main / N, all: totals.all / N };
      } finally {
        await child.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await upstream.stop();
  }
  const bare = perRequest['bare proxy']!;
  const gateway = perRequest.gateway!;
  console.log(`\n## instructions — ${SCENARIO}, per request (callgrind; ${N} requests over ${CONNECTIONS} connections after ${WARMUP} to warm up; the gateway's usage records held in its queue)`);
  printTable(['target', 'main thread / request', 'vs bare proxy', 'every thread / request', 'vs bare proxy'], [
    ['bare proxy', fixed(bare.main, 0), '×1.00', fixed(bare.all, 0), '×1.00'],
    ['gateway', fixed(gateway.main, 0), `×${fixed(gateway.main / bare.main, 2)}`, fixed(gateway.all, 0), `×${fixed(gateway.all / bare.all, 2)}`],
  ]);
}

if (isMain(import.meta.url)) runInstructions().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
