// A non-streamed Response built from vendor A's event stream for a Responses caller whose answer
// was streamed upstream (a flex race calls the provider streamed so it can commit on the first
// event). The terminal event (response.completed / response.incomplete) carries the whole
// response object, so that object is the body, as the official SDK's finalResponse() reads it:
// the provider's ids (the ones a later request names, in previous_response_id or as input items
// sent back with store:true), hosted tool items (web_search_call…), annotations, logprobs and the
// echoed request fields, none of which the IR has a shape for. The IR decoder runs beside it:
// usage, tier and failure are read as for every other assembled answer.
import type { IREvent, IRResponse } from '../../ir.ts';
import type { EncodeContext, NativeAssembler, SSEFrame, StreamDecoder } from '../types.ts';
import { isPlainObject } from '../../json-util.ts';
import { serviceTierOf } from '../openai-shared.ts';
import { responseId } from './ids.ts';
import { createResponsesStreamDecoder } from './stream-decode.ts';
import { usageToResponses } from './usage.ts';

/** The terminal events an answer's body comes from (response.failed is no body: a 502). */
const TERMINAL = new Set(['response.completed', 'response.incomplete']);
const DATA_ONLY_TERMINAL = /^\{"type":"response\.(completed|incomplete)"/;

/** The members of the terminal response the IR decoder reads once blocks have opened
 *  (stream-decode.ts TERMINAL), and all it is handed of it. */
const READ = ['id', 'model', 'status', 'incomplete_details', 'usage', 'service_tier'] as const;

export class ResponsesAssembler implements NativeAssembler {
  private readonly decoder: StreamDecoder = createResponsesStreamDecoder();
  /** The terminal event's response object: the body. */
  private final: Record<string, any> | undefined;
  /** The decoder opened an IR block (its own events streamed the output). */
  private opened = false;

  push(frame: SSEFrame): IREvent[] {
    if (!isTerminal(frame)) {
      const events = this.decoder.push(frame);
      if (!this.opened) this.opened = events.some((ev) => ev.type === 'block_start');
      return events;
    }
    // The terminal event repeats the request's instructions and tools and the whole output: it is
    // parsed once, here, and the decoder gets the few members it reads, re-serialised (a few
    // hundred bytes), instead of walking the bulk again. A stream whose items never streamed (a
    // body relayed as one event) has its output in no other event: the decoder gets the frame.
    let data: any;
    try { data = JSON.parse(frame.data); } catch { return this.decoder.push(frame); }
    const response = data?.response;
    this.keep(response);
    if (!isPlainObject(response) || !this.opened) return this.decoder.push(frame);
    const read: Record<string, unknown> = {};
    for (const name of READ) if (response[name] !== undefined) read[name] = response[name];
    return this.decoder.push({ event: frame.event, data: JSON.stringify({ type: data.type, response: read }) });
  }

  end(): IREvent[] {
    return this.decoder.end();
  }

  response(res: IRResponse, ctx: EncodeContext): Record<string, any> | undefined {
    const body = this.final;
    if (!body) return undefined;
    body.id ||= responseId(ctx.id);
    body.model ||= ctx.model;
    body.service_tier ??= serviceTierOf(ctx.tier);
    // What is charged is the IR's usage, read from this same object; stated only where it was not.
    if (!isPlainObject(body.usage)) body.usage = usageToResponses(res.usage, res.extras);
    return body;
  }

  /** The first terminal response that holds an output (the decoder reads nothing after it). */
  private keep(response: unknown): void {
    if (!this.final && isPlainObject(response) && Array.isArray(response.output)) this.final = response;
  }
}

function isTerminal(frame: SSEFrame): boolean {
  if (frame.event !== undefined) return TERMINAL.has(frame.event);
  // Data-only framing (not what vendor A sends): the type leads the payload.
  return DATA_ONLY_TERMINAL.test(frame.data);
}
