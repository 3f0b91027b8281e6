// Where the memory of an open stream goes (bench/README.md "Memory per open stream"): the gateway
// child (the bundle, as open-streams.ts runs it) holds BENCH_HEAP_STREAMS (300) Responses streams
// that the simulator paces at 20 tokens/s (60 s each); its V8 heap is read through the inspector
// (no hook in the gateway) idle and with every stream open, after a full collection each time.
// Printed per open stream: process.memoryUsage() deltas, then the new heap objects claimed by a
// breadth-first walk from each kind of per-stream root in turn (ours: the attempt, the xstate
// actor, the suspended async functions; then node's sockets and http objects, and undici's), never
// entering objects that existed when idle or another root — a stand-in for retained size. RSS is
// open-streams.ts's measure (a heap snapshot grows the process it is taken of).
import { Agent, request } from 'undici';
import { connectInspector } from './inspector.ts';
import { forkServer, isMain } from './processes.ts';
import { bundledChild, startFlags } from './bundle.ts';
import { agentBodyWith } from './agent-body.ts';

const STREAMS = Number(process.env.BENCH_HEAP_STREAMS ?? 300);
// Ours first (a walk never enters another root, so node's and undici's objects stay theirs; what
// only node's objects reach, such as a listener we put on the response, counts as theirs).
const ROOTS = ['UpstreamCall', 'Actor', 'Generator', 'Socket', 'ServerResponse', 'IncomingMessage', 'Client3', 'Request', 'Timeout'];
const TOP = 6;

interface Snapshot { ids: Set<number>; raw: HeapSnapshotJson }
interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** The request: a short prompt, or with BENCH_HEAP_BODY=agent a coding agent's 225 KB body
 *  (agent-body.ts), the directive in its last user text. */
function bodyOf(directive: string): Record<string, any> {
  if (process.env.BENCH_HEAP_BODY !== 'agent') return { model: 'gpt-5.4-mini', stream: true, start_within: 'now', input: `hi ${directive}` };
  return agentBodyWith(directive);
}

const pace = (tokens: number, perS: number): string => JSON.stringify({ output_tokens: tokens, tokens_per_s: perS });

/** The child's heap through its inspector: memory after a full GC, and heap snapshots. */
async function inspect(port: number) {
  const v8 = await connectInspector(port);
  let chunks: string[] = [];
  v8.on('HeapProfiler.addHeapSnapshotChunk', (params) => chunks.push(params.chunk));
  const call = v8.call;
  return {
    async memoryUsage(): Promise<NodeJS.MemoryUsage> {
      await call('HeapProfiler.collectGarbage');
      return (await call('Runtime.evaluate', { expression: 'process.memoryUsage()', returnByValue: true })).result.result.value;
    },
    async snapshot(): Promise<Snapshot> {
      chunks = [];
      await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      const raw = JSON.parse(chunks.join('')) as HeapSnapshotJson;
      chunks = [];
      const width = raw.snapshot.meta.node_fields.length;
      const idAt = raw.snapshot.meta.node_fields.indexOf('id');
      const ids = new Set<number>();
      for (let i = 0; i < raw.nodes.length; i += width) ids.add(raw.nodes[i + idAt]!);
      return { ids, raw };
    },
    close: () => v8.close(),
  };
}

/** A node's kind: its constructor for objects, its type in parentheses for the rest. */
function label(snap: HeapSnapshotJson, i: number): string {
  const f = snap.snapshot.meta.node_fields;
  const type = snap.snapshot.meta.node_types[0][snap.nodes[i + f.indexOf('type')]!]!;
  const name = snap.strings[snap.nodes[i + f.indexOf('name')]!]!;
  if (type === 'object' || type === 'closure' || type === 'native') return type === 'object' ? name : `(${type}) ${name.slice(0, 30)}`;
  if (type.includes('string')) return '(string)';
  return type === 'array' || type === 'hidden' ? `(${type}) ${name.slice(0, 30)}` : `(${type})`;
}

/** Bytes per stream of the new objects each root kind reaches first (see the header). */
function claimByRoots(before: Snapshot, after: Snapshot): Array<{ root: string; bytes: number; top: string }> {
  const snap = after.raw;
  const { node_fields: f, edge_fields: ef, edge_types: [etypes] } = snap.snapshot.meta;
  const width = f.length;
  const ew = ef.length;
  const [iid, isize, iec] = [f.indexOf('id'), f.indexOf('self_size'), f.indexOf('edge_count')];
  const [eto, etype] = [ef.indexOf('to_node'), ef.indexOf('type')];
  const count = snap.nodes.length / width;
  const firstEdge = new Int32Array(count + 1);
  for (let k = 0, e = 0; k < count; k++) { e += snap.nodes[k * width + iec]! * ew; firstEdge[k + 1] = e; }
  const labels = Array.from({ length: count }, (_, k) => label(snap, k * width));
  const isNew = (k: number): boolean => !before.ids.has(snap.nodes[k * width + iid]!) && labels[k] !== '(code)';
  const claimed = new Uint8Array(count);
  const rows = ROOTS.map((root) => {
    const queue: number[] = [];
    for (let k = 0; k < count; k++) if (labels[k] === root && isNew(k) && !claimed[k]) { claimed[k] = 1; queue.push(k); }
    const byLabel = new Map<string, number>();
    for (let q = 0; q < queue.length; q++) {
      const k = queue[q]!;
      byLabel.set(labels[k]!, (byLabel.get(labels[k]!) ?? 0) + snap.nodes[k * width + isize]!);
      for (let e = firstEdge[k]!; e < firstEdge[k + 1]!; e += ew) {
        if (etypes[snap.edges[e + etype]!] === 'weak') continue;
        const to = snap.edges[e + eto]! / width;
        if (claimed[to] || !isNew(to) || ROOTS.includes(labels[to]!)) continue;
        claimed[to] = 1;
        queue.push(to);
      }
    }
    const bytes = [...byLabel.values()].reduce((a, b) => a + b, 0) / STREAMS;
    const top = [...byLabel].sort((x, y) => y[1] - x[1]).slice(0, TOP).map(([k, b]) => `${k} ${(b / STREAMS).toFixed(0)}`).join(', ');
    return { root, bytes, top };
  });
  let rest = 0;
  for (let k = 0; k < count; k++) if (!claimed[k] && isNew(k)) rest += snap.nodes[k * width + isize]!;
  rows.push({ root: '(reached from none)', bytes: rest / STREAMS, top: '' });
  return rows;
}

export async function runOpenStreamsHeap(): Promise<void> {
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const upstream = await forkServer('simulator', './simulator-child.ts');
  const gateway = await forkServer('gateway', await bundledChild('gateway-child'), [upstream.url], [...startFlags(), `--inspect=127.0.0.1:${port}`]);
  const inspector = await inspect(port);
  const agent = new Agent({ connections: STREAMS + 10, pipelining: 1 });
  try {
    const ask = (tokens: number, perS: number) => request(`${gateway.url}/v1/responses`, {
      method: 'POST', dispatcher: agent,
      headers: { authorization: `Bearer ${gateway.info.byokKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(bodyOf(`#sim${pace(tokens, perS)}`)),
    });
    await (await ask(5, 0)).body.text();
    const idle = await inspector.memoryUsage();
    const before = await inspector.snapshot();
    let started = 0;
    let allStarted!: () => void;
    const opened = new Promise<void>((r) => { allStarted = r; });
    const streams = Array.from({ length: STREAMS }, async () => {
      const res = await ask(1_200, 20);
      let first = true;
      try {
        for await (const _ of res.body) if (first) { first = false; if (++started === STREAMS) allStarted(); }
      } catch { /* cut when the bench stops */ }
    });
    await Promise.race([opened, Promise.all(streams)]);
    const open = await inspector.memoryUsage();
    const rows = claimByRoots(before, await inspector.snapshot());
    const kib = (a: number, b: number): string => ((b - a) / STREAMS / 1024).toFixed(1);
    console.log(`\n## open-streams-heap — ${STREAMS} open streams, per stream (KiB, after a full GC): `
      + `heapUsed ${kib(idle.heapUsed, open.heapUsed)}, external ${kib(idle.external, open.external)}, `
      + `arrayBuffers ${kib(idle.arrayBuffers, open.arrayBuffers)}`);
    for (const r of rows) console.log(`${r.bytes.toFixed(0).padStart(6)} B  ${r.root.padEnd(20)} ${r.top}`);
  } finally {
    inspector.close();
    await agent.destroy();
    await gateway.stop();
    await upstream.stop();
  }
}

if (isMain(import.meta.url)) {
  runOpenStreamsHeap().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
}
