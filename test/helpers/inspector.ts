// A process's V8 inspector, driven from outside (Chrome DevTools protocol over WebSocket): a test
// can make a gateway process collect its garbage before reading its resident memory, with no hook
// in the gateway itself.
import { readFileSync } from 'node:fs';
import { WebSocket } from 'undici';

export interface Inspector {
  /** A full, synchronous garbage collection in the inspected process. */
  collectGarbage(): Promise<void>;
  /** process.memoryUsage() of the inspected process. */
  memoryUsage(): Promise<NodeJS.MemoryUsage>;
  close(): void;
}

export async function connectInspector(url: string): Promise<Inspector> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true });
  });
  let next = 1;
  const pending = new Map<number, (reply: Reply) => void>();
  ws.addEventListener('message', (e) => {
    const reply = JSON.parse(String(e.data)) as Reply;
    if (reply.id === undefined) return;
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  const call = (method: string, params?: object): Promise<Reply['result']> => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, (reply) => (reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result)));
    ws.send(JSON.stringify({ id, method, params }));
  });
  return {
    collectGarbage: async () => { await call('HeapProfiler.collectGarbage'); },
    memoryUsage: async () => {
      const r = await call('Runtime.evaluate', { expression: 'process.memoryUsage()', returnByValue: true });
      return r!.result!.value as NodeJS.MemoryUsage;
    },
    close: () => ws.close(),
  };
}

interface Reply { id?: number; error?: { message: string }; result?: { result?: { value?: unknown } } }

/** Resident memory of a process (Linux), in bytes. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) * 1024;
}
