// One upstream attempt: send the request through the origin's pool and wait for the commit point
// (design.md "Commit"): a 200 and the first complete event. Before commit a failure is classified
// for retry/fallback; at commit the attempt hands over a Committed stream the responder drains.
import type { Dispatcher } from 'undici';
import type { FormatName, RouteName, Tier } from '../ir.ts';
import type { Failure, Framer, RouteAdapter, UpstreamRequest } from '../providers/types.ts';
import type { Pools } from './pools.ts';
import { SSEParser, type RawFrame } from './sse.ts';
import { classify, connectionFailure } from './failure.ts';

export class AttemptFailed extends Error {
  constructor(readonly failure: Failure) { super(failure.message); }
}

export interface AttemptSpec {
  route: RouteName;
  tier: Tier;
  wire: FormatName;
  adapter: RouteAdapter;
  request: () => Promise<UpstreamRequest> | UpstreamRequest;
  /** false only on the "now" non-streamed fast path: commit at the 200, body is one JSON. */
  streamed: boolean;
}

export interface Committed {
  route: RouteName;
  tier: Tier;
  wire: FormatName;
  streamed: boolean;
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  /** Frames read before commit (at least the first event when streamed). */
  frames: RawFrame[];
  framer: Framer;
  /** The route frames bytes its own way (not SSE): raw frames are re-serialised SSE text. */
  reframed: boolean;
  /** The rest of the body. */
  rest: AsyncIterator<Buffer>;
  committedAt: number;
}

const MAX_ERROR_BODY = 64 * 1024;

export async function runAttempt(spec: AttemptSpec, pools: Pools, signal: AbortSignal, now: () => number): Promise<Committed> {
  let res: Dispatcher.ResponseData;
  try {
    const req = await spec.request();
    res = await pools.get(req.origin).request({ method: 'POST', path: req.path, headers: req.headers, body: req.body, signal });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new AttemptFailed(connectionFailure(err as Error));
  }
  if (res.statusCode !== 200) {
    const text = await readCapped(res.body).catch(() => '');
    throw new AttemptFailed(classify(res.statusCode, res.headers, text, spec.tier, now()));
  }
  const framer = spec.adapter.framer?.() ?? new SSEParser();
  const rest = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const frames: RawFrame[] = [];
  if (spec.streamed) {
    try {
      while (frames.length === 0) {
        const r = await rest.next();
        if (r.done) { frames.push(...framer.end()); if (frames.length === 0) throw new Error('stream ended before its first event'); break; }
        frames.push(...framer.push(r.value));
      }
    } catch (err) {
      res.body.destroy();
      if (signal.aborted) throw err;
      throw new AttemptFailed(connectionFailure(err as Error));
    }
  }
  return { route: spec.route, tier: spec.tier, wire: spec.wire, streamed: spec.streamed, status: 200, headers: res.headers, frames, framer, reframed: spec.adapter.framer !== undefined, rest, committedAt: now() };
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > MAX_ERROR_BODY) { body.destroy(); break; }
    parts.push(c);
  }
  return Buffer.concat(parts).toString('utf8');
}
