// Decoding helpers for codec tests: a whole recorded stream through a codec's decoder, and the
// IR events collected into one response.
import { ResponseCollector } from '../../lib/formats/collect.ts';
import type { FormatCodec, SSEFrame } from '../../lib/formats/types.ts';
import type { IREvent, IRResponse } from '../../lib/ir.ts';

export function collect(events: IREvent[]): IRResponse {
  const c = new ResponseCollector();
  for (const e of events) c.push(e);
  return c.result();
}

/** Every frame through a fresh decoder, then end(); the events and the response they make. */
export function decodeAll(codec: FormatCodec, frames: SSEFrame[]): { events: IREvent[]; res: IRResponse } {
  const decoder = codec.createStreamDecoder();
  const events = [...frames.flatMap((f) => decoder.push(f)), ...decoder.end()];
  return { events, res: collect(events) };
}
