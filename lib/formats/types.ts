// What a codec provides: the one place that knows its wire format. A codec translates its format to
// and from the IR (requests, responses, streams), taps usage off a passthrough stream, and writes its
// error envelope and in-stream error event; a caller format's codec also has an endpoint (its path,
// schema, request rules, output-cap field, usage-frame filter). The floors above ask the codec and
// never name a format.
import type { IncomingHttpHeaders } from 'node:http';
import type { FormatName, IREvent, IRRequest, IRResponse, IRUsage, CostExtras } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';
import type { GatewayError } from '../errors.ts';
import type { SSEFrame } from '../sse.ts';
import type { MemberPick } from '../json-skip.ts';
import type { ModelEntry } from '../catalog/catalog.ts';

export type { SSEFrame };

/** What an encoder needs to know about the response it writes. */
export interface EncodeContext {
  id: string;            // response id to present (format-appropriate prefix chosen by the encoder if empty)
  model: string;         // model id to present to the caller
  createdAt: number;     // epoch seconds
  tier: Tier;            // tier that served (a format reports it where it has a field for it)
  /** Chat only: stream_options.include_usage was set, so a final choices:[] usage chunk is sent. */
  includeUsage?: boolean;
  /** Responses only, an answer translated from another API: the caller's request (its prompt,
   *  `input`, left out), whose own fields the response object repeats as OpenAI's does
   *  (instructions, metadata, tools, reasoning…: responses/response.ts responseShell). */
  echo?: Readonly<Record<string, any>>;
}

/** Incremental decoder of a provider stream (frames → IR events). Stateful, one per stream. */
export interface StreamDecoder {
  push(frame: SSEFrame): IREvent[];
  /** Called once the upstream body ended; returns trailing events (e.g. a finish the wire implied). */
  end(): IREvent[];
}

/** A stream decoder that also keeps its format's own events, to build the non-streamed body of
 *  that same format from them: what the IR has no shape for survives (Anthropic's stop_sequence,
 *  citations, redacted_thinking). Stateful, one per stream. */
export interface NativeAssembler extends StreamDecoder {
  /** The caller's body once the stream finished: the provider's own content and stop, with the
   *  usage and tier the IR `res` holds (what is charged). Undefined when the stream never carried
   *  the body's head (the codec's encodeResponse then builds it from `res`). */
  response(res: IRResponse, ctx: EncodeContext): Record<string, any> | undefined;
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
  /** The markers name alternatives of the one frame that carries usage, which a stream sends once
   *  and last (Responses: its terminal event): once that frame is read, the rest of the stream
   *  is not searched, nor the same chunk for the other alternatives. */
  markersOnce?: boolean;
  /** The members of the usage frame that read() and isFinal() look at (and the caller
   *  endpoint's usageOnlyFrame, where it has one): a passthrough that only reads usage (no
   *  rewrite) takes these (json-skip.ts pickMembers) instead of parsing a frame that repeats the
   *  request's instructions and tools and the whole output (Responses). */
  pick?: MemberPick;
  /** `pick` plus the id of what the frame describes, which read() then sets as TapState.id: taken
   *  instead of `pick` only where the gateway records who was handed the provider's id (a managed
   *  route holding conversation state), so other streams parse nothing more. */
  idPick?: MemberPick;
  /** The frame a stream first hands the provider's id out in (its first event: Responses'
   *  response.created, Interactions' interaction.created), where the gateway records who was handed
   *  that id (a managed route holding conversation state) before the frame is written, whatever
   *  becomes of the stream after it. Absent: the format's answers hold no state a caller names. */
  idFrame?: IdFrame;
  /** The frames that carry no output, whose bytes a stream that breaks is not charged output for
   *  (it is charged the output its other frames hold at most: lib/http/pipeline.ts unpricedUsage).
   *  Responses' repeat the whole request (instructions, tools: tens of KB for a coding agent).
   *  `opening`: the events a stream opens with that carry none, told by their first line
   *  (`event: <name>`) among the frames before the first other one; no later frame is looked at.
   *  `read`: the frames the tap reads carry none either, but a final one that reports usage
   *  (Responses' terminal events: response.failed, one without usage); none of them may be an
   *  opening one (each is left out once). Absent: every frame counts. */
  echoes?: { opening: readonly string[]; read?: true };
  /** Cheap test (event name, or a substring) — true when this frame may carry usage or the tier. */
  carriesUsage(frame: SSEFrame): boolean;
  /** Parse that frame's data; merge what it says into `acc` (overwrite, never add). */
  read(data: any, acc: TapState): void;
  /** Frame data with usage.cost / usage.routing added (and input/output token names the spec
   *  asks for), serialised; only called on the frame that carries the final usage. */
  inject(data: any, extras: CostExtras, acc?: TapState): string;
  /** True when this frame is the final usage frame (the one inject() rewrites). */
  isFinal(frame: SSEFrame, data: any): boolean;
}

/** How a passthrough finds the frame that hands the provider's id out (UsageTap.idFrame). */
export interface IdFrame {
  /** A byte string the frame contains: what goes out is searched for it (a native substring
   *  search) only until the id is read, and only the frame holding it is decoded. */
  marker: string;
  /** The members read() looks at (json-skip.ts pickMembers): the frame may repeat the request's
   *  instructions and tools. */
  pick: MemberPick;
  /** The id, when this frame (its picked `data`) is the one that hands it out; undefined for a
   *  frame whose text merely holds the marker. */
  read(frame: SSEFrame, data: any): string | undefined;
}

/** What a tap read off a passthrough stream; `id`, the provider's id of the answer, when the
 *  frame read carries it (Responses only when `idPick` was taken). `partial`: the usage read is a
 *  running count, not the provider's final one (Messages' message_start, until a message_delta
 *  states its output). `answered`: the answer's own end was read though its usage frame had not
 *  come (Chat's finish_reason chunk): a stream that then closes with its format's terminator
 *  completed without usage. Either way, a complete stream is charged the estimate. */
export interface TapState { usage: IRUsage; tier?: Tier; sawUsage: boolean; id?: string; partial?: boolean; answered?: true }

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
  /** A decoder that also assembles this format's own non-streamed body, for a caller of the same
   *  format whose answer was streamed upstream (a route called streamed only). Absent: the body is
   *  encodeResponse of the IR. */
  assembleNative?(): NativeAssembler;
  /** The request members an answer translated into this format repeats (EncodeContext.echo), kept
   *  past the release of the request's body; absent: the format echoes nothing. */
  echo?(body: Readonly<Record<string, any>>): Record<string, unknown>;
  createStreamEncoder(ctx: EncodeContext): StreamEncoder;
  tap: UsageTap;
  /** The body of an error answer in this format's envelope (so its official SDK raises its typed
   *  error), carrying the spec's code string where the SDK exposes one. */
  errorBody(err: GatewayError): Record<string, unknown>;
  /** The event a stream in this format ends with when it breaks after commit (the status is sent:
   *  never a fake clean end a client would trust). For passthrough streams, whose encoder never
   *  ran; a translated stream gets its own from its encoder. */
  errorFrame(code: string, message: string): string;
  /** The frame a complete stream in this format ends with, after its final usage frame
   *  (wire-formats.md, "Stream terminator"); absent where the final event is the end (Responses,
   *  Vertex). A passthrough whose provider dropped its connection after the final event sends it
   *  when it had not gone out (lib/stream/respond.ts missingEnd): clients wait for it (the Chat and
   *  Interactions SDKs and hand-written loops stop at `[DONE]`), and a proxy in front may read a
   *  stream without it as cut off. */
  streamEnd?: Buffer;
  /** As a wire: the fewest bytes of stream its provider sends per output token, as the caller
   *  receives it (one caller event per provider event, each at least as long). A stream that ends
   *  without the provider's usage (client gone, upstream broke) is charged the output these bytes
   *  make at most, so the estimate is not below what the provider bills for a typical stream:
   *  vendor A sends an event per token (≈ 200–330 bytes each), Anthropic a few tokens per event,
   *  Gemini a sentence or more per chunk. */
  bytesPerOutputToken: number;
  /** As a wire: the most output the provider may generate for this upstream body when the caller
   *  named no cap and the route sends `cap` (Anthropic's thinking budget rides on top of it:
   *  maxTokensFor). Absent: `cap`. */
  uncappedOutput?(body: Record<string, any>, cap: number): number;
  /** Present when callers may send this format (Vertex is a provider wire only). */
  endpoint?: Endpoint;
}

/** A codec callers may send requests in. */
export interface CallerCodec extends FormatCodec { endpoint: Endpoint }

/** A caller format's endpoint: where it is served and the rules of its requests. */
export interface Endpoint {
  /** The path callers POST this format to. */
  path: string;
  /** The body's JSON Schema ($refs into schemas/common.json), compiled once by lib/routing/validate.ts. */
  schema: object;
  /** Provider-held conversation state: the fields that refer to it and the one route that holds it
   *  (the API that issued the id). A request naming one is pinned to that route. */
  state?: { fields: readonly string[]; route: RouteName };
  /** This format's own rules, run after the shared ones on a schema-valid body: refuses what it
   *  cannot serve (GatewayError), drops what the gateway decides (service_tier), and sets what the
   *  format derives (ownWire, includeUsage, betas), reading the request headers it needs. */
  check(request: CallerRequest, headers: IncomingHttpHeaders): void;
  /** The caller's output cap, from the field this format names it in; undefined when absent or not
   *  an integer. */
  maxOutput(body: Record<string, any>): number | undefined;
  /** Passthrough streams of a caller that did not ask for usage: true for the usage-only frame the
   *  gateway asked the provider for (settlement needs it), which is dropped. Absent: the format
   *  sends no such frame. */
  usageOnlyFrame?(data: any): boolean;
}

/** What an endpoint's check() reads and sets (lib/routing/validate.ts CheckedRequest is one). */
export interface CallerRequest {
  model: ModelEntry;
  startWithin: { kind: 'now' | 'duration' };
  /** The caller body without the gateway's own fields. */
  body: Record<string, any>;
  /** A route that speaks the caller's format gets the body as it is (passthrough); false when the
   *  format rides another wire everywhere (Chat without Chat-native parameters goes as Responses). */
  ownWire: boolean;
  /** The caller asked for a usage frame in its stream (Chat stream_options.include_usage). */
  includeUsage: boolean;
  /** Understood beta flags the route adapters forward (Messages: the `anthropic-beta` values). */
  betas: string[];
}
