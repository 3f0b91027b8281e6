// Reads a V8 .cpuprofile (from BENCH_CPU_PROF_DIR) and prints the functions with the most self
// time, the same grouped by file (node_modules packages as one entry each), and the functions with
// the most total (inclusive) time. Percentages are of the busy (non-idle) samples.
// `npx tsx bench/profile-top.ts FILE.cpuprofile [N]`
//
// tsx compiles each .ts file to one minified line, so V8 reports every function at line 1. The
// real line comes from the source map tsx keeps in its cache (the newest entry for that file).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount?: number; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const [file, count] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-top.ts FILE.cpuprofile [N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const total = [...selfUs].reduce((a, [id, us]) => a + (idleIds.has(id) ? 0 : us), 0);

const where = (n: Node): string => {
  const url = n.callFrame.url.replace(/^file:\/\//, '');
  if (!url) return '(native)';
  const local = url.startsWith('/') ? relative(process.cwd(), url) : url;
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(local);
  return pkg ? pkg[1]! : local;
};
const add = (m: Map<string, number>, k: string, v: number): void => { m.set(k, (m.get(k) ?? 0) + v); };
const fns = new Map<string, number>();
const files = new Map<string, number>();
const maps = tsxSourceMaps();
const label = (n: Node): string => {
  const { url: raw, lineNumber, columnNumber, functionName } = n.callFrame;
  const url = raw.replace(/^file:\/\//, '');
  let line = lineNumber + 1;
  const map = url.endsWith('.ts') ? maps.get(url) : undefined;
  if (map) line = (map.findEntry(lineNumber, columnNumber) as { originalLine?: number }).originalLine! + 1 || line;
  const loc = url ? `${url.startsWith('/') ? relative(process.cwd(), url) : url}:${line}` : '';
  return `${functionName || '(anonymous)'}  ${loc}`;
};
for (const [id, us] of selfUs) {
  if (idleIds.has(id)) continue;
  const n = byId.get(id)!;
  add(fns, label(n), us);
  add(files, where(n), us);
}
const top = (m: Map<string, number>, k: number): void => {
  for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, k)) {
    console.log(`${(100 * us / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
  }
};
// Inclusive time: each function counted once per stack (recursion does not double-count).
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
const inclusiveFiles = new Map<string, number>();
for (const [id, us] of selfUs) {
  if (idleIds.has(id)) continue;
  const seen = new Set<string>();
  const seenFiles = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at)!;
    const key = label(node);
    if (!seen.has(key)) { seen.add(key); add(inclusive, key, us); }
    const f = where(node);
    if (f !== '(native)' && !f.startsWith('node:') && !seenFiles.has(f)) { seenFiles.add(f); add(inclusiveFiles, f, us); }
  }
}
const n = Number(count ?? 30);
console.log(`# ${file}: ${(total / 1000).toFixed(0)} ms busy (idle excluded)\n# self time by function`);
top(fns, n);
console.log('\n# self time by file / package');
top(files, 20);
console.log('\n# total (inclusive) time by function');
top(inclusive, n);
console.log('\n# total (inclusive) time by project file / package (node internals left out)');
top(inclusiveFiles, 30);

/** Source maps of the files tsx compiled, by source path: the newest cache entry wins. */
function tsxSourceMaps(): Map<string, SourceMap> {
  const dir = join(tmpdir(), `tsx-${process.getuid?.() ?? 0}`);
  const newest = new Map<string, { mtime: number; map: unknown }>();
  let names: string[] = [];
  try { names = readdirSync(dir); } catch { return new Map(); }
  for (const name of names) {
    try {
      const path = join(dir, name);
      const entry = JSON.parse(readFileSync(path, 'utf8')) as { map?: { sources?: string[] } };
      const source = entry.map?.sources?.[0];
      if (!source) continue;
      const mtime = statSync(path).mtimeMs;
      if ((newest.get(source)?.mtime ?? -1) < mtime) newest.set(source, { mtime, map: entry.map });
    } catch { /* not a cache entry */ }
  }
  return new Map([...newest].map(([source, e]) => [source, new SourceMap(e.map as never)]));
}
