// Where a process's CPU goes, by part of the request path: reads a V8 .cpuprofile (from
// BENCH_CPU_PROF_DIR) and gives each sample to the part of the first frame, from the leaf up, that
// belongs to one (a JSON.parse called from body.ts is body parsing; a writev called from node's
// http is sockets and node http, which every proxy pays; a Buffer method is its caller's: the
// 225 KB toString of a coding agent's body is body parsing). Module loading at start is left out.
// `npx tsx bench/where-time-goes.ts FILE.cpuprofile [REQUESTS]` — with REQUESTS, also µs/request.
import { readFileSync } from 'node:fs';
import { isMain } from './processes.ts';
import { fixed, printTable } from './report.ts';
import type { Locate } from './bundle.ts';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber?: number; columnNumber?: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

/** Parts of the request path, each with what marks its frames (URL substrings or a test). */
const PARTS: [string, (url: string, fn: string) => boolean][] = [
  ['module loading (start, excluded)', (u) => /modules\/esm|modules\/cjs|node_modules\/tsx|bootstrap\/realm/.test(u)],
  ['garbage collection', (_u, f) => f === '(garbage collector)'],
  ['machine (xstate)', (u) => u.includes('node_modules/xstate') || u.includes('lib/machine/')],
  ['logging (pino)', (u) => /node_modules\/(pino|sonic-boom|@pinojs)|lib\/log\.ts/.test(u)],
  ['metrics (prom-client)', (u) => u.includes('node_modules/prom-client') || u.includes('lib/metrics.ts')],
  ['usage records', (u) => u.includes('lib/usage/')],
  ['ledger (SQLite)', (u) => u.includes('lib/ledger/') || u.includes('better-sqlite3')],
  ['validation (ajv + rules)', (u) => u.includes('node_modules/ajv') || /lib\/routing\/(validate|start-within)\.ts/.test(u)],
  ['planning + flex policy', (u) => /lib\/routing\/(plan|flex-policy|survival|flex-slots|lead)\.ts/.test(u)],
  ['auth + abuse limits', (u, f) => /lib\/(http\/auth|store|limits)\//.test(u) || u.includes('lib/http/auth.ts') || (u.includes('crypto') && /Hash|digest|update/.test(f))],
  ['request body parsing', (u) => u.includes('lib/http/body.ts')],
  ['request translation + serialization', (u) => /lib\/providers\/|request-(en|de)code\.ts/.test(u)],
  ['usage parsing (taps, SSE scan)', (u) => /\/tap\.ts|sse-scan\.ts|lib\/stream\/sse\.ts/.test(u)],
  ['stream translation (decode/encode)', (u) => /stream-(en|de)code\.ts|formats\/collect\.ts|formats\/\w+\/(response|usage|ids)\.ts|cost-extras\.ts/.test(u)],
  ['pricing', (u) => u.includes('lib/catalog/')],
  ['upstream call (undici)', (u) => u.includes('node_modules/undici') || u.includes('lib/stream/attempt.ts') || u.startsWith('wasm://')],
  ['responding (our code)', (u) => /lib\/stream\/respond\.ts|lib\/formats\/[a-z]+\/errors\.ts|lib\/http\/reply\.ts/.test(u)],
  ['pipeline + server glue', (u) => /lib\/http\/(pipeline|server)\.ts|lib\/app\.ts|bench\//.test(u)],
  ['sockets + node http (every proxy pays)', (u, f) => /node:(net|_http|internal\/(stream_base|streams|http|timers|process|event_target|abort|async)|events|stream)/.test(u) || /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeString|onStreamRead|runMicrotasks)$/.test(f)],
];
export const OTHER = 'other (native, node internals)';
export const LOADING = PARTS[0]![0];

/** The part a frame belongs to, if any (by its script's URL or path, and its function's name). */
export function partOf(url: string, functionName: string): string | undefined {
  return PARTS.find(([, test]) => test(url, functionName))?.[0];
}

/** `locate` names the source file of a bundled script's function (bundle.ts bundleLocator): a
 *  profile of the gateway's bundle then splits by `lib/` file as one of the gateway under tsx. */
export function whereTimeGoes(file: string, locate?: Locate): Map<string, number> {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const partById = new Map<number, string>();
  const classify = (id: number): string => {
    const known = partById.get(id);
    if (known) return known;
    const n = byId.get(id)!;
    const { url, functionName, lineNumber = 0, columnNumber = 0 } = n.callFrame;
    const hit = partOf(locate ? locate(url, lineNumber, columnNumber) : url, functionName);
    const up = parent.get(id);
    const part = hit ?? (up === undefined ? OTHER : classify(up));
    partById.set(id, part);
    return part;
  };
  const us = new Map<string, number>();
  p.samples.forEach((id, i) => {
    if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    const part = classify(id);
    us.set(part, (us.get(part) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return us;
}

export function printWhereTimeGoes(file: string, requests?: number, locate?: Locate): void {
  const us = whereTimeGoes(file, locate);
  us.delete(LOADING);
  const total = [...us.values()].reduce((a, b) => a + b, 0);
  const rows = [...us].sort((a, b) => b[1] - a[1]).map(([part, t]) => [
    part, `${fixed((100 * t) / total, 1)} %`, requests ? fixed(t / requests, 1) : '-',
  ]);
  printTable(['part of the request path', 'share of CPU', 'µs/request'], rows);
}

if (isMain(import.meta.url)) {
  const [file, requests] = process.argv.slice(2);
  if (!file) throw new Error('usage: where-time-goes.ts FILE.cpuprofile [REQUESTS]');
  printWhereTimeGoes(file, requests ? Number(requests) : undefined);
}
