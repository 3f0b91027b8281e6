// System calls per request, counted by strace: deterministic where timings on a shared 2-core
// machine are not. One keep-alive connection sends the responses-stream request sequentially to the
// bare proxy and to the gateway; `strace -c -f` counts each process's calls (its threads
// included) over N requests after a warm-up. Not part of `make bench` (it needs strace:
// `apt-get install strace`): `npx tsx bench/syscalls.ts`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { isMain } from './processes.ts';
import { startServers, stopServers, targetsFor } from './harness.ts';
import { responsesStream } from './responses-stream.ts';
import { printTable, fixed } from './report.ts';

const N = Number(process.env.BENCH_SYSCALLS_N ?? 1_000);
/** Keep-alive connections sending at once (1: sequential; 100: the throughput scenarios' load). */
const CONNECTIONS = Number(process.env.BENCH_SYSCALLS_CONNECTIONS ?? 1);
const WARMUP = 300;

/** strace -c's table: syscall → calls. */
function parseCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(line);
    if (m && m[2] !== 'total') counts.set(m[2]!, Number(m[1]));
  }
  return counts;
}

export async function runSyscalls(): Promise<void> {
  if (spawnSync('strace', ['-V']).error) { console.log('\n## syscalls — skipped: strace is not installed'); return; }
  const dir = mkdtempSync(join(tmpdir(), 'gw-syscalls-'));
  const servers = await startServers('minimal');
  const per: Record<string, Map<string, number>> = {};
  try {
    const targets = targetsFor(responsesStream, servers);
    for (const name of ['bare proxy', 'gateway'] as const) {
      const t = targets[name];
      const clients = Array.from({ length: CONNECTIONS }, () => new Client(t.url, { pipelining: 1 }));
      const send = (n: number): Promise<unknown> => Promise.all(clients.map(async (client) => {
        for (let i = 0; i < n / CONNECTIONS; i++) {
          const res = await client.request({ method: 'POST', path: t.path, headers: t.headers, body: t.body });
          await res.body.arrayBuffer();
        }
      }));
      await send(WARMUP);
      const out = join(dir, name.replace(' ', '-'));
      const pid = name === 'gateway' ? servers.gateway.pid : servers.bare.pid;
      const strace = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', out], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, 1_000));   // attached to every thread
      await send(N);
      await new Promise((r) => setTimeout(r, 300));     // the last log line's write
      strace.kill('SIGINT');
      await new Promise((r) => strace.once('exit', r));
      await Promise.all(clients.map((c) => c.close()));
      per[name] = parseCounts(readFileSync(out, 'utf8'));
    }
  } finally {
    await stopServers(servers);
    rmSync(dir, { recursive: true, force: true });
  }
  const names = [...new Set([...per['bare proxy']!.keys(), ...per.gateway!.keys()])]
    .map((s) => [s, (per['bare proxy']!.get(s) ?? 0) / N, (per.gateway!.get(s) ?? 0) / N] as const)
    .filter(([, b, g]) => b >= 0.05 || g >= 0.05)
    .sort((a, b) => b[2] - a[2]);
  const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0) / N;
  console.log(`\n## syscalls — per request, ${CONNECTIONS === 1 ? 'one connection' : `${CONNECTIONS} connections`}, ${N} responses-stream requests (strace -c -f; futex counts thread hand-offs)`);
  printTable(['syscall', 'bare proxy', 'gateway'], [
    ...names.map(([s, b, g]) => [s, fixed(b, 2), fixed(g, 2)]),
    ['all', fixed(total(per['bare proxy']!), 2), fixed(total(per.gateway!), 2)],
  ]);
}

if (isMain(import.meta.url)) runSyscalls().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
