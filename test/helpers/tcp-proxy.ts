// A TCP proxy the test can cut and restore: the gateways reach PostgreSQL through it, so "the
// database is unreachable for a few seconds" happens without touching the machine's server.
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones (reset at once) until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let down = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    if (down) { client.resetAndDestroy(); return; }
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) { open.add(s); s.on('close', () => open.delete(s)); s.on('error', () => {}); }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true;
      for (const s of open) s.resetAndDestroy();
    },
    restore() { down = false; },
    close: () => new Promise<void>((r) => { for (const s of open) s.destroy(); server.close(() => r()); }),
  };
}
