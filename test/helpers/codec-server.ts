// Tiny upstreams for codec tests: a real node:http server on port 0 that answers every request
// with what an encoder wrote, so an official SDK can be pointed at it and parse it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EncodeContext, FormatCodec } from '../../lib/formats/types.ts';
import type { IREvent, IRResponse } from '../../lib/ir.ts';

const servers: Server[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes every server these helpers started (register with `after`). */
export function closeCodecServers(): Promise<void> {
  return Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => undefined);
}

/** Serves one fixed body to every request; resolves to the base URL. */
export function serveFixed(body: string, contentType: string): Promise<string> {
  return listen(createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.writeHead(200, { 'content-type': contentType }); res.end(body); });
  }));
}

export type Scenario = { events: IREvent[] } | { response: IRResponse };

/** Answers each request with the current scenario: IR events through the codec's stream encoder
 *  (one write per event, like a live stream) or an IR response through its body encoder.
 *  `onRequest` sees each request's URL and parsed body. */
export function serveScenario(codec: FormatCodec, ctx: EncodeContext, scenario: () => Scenario, onRequest?: (url: string | undefined, body: any) => void): Promise<string> {
  return listen(createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      onRequest?.(req.url, JSON.parse(raw || '{}'));
      const s = scenario();
      if ('response' in s) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(codec.encodeResponse(s.response, ctx)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const enc = codec.createStreamEncoder(ctx);
      for (const ev of s.events) res.write(enc.push(ev));
      res.end();
    });
  }));
}
