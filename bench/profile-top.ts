// Reads a V8 .cpuprofile (from BENCH_CPU_PROF_DIR) and prints the functions with the most self
// time, and the same grouped by file (node_modules packages as one entry each).
// `npx tsx bench/profile-top.ts FILE.cpuprofile [N]`
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const [file, count] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-top.ts FILE.cpuprofile [N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

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
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const url = n.callFrame.url.replace(/^file:\/\//, '');
  const loc = url ? `${url.startsWith('/') ? relative(process.cwd(), url) : url}:${n.callFrame.lineNumber + 1}` : '';
  add(fns, `${n.callFrame.functionName || '(anonymous)'}  ${loc}`, us);
  add(files, where(n), us);
}
const top = (m: Map<string, number>, k: number): void => {
  for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, k)) {
    console.log(`${(100 * us / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
  }
};
const n = Number(count ?? 30);
console.log(`# ${file}: ${(total / 1000).toFixed(0)} ms sampled\n# self time by function`);
top(fns, n);
console.log('\n# self time by file / package');
top(files, 20);
