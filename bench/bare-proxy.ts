// The baseline a gateway is compared with: a pass-through proxy that does only what any proxy
// must — node:http in, one keep-alive undici Pool out, method/path/headers/body forwarded and the
// response body streamed back as it arrives — with no parsing at all. Run as a child by
// forkServer (processes.ts): `bare-proxy.ts UPSTREAM_URL`.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { isMain, serveAsChild, type Served } from './processes.ts';

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not to the message; undici
// refuses most of them outright. `host` is the upstream's own.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'expect']);

function endToEnd(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const v = headers[name];
    if (v !== undefined && !HOP_BY_HOP.has(name)) out[name] = v;
  }
  return out;
}

export async function startBareProxy(upstream: string, port = 0): Promise<Served> {
  // Same pool shape as the gateway's (lib/stream/pools.ts), so the comparison is like for like.
  const pool = new Pool(upstream, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
  // BENCH_BARE_BUSY_US: spin this long per request first, so that the bare proxy serves about the
  // gateway's rate (bench/README.md, "Where the time goes, per scenario"). 0 in `make bench`.
  const busyUs = Number(process.env.BENCH_BARE_BUSY_US ?? 0);
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    if (busyUs > 0) spin(busyUs);
    forward(pool, req, res).catch(() => {
      if (!res.headersSent) { res.writeHead(502); res.end(); } else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    async close() {
      server.close();
      server.closeAllConnections();
      await pool.destroy();
    },
  };
}

function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/** undici's stream(): the response goes straight into `res` (no intermediate Readable, no
 *  pipeline(), whose per-call AbortController costs a DOMException on every finish). A client
 *  that goes away destroys `res`, which aborts the upstream request. */
function forward(pool: Pool, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  return pool.stream(
    { method: req.method as 'POST', path: req.url ?? '/', headers: endToEnd(req.headers), body: req, opaque: res },
    ({ statusCode, headers, opaque }) => {
      const out = opaque as ServerResponse;
      out.writeHead(statusCode, endToEnd(headers));
      return out;
    },
  );
}

if (isMain(import.meta.url)) {
  const upstream = process.argv[2];
  if (!upstream) throw new Error('usage: bare-proxy.ts UPSTREAM_URL');
  serveAsChild(() => startBareProxy(upstream));
}
