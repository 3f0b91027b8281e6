// The minimal upstream: an OpenAI-style server that answers POST /v1/responses with fixed,
// pre-built bytes — one JSON body, or one SSE stream of 16 text deltas shaped like vendor A's —
// at almost no cost, so what a benchmark measures is the proxies in front of it, not the provider.
// It reads the request body (a proxy must send it) and looks only for `"stream":true` and
// `"service_tier":"flex"` in it. A request whose input carries `#paced` is paced instead: one
// delta every 50 ms (20 tokens/s) for `PACED_TOKENS` tokens, for the open-streams scenario.
// Run as a child by forkServer: `minimal-upstream.ts`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMain, serveAsChild, type Served } from './processes.ts';

export const DELTAS = 16;
export const PACED_TOKENS = 100;
export const PACED_MARK = '#paced';
const PACE_MS = 50;
const WORDS = ['Bench', 'marks', ' measure', ' what', ' a', ' proxy', ' adds', ' between', ' a', ' caller', ' and', ' its', ' provider', ' under', ' load', '.'];

function frame(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function responseObject(tier: 'default' | 'flex', status: string, text?: string, outputTokens = DELTAS): Record<string, unknown> {
  const done = status === 'completed';
  return {
    id: 'resp_bench0001', object: 'response', created_at: 1_760_000_000, status, model: 'gpt-5.4-mini',
    output: done ? [{ id: 'msg_bench0001', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }] : [],
    service_tier: done ? tier : 'auto',
    usage: done ? { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 + outputTokens } : null,
  };
}

function head(tier: 'default' | 'flex'): string {
  const created = responseObject(tier, 'in_progress');
  return frame('response.created', { sequence_number: 0, response: created })
    + frame('response.in_progress', { sequence_number: 1, response: created })
    + frame('response.output_item.added', { sequence_number: 2, output_index: 0, item: { id: 'msg_bench0001', type: 'message', status: 'in_progress', role: 'assistant', content: [] } })
    + frame('response.content_part.added', { sequence_number: 3, item_id: 'msg_bench0001', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
}

function delta(i: number, word: string): string {
  return frame('response.output_text.delta', { sequence_number: 4 + i, item_id: 'msg_bench0001', output_index: 0, content_index: 0, delta: word, logprobs: [] });
}

function tail(tier: 'default' | 'flex', text: string, n: number): string {
  const seq = 4 + n;
  return frame('response.output_text.done', { sequence_number: seq, item_id: 'msg_bench0001', output_index: 0, content_index: 0, text, logprobs: [] })
    + frame('response.content_part.done', { sequence_number: seq + 1, item_id: 'msg_bench0001', output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } })
    + frame('response.output_item.done', { sequence_number: seq + 2, output_index: 0, item: { id: 'msg_bench0001', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] } })
    + frame('response.completed', { sequence_number: seq + 3, response: responseObject(tier, 'completed', text, n) });
}

const TEXT = WORDS.join('');

function fixedStream(tier: 'default' | 'flex'): Buffer {
  return Buffer.from(head(tier) + WORDS.map((w, i) => delta(i, w)).join('') + tail(tier, TEXT, DELTAS));
}

const BODIES = {
  stream: { default: fixedStream('default'), flex: fixedStream('flex') },
  json: {
    default: Buffer.from(JSON.stringify(responseObject('default', 'completed', TEXT))),
    flex: Buffer.from(JSON.stringify(responseObject('flex', 'completed', TEXT))),
  },
};

const SSE_HEAD = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  if (req.method !== 'POST' || req.url !== '/v1/responses') { res.writeHead(404).end(); return; }
  const text = body.toString('latin1');
  const tier = text.includes('"service_tier":"flex"') ? 'flex' : 'default';
  const stream = text.includes('"stream":true');
  if (text.includes(PACED_MARK)) { void paced(res, tier); return; }
  if (stream) res.writeHead(200, SSE_HEAD).end(BODIES.stream[tier]);   // chunked, as providers send
  else res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODIES.json[tier].length }).end(BODIES.json[tier]);
}

/** One delta every PACE_MS: a long-lived stream whose cost is the open connection, not the bytes. */
async function paced(res: ServerResponse, tier: 'default' | 'flex'): Promise<void> {
  res.writeHead(200, SSE_HEAD);
  res.write(head(tier));
  let text = '';
  for (let i = 0; i < PACED_TOKENS; i++) {
    await new Promise((r) => setTimeout(r, PACE_MS));
    if (res.destroyed) return;
    const w = WORDS[i % WORDS.length]!;
    text += w;
    res.write(delta(i, w));
  }
  res.end(tail(tier, text, PACED_TOKENS));
}

export async function startMinimalUpstream(port = 0): Promise<Served> {
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => answer(req, res, parts.length === 1 ? parts[0]! : Buffer.concat(parts)));
  });
  server.maxConnections = 10_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    async close() { server.close(); server.closeAllConnections(); },
  };
}

if (isMain(import.meta.url)) serveAsChild(() => startMinimalUpstream());
