// Where each proxy's CPU goes, sampled by the kernel (`perf record`) instead of V8's profiler: the
// gateway runs as production does (the esbuild bundle, `npm start`'s flags, no profiler inside
// it), and every thread is counted, the kernel's work in system calls and V8's helper threads
// (parallel scavenges, concurrent marking, the optimizing compiler) included. A JIT frame is
// named through node's `--perf-basic-prof` map and placed in its source file through a source
// map of the same bundle (bundle.ts); each main-thread sample then goes to a part of the request
// path as in where-time-goes.ts. Kernel and garbage-collection samples are parts of their own,
// whatever called them. Not part of `make bench` (it needs perf, and root or perf_event_paranoid ≤ 1):
// `npx tsx bench/perf-where.ts [scenario]` (default responses-stream; one round unless
// BENCH_ROUNDS says otherwise; BENCH_PERF_KEEP=1 keeps perf.data and node's
// /tmp/perf-PID.map files). Figures are µs of CPU per request served in the recorded run, its
// warm-ups included, after a first run that warms every target.
// TurboFan inlines small functions into their callers, and perf sees only the caller's frame: a
// part's figure holds what its functions inlined from other parts. V8's own profiler
// (where-time-goes.ts) names inlined functions, but from inside the process: it sees neither the
// kernel nor V8's helper threads.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleLocator, type Locate } from './bundle.ts';
import { isMain } from './processes.ts';
import { runScenarios, servedBy, startServers, stopServers, type Servers } from './harness.ts';
import { MINIMAL_SCENARIOS } from './minimal.ts';
import { LOADING, OTHER, partOf } from './where-time-goes.ts';
import { fixed, printTable } from './report.ts';

interface Frame { sym: string; dso: string }
interface Sample { pid: number; tid: number; frames: Frame[] }

/** One sample per 250 µs of a thread's CPU (perf's cpu-clock timer, a fixed period). */
const PERIOD_US = 250;
const WAKING = 'kernel: waking another process (a reader of what was written)';
const KERNEL = 'kernel: system calls, TCP, page faults';
const GC = 'garbage collection';
const HELPER_GC = 'helper threads: garbage collection';
const HELPER_JIT = 'helper threads: optimizing compiler';
const HELPER_OTHER = 'helper threads: other';

const NODE_HTTP = 'sockets + node http (every proxy pays)';
const NODE_IO = /^(node::(\(anonymous namespace\)::Parser|StreamBase|LibuvStreamWrap|EmitToJSStreamListener|TCPWrap|ConnectionWrap)|llhttp__|uv__|uv_run|epoll_pwait)/;
const GC_FRAME = /v8::internal::(Heap::(CollectGarbage|PerformGarbageCollection)|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkCompact|IncrementalMarking|ConcurrentMarking|Sweeper|MinorGCJob|MemoryAllocator::Unmapper|GlobalHandles::(Post|Invoke))/;
const WAKE_FRAME = /^(sock_def_readable|ep_poll_callback|try_to_wake_up|__wake_up(_common|_sync_key)?)$/;

/** `perf script -F pid,tid,ip,sym,dso`'s text: a header line per sample (`pid/tid`), then one
 *  line per frame, leaf first (`ip symbol (dso)`), then a blank line. */
export function parsePerfScript(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim());
    const head = /^\s*\S*?\s*(\d+)\/(\d+)\s/.exec(lines[0] ?? '');
    if (!head) continue;
    const frames: Frame[] = [];
    for (const line of lines.slice(1)) {
      const t = line.trim();
      const open = t.lastIndexOf(' (');
      const body = open === -1 ? t : t.slice(0, open);
      const dso = open === -1 ? '' : t.slice(open + 2, -1);
      frames.push({ sym: body.replace(/^[0-9a-f]+\s+/, '').replace(/\+0x[0-9a-f]+$/, ''), dso });
    }
    samples.push({ pid: Number(head[1]), tid: Number(head[2]), frames });
  }
  return samples;
}

function frameKey(f: Frame, locate: Locate): { url: string; fn: string } {
  // A script is named by URL (file:, node:) or, for a CommonJS module, by its path.
  const js = /^JS:[*~^+]?(.*?) ?((?:file:|node:|\/)[^\s]*?):(\d+):(\d+)$/.exec(f.sym);
  // perf's maps count lines and columns from 1.
  if (js) return { url: locate(js[2]!, Number(js[3]) - 1, Number(js[4]) - 1), fn: js[1]! };
  // undici's HTTP parser is WebAssembly; node's own is C++ (llhttp in the node binary).
  if (/^JS:(wasm-function|wasm-to-js|js-to-wasm)/.test(f.sym)) return { url: 'wasm://undici', fn: f.sym };
  return { url: '', fn: f.sym };
}

/** Each sample's part: the main thread's by where-time-goes' parts (kernel and GC samples apart),
 *  the helper threads' by what they do. */
export function partOfSample(s: Sample, locate: Locate): string {
  const syms = s.frames.map((f) => f.sym);
  const isGc = syms.some((x) => GC_FRAME.test(x));
  if (s.tid !== s.pid) {
    if (isGc) return HELPER_GC;
    if (syms.some((x) => x.includes('compiler::') || x.includes('OptimizedCompilationJob'))) return HELPER_JIT;
    return HELPER_OTHER;
  }
  if (isGc) return GC;
  if (s.frames[0]?.dso === '[kernel.kallsyms]') return syms.some((x) => WAKE_FRAME.test(x)) ? WAKING : KERNEL;
  for (const f of s.frames) {
    const { url, fn } = frameKey(f, locate);
    const part = partOf(url, fn);
    if (part) return part;
  }
  // No script frame says whose work this is: node's C++ around the sockets (its HTTP parser, the
  // reads, the event loop) is what every proxy pays; V8 itself (calls into JavaScript, builtins,
  // microtasks) and malloc are other.
  for (const x of syms) {
    if (NODE_IO.test(x)) return NODE_HTTP;
    if (/^(Builtins_|JS:)/.test(x)) break;
  }
  return OTHER;
}

function perfWorks(): boolean {
  const probe = spawnSync('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', '--', 'true'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

export async function runPerfWhere(name = 'responses-stream'): Promise<void> {
  const scenario = MINIMAL_SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`unknown scenario ${name}: ${MINIMAL_SCENARIOS.map((s) => s.name).join(', ')}`);
  if (!perfWorks()) { console.log('\n## perf-where — skipped: `perf record` does not run here (install linux-perf; run as root or lower perf_event_paranoid)'); return; }
  process.env.BENCH_ROUNDS ??= '1';
  const dir = mkdtempSync(join(tmpdir(), 'gw-perf-'));
  // --perf-basic-prof turns V8's code log on as well: it goes to the temporary folder.
  for (const v of ['BENCH_GATEWAY_FLAGS', 'BENCH_BARE_FLAGS']) {
    process.env[v] = `${process.env[v] ?? ''} --perf-basic-prof --logfile=${join(dir, `${v}.v8.log`)} --no-logfile-per-isolate`.trim();
  }
  let servers: Servers | undefined;
  try {
    const locate = await bundleLocator('gateway-child');
    servers = await startServers('minimal');
    // A first run, not recorded, warms every target: on a fresh process the optimizing compiler's
    // work, and code not yet optimized, would count for the requests measured.
    console.log('\n# warming every target (not recorded)');
    await runScenarios([scenario], 'minimal', servers, { durationS: 2 });
    const data = join(dir, 'perf.data');
    const pids = [servers.bare.pid, servers.gateway.pid];
    const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-c', String(PERIOD_US * 1000), '-g', '-p', pids.join(','), '-o', data], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));   // attached to every thread
    const results = await runScenarios([scenario], 'minimal', servers);
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
    const script = spawnSync('perf', ['script', '-i', data, '-F', 'pid,tid,ip,sym,dso'], { maxBuffer: 2 ** 31, encoding: 'utf8' });
    const samples = parsePerfScript(script.stdout);
    const served = { [servers.bare.pid]: servedBy(results, 'bare proxy'), [servers.gateway.pid]: servedBy(results, 'gateway') };
    const parts = new Map<string, Map<number, number>>();
    for (const s of samples) {
      const part = partOfSample(s, locate);
      if (part === LOADING) continue;
      const row = parts.get(part) ?? new Map<number, number>();
      row.set(s.pid, (row.get(s.pid) ?? 0) + PERIOD_US);
      parts.set(part, row);
    }
    const per = (part: string, pid: number): number => (parts.get(part)?.get(pid) ?? 0) / served[pid]!;
    const [bare, gateway] = pids as [number, number];
    const rows = [...parts.keys()].sort((a, b) => per(b, gateway) - per(a, gateway));
    const total = (pid: number, helpers: boolean): number =>
      rows.filter((p) => p.startsWith('helper threads') === helpers).reduce((a, p) => a + per(p, pid), 0);
    console.log(`\n## where the CPU goes, sampled by perf — ${scenario.name}; µs of CPU per request served (bare proxy ${served[bare]}, gateway ${served[gateway]} requests, warm-ups included)`);
    printTable(['part', 'bare proxy', 'gateway'], [
      ...rows.filter((p) => !p.startsWith('helper threads')).map((p) => [p, fixed(per(p, bare), 1), fixed(per(p, gateway), 1)]),
      ['main thread, all', fixed(total(bare, false), 1), fixed(total(gateway, false), 1)],
      ...rows.filter((p) => p.startsWith('helper threads')).map((p) => [p, fixed(per(p, bare), 1), fixed(per(p, gateway), 1)]),
      ['every thread', fixed(total(bare, false) + total(bare, true), 1), fixed(total(gateway, false) + total(gateway, true), 1)],
    ]);
  } finally {
    if (servers) await stopServers(servers);
    if (process.env.BENCH_PERF_KEEP) console.log(`# kept: ${dir}`); else rmSync(dir, { recursive: true, force: true });
    for (const pid of [servers?.bare.pid, servers?.gateway.pid]) if (pid && !process.env.BENCH_PERF_KEEP) rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}

if (isMain(import.meta.url)) runPerfWhere(process.argv[2]).then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
