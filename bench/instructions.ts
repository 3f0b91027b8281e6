// Instructions per request, counted by valgrind (callgrind): a count does not move with whatever
// else the machine is doing, so a change of a few percent shows where timings on this shared 2-core
// host swing by 30 %. The bare proxy and the gateway each run alone under callgrind (both
// bundled, on plain node with the same flags as in the throughput scenarios); the minimal upstream
// runs natively. After a warm-up (the JIT settles), the counters are zeroed, N requests are sent
// over C keep-alive connections, and the counters are dumped: instructions / N. Under callgrind a
// process runs ≈ 50× slower, so N is small and the run takes a few minutes. Not part of `make bench`:
// `npx tsx bench/instructions.ts`; BENCH_INSTR_N (2,000), BENCH_INSTR_WARMUP (3,000),
// BENCH_INSTR_CONNECTIONS (10), BENCH_INSTR_SCENARIO (responses-stream, or any throughput scenario).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { forkServer, isMain, type ServerProcess } from './processes.ts';
import { targetsFor } from './harness.ts';
import { bundledChild, envFlags, startFlags } from './bundle.ts';
import { MINIMAL_SCENARIOS as SCENARIOS } from './minimal.ts';
import { printTable, fixed } from './report.ts';

const N = Number(process.env.BENCH_INSTR_N ?? 2_000);
const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 3_000);
const CONNECTIONS = Number(process.env.BENCH_INSTR_CONNECTIONS ?? 10);
const SCENARIO = process.env.BENCH_INSTR_SCENARIO ?? 'responses-stream';

/** callgrind_control on a running process: -z zeroes its counters, -d dumps them. */
function control(pid: number, flag: '-z' | '-d'): void {
  const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${r.stderr || r.stdout}`);
}

/** The instructions of the last dump in `dir` (its `totals:` line). */
function lastDumpTotal(dir: string): number {
  const dumps = readdirSync(dir).filter((f) => /\.\d+$/.test(f)).sort();
  const text = readFileSync(join(dir, dumps.at(-1)!), 'utf8');
  const m = /^(?:totals|summary): (\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in ${dumps.at(-1)}`);
  return Number(m[1]);
}

export async function runInstructions(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) { console.log('\n## instructions — skipped: valgrind is not installed'); return; }
  const scenario = SCENARIOS.find((s) => s.name === SCENARIO);
  if (!scenario) throw new Error(`unknown scenario ${SCENARIO}: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const upstream = await forkServer('minimal upstream', './minimal-upstream.ts');
  const perRequest: Record<string, number> = {};
  try {
    for (const name of ['bare proxy', 'gateway'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'gw-instr-'));
      const wrap = ['valgrind', '-q', '--tool=callgrind', `--callgrind-out-file=${join(dir, 'cg')}`];
      const child: ServerProcess = name === 'gateway'
        ? await forkServer(name, await bundledChild('gateway-child'), [upstream.url], startFlags(), wrap)
        : await forkServer(name, await bundledChild('bare-proxy'), [upstream.url], envFlags('BENCH_BARE_FLAGS'), wrap);
      try {
        const servers = { upstream, bare: child, gateway: child, kind: 'minimal' as const };
        const t = targetsFor(scenario, servers)[name];
        const clients = Array.from({ length: CONNECTIONS }, () => new Client(t.url, { pipelining: 1 }));
        const send = (n: number): Promise<unknown> => Promise.all(clients.map(async (client) => {
          for (let i = 0; i < n / CONNECTIONS; i++) {
            const res = await client.request({ method: 'POST', path: t.path, headers: t.headers, body: t.body });
            const text = await res.body.text();
            if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${text.slice(0, 200)}`);
          }
        }));
        await send(WARMUP);
        control(child.pid, '-z');
        await send(N);
        control(child.pid, '-d');
        await Promise.all(clients.map((c) => c.close()));
        perRequest[name] = lastDumpTotal(dir) / N;
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
  console.log(`\n## instructions — ${SCENARIO}, per request (callgrind; ${N} requests over ${CONNECTIONS} connections after ${WARMUP} to warm up)`);
  printTable(['target', 'instructions / request', 'vs bare proxy'], [
    ['bare proxy', fixed(bare, 0), '×1.00'],
    ['gateway', fixed(gateway, 0), `×${fixed(gateway / bare, 2)}`],
  ]);
}

if (isMain(import.meta.url)) runInstructions().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
