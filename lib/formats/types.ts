import type { FormatName, IREvent, IRRequest, IRResponse, IRUsage, CostExtras, Tier } from '../ir.ts';
import type { SSEFrame } from '../sse.ts';

export type { SSEFrame };

/** What an encoder needs to know about the response it writes. */
export interface EncodeContext {
  id: string;            // response id to present (format-appropriate prefix chosen by the encoder if empty)
  model: string;         // model id to present to the caller
  createdAt: number;     // epoch seconds
  tier: Tier;            // tier that served (a format reports it where it has a field for it)
  /** Chat only: stream_options.include_usage was set, so a final choices:[] usage chunk is sent. */
  includeUsage?: boolean;
}

/** Incremental decoder of a provider stream (frames → IR events). Stateful, one per stream. */
export interface StreamDecoder {
  push(frame: SSEFrame): IREvent[];
  /** Called once the upstream body ended; returns trailing events (e.g. a finish the wire implied). */
  end(): IREvent[];
}

/** Incremental encoder of a caller stream (IR events → SSE text). Stateful, one per stream. */
export interface StreamEncoder {
  push(event: IREvent): string;
}

/** Reads usage off the one frame that carries it, for a passthrough stream (bytes untouched). */
export interface UsageTap {
  /** Byte strings one of which every frame that carriesUsage() accepts contains: a passthrough
   *  finds candidate frames with a native substring search and decodes only those. */
  markers: string[];
  /** Where the usage frame repeats bulk the tap does not read (`"output":[` in Responses): a
   *  passthrough that only reads usage parses the frame with that value emptied. */
  bulk?: string;
  /** Cheap test (event name, or a substring) — true when this frame may carry usage or the tier. */
  carriesUsage(frame: SSEFrame): boolean;
  /** Parse that frame's data; merge what it says into `acc` (overwrite, never add). */
  read(data: any, acc: TapState): void;
  /** Frame data with usage.cost / usage.routing added (and input/output token names the spec
   *  asks for), serialised; only called on the frame that carries the final usage. */
  inject(data: any, extras: CostExtras): string;
  /** True when this frame is the final usage frame (the one inject() rewrites). */
  isFinal(frame: SSEFrame, data: any): boolean;
}

export interface TapState { usage: IRUsage; tier?: Tier; sawUsage: boolean }

export interface FormatCodec {
  name: FormatName;
  /** Caller body (gateway fields already removed) → IR. Throws GatewayError on bad shapes. */
  decodeRequest(body: Record<string, any>): IRRequest;
  /** IR → provider body (without stream/tier/model-in-URL concerns; adapters add those). */
  encodeRequest(ir: IRRequest): Record<string, any>;
  /** Non-streamed provider body → IR. */
  decodeResponse(body: any): IRResponse;
  /** IR → non-streamed caller body (with usage.cost / usage.routing when ir.extras is set). */
  encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, any>;
  createStreamDecoder(): StreamDecoder;
  createStreamEncoder(ctx: EncodeContext): StreamEncoder;
  tap: UsageTap;
}
