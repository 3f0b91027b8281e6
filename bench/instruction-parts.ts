// The gateway's instructions per request, split by source file: the count of instructions.ts, each
// instruction placed where it ran. The gateway runs bundled under callgrind with
// `--dump-instr=yes` (a count per instruction address) and node's `--perf-basic-prof` (node writes
// /tmp/perf-PID.map, the address range of every function it compiles). Each address of JIT code is
// placed in its function through that map, the function in its `lib/` file (or package, or node
// module) through the bundle's source map (bundle.ts bundleLocator). A native function's count
// (V8's builtins and runtime, node's C++, libc) goes to its callers in proportion to what each
// call cost, up the call graph until it reaches JavaScript; "JIT?" holds what reached a caller the
// map does not name (V8 enters some functions by a jump, which callgrind does not see as a call).
// One connection, usage records held (BENCH_USAGE_HOLD=1), as instructions.ts counts; the total
// still spreads by ≈ 9 % between runs of one commit (bench/README.md, "One request's
// instructions, by file"), so read a row's change against that. Not part of `make bench`:
// `npx tsx bench/instruction-parts.ts` (≈ 3 minutes); BENCH_INSTR_N (2,000), BENCH_INSTR_WARMUP
// (3,000), BENCH_INSTR_SCENARIO (responses-stream), BENCH_PARTS_TOP (30 rows); BENCH_PARTS_FILE
// (a part of a file's name, e.g. `json-skip`) adds a table of that file's functions.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkServer, isMain } from './processes.ts';
import { countWindow, lastDump } from './instructions.ts';
import { targetsFor } from './harness.ts';
import { bundledChild, bundleLocator, startFlags, type Locate } from './bundle.ts';
import { MINIMAL_SCENARIOS } from './minimal.ts';
import { fixed, printTable } from './report.ts';

const N = Number(process.env.BENCH_INSTR_N ?? 2_000);
const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 3_000);
const SCENARIO = process.env.BENCH_INSTR_SCENARIO ?? 'responses-stream';
const TOP = Number(process.env.BENCH_PARTS_TOP ?? 30);
const FUNCTIONS_OF = process.env.BENCH_PARTS_FILE;

/** One function of node's perf map: its code's start, size and name. */
export interface MapEntry { start: number; size: number; name: string }

/** node's /tmp/perf-PID.map (`START SIZE NAME`, hexadecimal), sorted by start. */
export function readPerfMap(text: string): MapEntry[] {
  return text.split('\n').filter(Boolean).map((line) => {
    const [start, size, ...name] = line.split(' ');
    return { start: parseInt(start!, 16), size: parseInt(size!, 16), name: name.join(' ') };
  }).sort((a, b) => a.start - b.start);
}

/** The function whose code holds `address`; the latest compiled one where ranges were reused. */
export function functionAt(map: MapEntry[], address: number): string | undefined {
  let lo = 0;
  let hi = map.length - 1;
  let last = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map[mid]!.start <= address) { last = mid; lo = mid + 1; } else hi = mid - 1;
  }
  for (let i = last; i >= 0 && i > last - 64; i--) {
    const e = map[i]!;
    if (address < e.start + e.size) return e.name;
  }
  return undefined;
}

/** What a dump says: each function's own count, and each call's count from caller to callee. */
export interface DumpCounts { self: Map<string, number>; calls: Map<string, Map<string, number>>; total: number }

/** Reads a callgrind dump written with `--dump-instr=yes` (positions are instruction addresses,
 *  absolute or `+`/`-` relative to the last one, `*` for the same), one event (Ir). A function of
 *  code callgrind cannot name (JIT code: `0x…`) is named per address through `name`; others keep
 *  their names (a `'N` recursion suffix dropped). `calls` is keyed by callee, then caller. */
export function readDump(text: string, name: (fn: string, address: number) => string): DumpCounts {
  const names = new Map<string, string>();
  const self = new Map<string, number>();
  const calls = new Map<string, Map<string, number>>();
  const add = (m: Map<string, number>, k: string, v: number): void => { m.set(k, (m.get(k) ?? 0) + v); };
  const compressed = (rest: string): string => {
    const m = /^\((\d+)\)(?:\s+(.*))?$/.exec(rest.trim());
    if (!m) return rest.trim();
    if (m[2] !== undefined) names.set(m[1]!, m[2]);
    return names.get(m[1]!) ?? rest.trim();
  };
  let fn = '';
  let callee = '';
  let target = 0;
  let inCall = false;
  let last = 0;
  let total = 0;
  const position = (p: string): number =>
    p === '*' ? last : p[0] === '+' ? last + parseInt(p.slice(1), 16) : p[0] === '-' ? last - parseInt(p.slice(1), 16) : parseInt(p, 16);
  for (const line of text.split('\n')) {
    if (!line) continue;
    const c = line[0]!;
    if (c === '0' || c === '+' || c === '-' || c === '*') {
      const space = line.indexOf(' ');
      const address = position(line.slice(0, space));
      last = address;
      const count = Number(line.slice(space + 1));
      if (inCall) {
        inCall = false;
        const to = name(callee, target);
        const from = name(fn, address);
        if (to !== from) { let m = calls.get(to); if (!m) calls.set(to, m = new Map()); add(m, from, count); }
      } else {
        add(self, name(fn, address), count);
        total += count;
      }
    } else if (line.startsWith('fn=')) fn = compressed(line.slice(3));
    else if (line.startsWith('cfn=')) callee = compressed(line.slice(4));
    else if (line.startsWith('calls=')) { inCall = true; target = position(line.split(' ')[1] ?? '*'); }
  }
  return { self, calls, total };
}

/** A name for readDump: JIT code through the map ('JIT?' where it has no entry), the rest as is. */
export function namer(map: MapEntry[]): (fn: string, address: number) => string {
  return (fn, address) => (/^0x[0-9a-f]+('\d+)?$/.test(fn) ? functionAt(map, address) ?? 'JIT?' : fn.replace(/'\d+$/, ''));
}

const isJavaScript = (name: string): boolean => name.startsWith('JS:') || name.startsWith('RegExp:') || name === 'JIT?';

/** Where natives that no JavaScript called go: libuv's loop, node's C++ around its callbacks into
 *  JavaScript (callback scopes, async contexts), the server's C HTTP parser, V8's tasks. Their
 *  callers end at callgrind's root, `(below main)`, which callgrind records as called from JIT
 *  code (its shadow stack loses track where V8 switches stacks): passed up that call they made
 *  "JIT?" the largest row, and the one that moved most between runs (60k–150k per request). */
export const OUTSIDE_JS = 'outside JavaScript (event loop, node C++, V8 tasks)';
const ROOT = '(below main)';

/** Each JavaScript function's count: its own, and the natives it called, each native's count split
 *  among its callers by what their calls cost, passed up until it reaches JavaScript (natives left
 *  with no caller keep their own name; what reaches callgrind's root goes to OUTSIDE_JS). */
export function byJavaScript(counts: DumpCounts): Map<string, number> {
  const out = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number): void => { m.set(k, (m.get(k) ?? 0) + v); };
  let pending = new Map<string, number>();
  for (const [fn, n] of counts.self) {
    if (fn === ROOT) add(out, OUTSIDE_JS, n);
    else add(isJavaScript(fn) ? out : pending, fn, n);
  }
  for (let depth = 0; depth < 64 && pending.size; depth++) {
    const next = new Map<string, number>();
    for (const [fn, n] of pending) {
      const callers = counts.calls.get(fn);
      let sum = 0;
      if (callers) for (const v of callers.values()) sum += v;
      if (!callers || !sum) { add(out, fn, n); continue; }
      for (const [caller, v] of callers) {
        if (caller === ROOT) add(out, OUTSIDE_JS, (n * v) / sum);
        else add(isJavaScript(caller) ? out : next, caller, (n * v) / sum);
      }
    }
    pending = next;
  }
  for (const [fn, n] of pending) add(out, fn, n);
  return out;
}

/** A JavaScript function's name as the perf map gives it (`JS:*name url:line:column`, `*` or `~`
 *  for optimized or not), without its place: the name, or `(anonymous)`. */
export function functionName(name: string): string {
  const m = /^JS:[*~^]?(\S*)\s+\S+:\d+:\d+$/.exec(name);
  return m ? m[1] || '(anonymous)' : name;
}

/** A JavaScript function's file: its `lib/` file through the bundle's map, a package by name, a
 *  node module as node names it; other names as they are. */
export function fileOf(name: string, locate: Locate): string {
  const m = /^JS:\S*\s+(\S+):(\d+):(\d+)$/.exec(name);
  if (!m) return name;
  const source = locate(m[1]!, Number(m[2]) - 1, Number(m[3]) - 1);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (pkg) return pkg[1]!;
  const lib = /\/(lib\/.*)$/.exec(source);
  return lib ? lib[1]! : source;
}

export async function runInstructionParts(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) { console.log('\n## instruction parts — skipped: valgrind is not installed'); return; }
  const scenario = MINIMAL_SCENARIOS.find((s) => s.name === SCENARIO);
  if (!scenario) throw new Error(`unknown scenario ${SCENARIO}`);
  process.env.BENCH_USAGE_HOLD ??= '1';
  const upstream = await forkServer('minimal upstream', './minimal-upstream.ts');
  const dir = mkdtempSync(join(tmpdir(), 'gw-parts-'));
  try {
    const wrap = ['valgrind', '-q', '--tool=callgrind', '--separate-threads=yes', '--dump-instr=yes', '--dump-line=no', `--callgrind-out-file=${join(dir, 'cg')}`];
    const gateway = await forkServer('gateway', await bundledChild('gateway-child'), [upstream.url], [...startFlags(), '--perf-basic-prof', `--logfile=${join(dir, 'v8.log')}`, '--no-logfile-per-isolate'], wrap);
    const locate = await bundleLocator('gateway-child');
    try {
      await countWindow(gateway.pid, targetsFor(scenario, { upstream, bare: gateway, gateway, kind: 'minimal' }).gateway, WARMUP, N, 1);
      const map = readPerfMap(readFileSync(`/tmp/perf-${gateway.pid}.map`, 'utf8'));
      const counts = readDump(readFileSync(lastDump(dir).main, 'utf8'), namer(map));
      const files = new Map<string, number>();
      const functions = new Map<string, number>();
      for (const [fn, n] of byJavaScript(counts)) {
        const file = fileOf(fn, locate);
        files.set(file, (files.get(file) ?? 0) + n);
        if (FUNCTIONS_OF && file.includes(FUNCTIONS_OF)) {
          const key = `${functionName(fn)} (${file})`;
          functions.set(key, (functions.get(key) ?? 0) + n);
        }
      }
      console.log(`\n## instruction parts — ${SCENARIO}, the gateway's main thread, per request (callgrind; ${N} requests over one connection after ${WARMUP}; usage records held): ${fixed(counts.total / N, 0)} in all`);
      printTable(['where', 'instructions / request', 'share'], [...files].sort((a, b) => b[1] - a[1]).slice(0, TOP)
        .map(([file, n]) => [file, fixed(n / N, 0), `${fixed((100 * n) / counts.total, 1)} %`]));
      if (FUNCTIONS_OF) {
        console.log(`\n### the functions of files named *${FUNCTIONS_OF}*, natives they called included`);
        printTable(['function', 'instructions / request'], [...functions].sort((a, b) => b[1] - a[1])
          .map(([fn, n]) => [fn, fixed(n / N, 0)]));
      }
    } finally {
      await gateway.stop();
      rmSync(`/tmp/perf-${gateway.pid}.map`, { force: true });
    }
  } finally {
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) runInstructionParts().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
