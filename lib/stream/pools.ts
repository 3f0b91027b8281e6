// One undici Pool per upstream origin, keep-alive, created on first use and reused (no TCP and TLS
// handshake per request).
import { Pool } from 'undici';

export class Pools {
  private readonly pools = new Map<string, Pool>();
  constructor(private readonly connections = 256) {}

  get(origin: string): Pool {
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, { connections: this.connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
      this.pools.set(origin, p);
    }
    return p;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.destroy()));
    this.pools.clear();
  }
}
