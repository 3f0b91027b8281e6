// A child process's V8 inspector (Chrome DevTools protocol over WebSocket), for the benchmarks that
// read a heap from outside the process (open-streams-heap.ts, scavenge-survivors.ts): the child is
// started with `--inspect=127.0.0.1:PORT`.
import { WebSocket } from 'undici';

export interface InspectorClient {
  /** One protocol method; resolves with its reply (`result`, or `error`). */
  call(method: string, params?: object): Promise<{ result?: any; error?: { message: string } }>;
  /** Every event the process sends with this method name (e.g. a heap snapshot's chunks). */
  on(method: string, listener: (params: any) => void): void;
  close(): void;
}

export async function connectInspector(port: number): Promise<InspectorClient> {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((r) => ws.addEventListener('open', r, { once: true }));
  let next = 1;
  const pending = new Map<number, (reply: any) => void>();
  const listeners = new Map<string, (params: any) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data));
    if (m.method !== undefined) listeners.get(m.method)?.(m.params);
    else if (m.id !== undefined) { pending.get(m.id)?.(m); pending.delete(m.id); }
  });
  return {
    call: (method, params) => new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    }),
    on: (method, listener) => { listeners.set(method, listener); },
    close: () => ws.close(),
  };
}
