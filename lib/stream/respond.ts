// After commit: drain the winning upstream into the caller. Three shapes, one loop:
// - passthrough (caller format = upstream wire): bytes forwarded untouched, the usage frame tapped
//   (and rewritten only when the caller asked include_cost);
// - translate: upstream frames → IR events → the caller format's encoder;
// - assemble: a non-streamed caller gets one body built from the IR events (same API in and out,
//   where the codec can, from the provider's own events); an answer that failed is not a body.
import type { ServerResponse } from 'node:http';
import type { CostExtras, FormatName, IREvent, IRResponse, IRUsage } from '../ir.ts';
import type { Tier } from '../routes.ts';
import { zeroUsage } from '../ir.ts';
import type { EncodeContext, FormatCodec, IdFrame, TapState, UsageTap } from '../formats/types.ts';
import { ResponseCollector } from '../formats/collect.ts';
import type { Committed } from './attempt.ts';
import type { RawFrame, SSEFrame } from '../sse.ts';
import type { Framer } from '../providers/types.ts';
import { formatFrame, parseFrame, SSEParser } from '../sse.ts';
import { frameEndAfter, OpeningFrames, PassthroughScanner } from './sse-scan.ts';
import { pickMembers, withMemberIn } from '../json-skip.ts';
import { EVENT_STREAM_HEAD, type Headers } from '../headers.ts';
import { addCostExtras } from '../formats/cost-extras.ts';

export interface Pricing {
  /** Cost of this usage at this tier (undefined when it cannot be priced) and the include_cost extras. */
  price(usage: IRUsage, tier: Tier): { costMicroUsd?: number; extras?: CostExtras };
  /** The usage charged for an answer that completed without the provider's final usage (the
   *  finish's `unreported`), as a broken one is (lib/http/pipeline.ts unpricedUsage): what it
   *  `reported` before (a floor), else the input estimate, plus `outputTokens`, the most output
   *  its bytes hold. */
  unreported(outputTokens: number, reported: IRUsage): IRUsage;
}

export interface RespondArgs {
  res: ServerResponse;
  committed: Committed;
  caller: FormatCodec;
  wire: FormatCodec;
  passthrough: boolean;
  stream: boolean;               // the caller asked a stream
  includeCost: boolean;
  includeUsage: boolean;         // the caller asked for a usage frame (Chat stream_options.include_usage)
  /** The x-service-* headers of an answer served at `tier`: a stream's head names the committed
   *  tier (nothing later is known yet), a whole answer the tier that served it. */
  headers: (tier: Tier) => Headers;
  callerIdleMs?: number;         // a caller that reads nothing this long is cut off (0: never)
  onCallerIdle?: () => void;     // … and this is told (a metric)
  ctx: EncodeContext;
  pricing: Pricing;
  /** Counted here as the answer goes, the provider's bytes behind what went out that carry output
   *  (the measure of StreamResult.wireBytes), for whoever estimates a crash's delivered cost
   *  meanwhile. */
  wireMeter?: { bytes: number };
  /** Present where the gateway records who was handed the provider's id (a managed route holding
   *  conversation state, same API in and out): record() is told that id once, before the first
   *  bytes carrying it are written (a stream's first event, so one that fails, breaks or loses its
   *  caller later has recorded it too), and the answer ends only once written() resolved
   *  (lib/store/state-owners.ts). */
  issued?: IssuedIds;
  /** Why the gateway itself stopped this answer, when it did (the shutdown drain): a broken stream
   *  then ends with that error event instead of provider_error. */
  stoppedBy?: () => { code: string; message: string } | undefined;
  /** Awaited with a complete answer's cost just before its last bytes go out (the hold's
   *  settlement): a client that sends its next request as soon as it has read this answer must
   *  not find it still holding the organization's concurrency and daily spend. */
  beforeEnd?: (costMicroUsd: number) => Promise<void>;
}

/** The error event a broken stream ends with: the gateway's own reason when it stopped the answer,
 *  else the provider's failure. */
function brokenError(args: RespondArgs, why: string): { code: string; message: string } {
  return args.stoppedBy?.() ?? { code: 'provider_error', message: `The provider stream failed: ${why}` };
}

export interface IssuedIds { record(id: string): void; written(): Promise<void> }

export interface StreamResult {
  complete: boolean;             // the upstream finished cleanly
  usage?: IRUsage;               // the provider's usage, when it reported one (or `estimated`)
  /** A complete answer without the provider's usage: `usage` is the estimate it is charged
   *  (Pricing.unreported), the usage record's usage_estimated. */
  estimated?: true;
  tier: Tier;                    // tier that served (provider-reported when it says)
  costMicroUsd?: number;
  bytesOut: number;
  /** An answer that ended without the provider's final usage: the provider's bytes behind what went
   *  out (the wire's own measure, which FormatCodec.bytesPerOutputToken is about) in the frames
   *  that carry output. The frames that carry none are left out: Responses' response.created and
   *  response.failed repeat the whole request, and a stream of those two alone generated nothing. */
  wireBytes?: number;
  /** A stream that broke: what the provider had reported by then (Anthropic's message_start input
   *  count, the output so far), the floor of what it bills. */
  reported?: IRUsage;
  /** Why the stream failed; on a complete answer, the provider's connection dropping after its
   *  final event (logged, not an error of the answer). */
  error?: string;
}

export async function respond(args: RespondArgs): Promise<StreamResult> {
  return args.stream ? (args.passthrough ? pipePassthrough(args) : pipeTranslated(args)) : assemble(args);
}

/** Feeds the committed body to `onChunk` (the bytes read before commit first, then each chunk as
 *  it arrives) and resolves at the clean end. A caller whose socket is full pauses the upstream
 *  until it drains (backpressure): memory per slow caller is bounded by the socket buffers. */
function drain(committed: Committed, res: ServerResponse, onChunk: (chunk: Buffer) => void, idle?: CallerIdle): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = false;
    let waiting = false;             // paused until the caller's socket drains
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: Error): void => { if (!failed) { failed = true; reject(err); } };
    const onDrain = (): void => {
      waiting = false;
      if (timer) { clearTimeout(timer); timer = undefined; }
      committed.resume();
    };
    // A caller that reads nothing for callerIdleMs is cut off like one that went away: its socket
    // is destroyed, which stops the request (upstream aborted, hold settled for what was delivered).
    const cutOff = (): void => { idle?.onCallerIdle?.(); res.destroy(); };
    // The clock runs only while the answer owns its socket. One queued behind an earlier answer on
    // the same connection (HTTP pipelining) has none: node buffers its output, and no 'drain' can
    // come until the earlier answer ends, however fast its caller reads. Its wait starts when node
    // hands it the socket ('socket', emitted just before node flushes what it buffered, which
    // then emits 'drain' if it all went out). Made only then: a served stream pays nothing.
    let queued: (() => void) | undefined;
    const step = (chunk: Buffer): boolean => {
      if (failed) return true;
      try { onChunk(chunk); } catch (err) { fail(err as Error); return true; }
      if (!res.writableNeedDrain) return true;
      if (!waiting) {
        waiting = true;
        res.once('drain', onDrain);
        const idleMs = idle?.callerIdleMs;
        if (idleMs && res.socket) timer = setTimeout(cutOff, idleMs);
        else if (idleMs && !queued) {
          res.once('socket', queued = () => { queued = undefined; if (waiting) timer = setTimeout(cutOff, idleMs); });
        }
      }
      return false;
    };
    const done = (): void => {
      res.off('drain', onDrain);
      if (queued) res.off('socket', queued);
      if (timer) clearTimeout(timer);
    };
    if (committed.head.length) step(committed.head);
    committed.pipe({
      data: step,
      end() { done(); if (!failed) resolve(); },
      error(err) { done(); fail(err); },
    });
  });
}

/** How long a caller may read nothing before it is cut off, and who hears of it. */
type CallerIdle = Pick<RespondArgs, 'callerIdleMs' | 'onCallerIdle'>;

/** drain(), framed: `first` (what a route with its own framing read before commit; an SSE route
 *  keeps those bytes in `head`), then each chunk's frames, then the framer's tail. */
async function drainFrames<F extends SSEFrame>(
  committed: Committed, framer: Framer<F>, first: F[], res: ServerResponse, onFrames: (frames: F[]) => void, idle?: CallerIdle,
): Promise<void> {
  if (first.length) onFrames(first);
  await drain(committed, res, (chunk) => onFrames(framer.push(chunk)), idle);
  const tail = framer.end();
  if (tail.length) onFrames(tail);
}

/** The stream's head, unless a long wait for commit already sent it (lib/http/pipeline.ts
 *  holdStreamOpen: the routing headers decided at commit are then not sent). */
function startStream(args: RespondArgs): void {
  if (args.res.headersSent) return;
  args.res.writeHead(200, { ...EVENT_STREAM_HEAD, ...args.headers(args.committed.tier) });
}

async function pipePassthrough(args: RespondArgs): Promise<StreamResult> {
  const { res, committed, wire } = args;
  const tap = wire.tap;
  const tapState: TapState = { usage: zeroUsage(), sawUsage: false };
  // The usage-only frame the gateway asked for on the caller's behalf (Chat's choices:[] chunk) is
  // dropped for a caller that did not ask for usage; the codec says which frame that is.
  const usageOnlyFrame = args.includeUsage ? undefined : args.caller.endpoint?.usageOnlyFrame;
  let final = false;
  let estimated: IRUsage | undefined; // the charge of a final frame without usage, made at that frame
  let bytesOut = 0;
  // The bytes that carry output: what went out but the frames that carry none (UsageTap.echoes).
  const meter = args.wireMeter ?? { bytes: 0 };
  const opening = new OpeningFrames(tap.echoes?.opening);
  let unread = 0;   // bytes of frames the tap read that carry no output, in what goes out next
  // Reading usage (no rewrite asked) takes only the members the tap reads (and the answer's id
  // where it is recorded).
  const pick = args.includeCost ? undefined : args.issued ? tap.idPick ?? tap.pick : tap.pick;
  const scanner = committed.ownFramer ? undefined : new PassthroughScanner(tap.markers, tap.markersOnce);
  // The provider's id is recorded off the first frame that hands it out, before that frame is
  // written; until then what goes out is searched for that frame's marker (the stream's first
  // event: one search, in the usual first chunk). The final frame's id (idPick) stands in for a
  // stream that never sent that frame.
  const idFrame = args.issued ? tap.idFrame : undefined;
  let unissued = args.issued !== undefined;
  const issue = (id: string | undefined): void => {
    if (id === undefined) return;
    unissued = false;
    args.issued!.record(id);
  };
  /** A frame that may carry usage: read it; returns what replaces it, if anything. `before`: what
   *  precedes it that has not gone out yet (the same upstream chunk's earlier frames), as those
   *  bytes or, from a route's own framing, their output bytes (the opening frames left out); read
   *  only for a final frame without usage. */
  const onUsageFrame = (frame: RawFrame, before: Buffer | number): Buffer | undefined => {
    if (!tap.carriesUsage(frame)) return undefined;
    let data: any;
    try { data = pick ? pickMembers(frame.data, pick) : JSON.parse(frame.data); } catch { return undefined; }
    tap.read(data, tapState);
    if (!tap.isFinal(frame, data)) {
      if (tap.echoes?.read) unread += frame.raw.length;
      return undefined;
    }
    final = true;
    scanner?.found();
    if (unissued) issue(tapState.id);
    // A final frame without the final usage: the answer is charged the estimate of the output its
    // frames hold up to here, this one's too unless the frames the tap reads repeat the request
    // (UsageTap.echoes: Responses' response.completed). Made here, whether or not its cost goes
    // out in this frame (include_cost), so that what is charged does not depend on it.
    const bare = unreported(tapState);
    const echo = bare && tap.echoes?.read === true;
    if (bare) {
      const pending = typeof before === 'number' ? before : before.length - opening.peek(before);
      const output = meter.bytes + pending - unread + (echo ? 0 : frame.raw.length);
      estimated = args.pricing.unreported(outputIn(wire, output), tapState.usage);
    }
    if (echo) unread += frame.raw.length;
    if (usageOnlyFrame?.(data)) return EMPTY;
    if (!args.includeCost) return undefined;
    const { extras } = args.pricing.price(bare ? estimated! : tapState.usage, tapState.tier ?? committed.tier);
    return Buffer.from(formatFrame(tap.inject(data, extras!, tapState), frame.event));
  };
  // Only whole frames go out (one write per upstream chunk), so a stream that breaks later ends
  // with a clean error event, never one spliced into half a frame.
  let last: Buffer = EMPTY; // what went out last: a stream that breaks may have ended with the provider's own error
  let dropped: string | undefined; // why the provider's connection failed after its final event
  /** Writes `bytes`, of which `echo` carry no output. */
  const write = (bytes: Buffer, echo = 0): void => {
    if (!bytes.length) return;
    bytesOut += bytes.length;
    meter.bytes += bytes.length - echo - unread;
    unread = 0;
    last = bytes;
    res.write(bytes);
  };
  startStream(args);
  try {
    if (committed.ownFramer) {
      await drainFrames(committed, committed.ownFramer, committed.frames, res, (frames) => {
        // A route's own framing need not be SSE text: its frames are searched as decoded.
        if (unissued && idFrame) {
          for (const frame of frames) if (unissued && frame.data.includes(idFrame.marker)) issue(idOf(frame, idFrame));
        }
        let echo = 0;
        let before = 0;
        const out = frames.map((frame) => {
          const opens = opening.isOpening(frame.event);
          const replaced = onUsageFrame(frame, before - echo);
          before += frame.raw.length;
          if (opens) echo += frame.raw.length;
          return replaced ?? frame.raw;
        });
        write(out.length === 1 ? out[0]! : Buffer.concat(out), echo);
      }, args);
    } else {
      // What the scanner passes on is whole SSE frames: the id is read off them before they go out.
      const pass = (bytes: Buffer): void => {
        if (unissued && idFrame && bytes.length) issue(idIn(bytes, idFrame));
        write(bytes, opening.measure(bytes));
      };
      await drain(committed, res, (chunk) => pass(scanner!.push(chunk, onUsageFrame)), args);
      // A last frame without its blank line goes out only when it is the final one: otherwise it
      // is half an event, which no SSE parser dispatches and the error frame must not extend.
      const tail = scanner!.end(onUsageFrame);
      if (final) pass(tail);
    }
  } catch (err) {
    if (!final) return endBroken(args, tapState, bytesOut, meter.bytes, (err as Error).message);
    // The provider's connection dropped after its final event (undici: "other side closed" before
    // the body's end): the answer and its usage are whole. It ends as the provider would have ended
    // it, with the format's terminator where that had not gone out yet (what was held after the
    // final frame is at most that terminator, cut), and is charged what the provider reported; the
    // failure is only logged (stream_error).
    dropped = (err as Error).message;
    if (!res.destroyed) write(missingEnd(args.caller.streamEnd, last));
  }
  // A stream whose usage frame never came but that told its end (Chat's finish_reason) and closed
  // with its format's terminator (Chat's [DONE]: a server that ignores include_usage) completed.
  if (!final && !(tapState.answered && endsWith(args.caller.streamEnd, last))) {
    return endBroken(args, tapState, bytesOut, meter.bytes, 'upstream stream ended before its final event', last);
  }
  if (args.issued) await args.issued.written();
  const tier = tapState.tier ?? committed.tier;
  // Checked once, at the end: complete without the provider's final usage, it is charged the
  // estimate, as a broken stream is.
  const estimate = unreported(tapState) ? estimated ?? args.pricing.unreported(outputIn(wire, meter.bytes), tapState.usage) : undefined;
  const usage = estimate ?? tapState.usage;
  const { costMicroUsd } = args.pricing.price(usage, tier);
  if (args.beforeEnd && costMicroUsd !== undefined) await args.beforeEnd(costMicroUsd);
  res.end();
  return { complete: true, usage, ...(estimate ? { estimated: true } : {}), tier, costMicroUsd, bytesOut, error: dropped };
}

/** The tap has not read the provider's final usage: none, or only a running count (Messages'
 *  message_start). */
const unreported = (tapState: TapState): boolean => !tapState.sawUsage || tapState.partial === true;

/** The most output tokens `wireBytes` of `wire`'s stream hold (FormatCodec.bytesPerOutputToken). */
export const outputIn = (wire: FormatCodec, wireBytes: number): number => Math.ceil(wireBytes / wire.bytesPerOutputToken);

/** `last` (what went out last) ends with the format's terminator `end`. */
const endsWith = (end: Buffer | undefined, last: Buffer): boolean => end !== undefined && last.length > 0 && missingEnd(end, last) === EMPTY;

const EMPTY = Buffer.alloc(0);

/** The provider's id in `bytes` (whole SSE frames), off the first frame that hands it out: only
 *  frames holding the marker are decoded, and only the members the tap picks. */
function idIn(bytes: Buffer, idFrame: IdFrame): string | undefined {
  let start = 0;   // where the frame holding the next marker starts, or a frame before it
  for (let at = bytes.indexOf(idFrame.marker); at !== -1; at = bytes.indexOf(idFrame.marker, start)) {
    let end = frameEndAfter(bytes, start);
    while (end !== -1 && end <= at) { start = end; end = frameEndAfter(bytes, start); }
    if (end === -1) end = bytes.length;
    const frame = parseFrame(bytes.toString('utf8', start, end));
    const id = frame && idOf(frame, idFrame);
    if (id !== undefined) return id;
    start = end;
  }
  return undefined;
}

/** The id `frame` hands out, if it is the tap's id frame. */
function idOf(frame: SSEFrame, idFrame: IdFrame): string | undefined {
  try { return idFrame.read(frame, pickMembers(frame.data, idFrame.pick)); } catch { return undefined; }
}

/** The caller format's terminator (FormatCodec.streamEnd), unless it is the last frame of `last`
 *  (what went out last): a connection that dropped after it cut nothing. Told by its event name
 *  where it has one (Bedrock's message_stop carries metrics besides). */
function missingEnd(end: Buffer | undefined, last: Buffer): Buffer {
  if (!end) return EMPTY;
  const want = new SSEParser().push(end)[0]!;
  const sent = last.length ? new SSEParser().push(last).at(-1) : undefined;
  const isEnd = sent !== undefined && sent.event === want.event && (want.event !== undefined || sent.data.trim() === want.data);
  return isEnd ? EMPTY : end;
}

/** A passthrough that did not reach its final frame ends with the caller format's error event,
 *  unless the provider's own error event, already forwarded, ended it (`last`: what went out last).
 *  Like a complete answer, it ends once the id it handed out is written (RespondArgs.issued). */
async function endBroken(
  args: RespondArgs, tapState: TapState, bytesOut: number, wireBytes: number, why: string, last: Buffer = EMPTY,
): Promise<StreamResult> {
  if (args.issued) await args.issued.written();
  const own = last.length ? providerError(args.wire, last) : undefined;
  if (own !== undefined) why = `the provider's error event: ${own}`;
  if (own === undefined && !args.res.destroyed) {
    const err = brokenError(args, why);
    args.res.end(args.caller.errorFrame(err.code, err.message));
  } else if (!args.res.destroyed) args.res.end();
  const tier = tapState.tier ?? args.committed.tier;
  // What the tap read before the break is not the provider's final usage (Messages' message_start
  // says 1 output token): the request is charged the estimate of the output that reached the
  // caller, on top of what the provider had reported.
  return { complete: false, usage: undefined, tier, bytesOut, wireBytes, reported: tapState.sawUsage ? tapState.usage : undefined, error: why };
}

/** The message of the provider's error event when `bytes` (whole frames) end with one, as the
 *  wire's own decoder reads it (Responses' `response.failed` or `error`, Messages' `error`…). */
function providerError(wire: FormatCodec, bytes: Buffer): string | undefined {
  const frame = new SSEParser().push(bytes).at(-1);
  if (!frame) return undefined;
  for (const ev of wire.createStreamDecoder().push(frame)) if (ev.type === 'error') return ev.message;
  return undefined;
}

async function pipeTranslated(args: RespondArgs): Promise<StreamResult> {
  const { res, committed } = args;
  const decoder = args.wire.createStreamDecoder();
  const encoder = args.caller.createStreamEncoder(args.ctx);
  let finish: Extract<IREvent, { type: 'finish' }> | undefined;
  let failed: string | undefined;
  let dropped: string | undefined; // why the provider's connection failed after its final event
  let bytesOut = 0;
  const broken = new BrokenCharge(args.wire.tap, args.wireMeter);
  let reported: IRUsage | undefined;
  let costMicroUsd: number | undefined;
  // What one upstream chunk's frames encode to goes out in one write (one HTTP chunk), not one
  // write per event.
  let pending = '';
  const emit = (events: IREvent[]): void => {
    for (let ev of events) {
      if (ev.type === 'finish') {
        // The encoder is told the tier that served (the provider's final event may name another
        // than the committed one): the frames from here on say that one, as the price does.
        const tier = ev.tier ?? committed.tier;
        // Without the provider's usage it is charged the estimate of the output its frames hold,
        // and the caller's usage says that estimate, as its cost does.
        const usage = ev.unreported ? args.pricing.unreported(outputIn(args.wire, broken.meter.bytes), ev.usage) : ev.usage;
        const price = args.pricing.price(usage, tier);
        costMicroUsd = price.costMicroUsd;
        ev = finish = { ...ev, usage, tier, ...(args.includeCost ? { extras: price.extras } : {}) };
      } else if (ev.type === 'error') {
        failed = ev.message;
        // A provider's own code (server_error, RESOURCE_EXHAUSTED…) names nothing in the caller's
        // format: every failure of a translated stream is provider_error, the provider's code kept
        // in the message.
        if (ev.code !== 'provider_error') ev = { type: 'error', code: 'provider_error', message: `${ev.code}: ${ev.message}` };
      } else if (ev.type === 'usage') reported = { ...(reported ?? zeroUsage()), ...ev.usage };
      pending += encoder.push(ev);
    }
  };
  const flush = (): void => {
    if (!pending) return;
    bytesOut += Buffer.byteLength(pending);
    res.write(pending);
    pending = '';
  };
  startStream(args);
  try {
    await drainFrames(committed, committed.framer, committed.frames, res, (frames) => {
      for (const frame of frames) {
        const events = decoder.push(frame);
        broken.count(frame, events);
        emit(events);
      }
      flush();
    }, args);
    emit(decoder.end());
  } catch (err) {
    // A connection that dropped after the provider's final event (Chat's usage chunk before its
    // [DONE], Messages' message_delta before message_stop) cut nothing off: where the decoder's end
    // finishes the answer, it is complete, charged what the provider reported; the failure is only
    // logged (stream_error).
    const rest = finish ? [] : decoder.end();
    if (rest.some((ev) => ev.type === 'finish')) emit(rest);
    if (finish) dropped = (err as Error).message;
    else failed = (err as Error).message;
  }
  if (!finish && !failed) failed = 'upstream stream ended before its final event';
  if (failed && !finish) {
    if (!res.destroyed) res.end(pending + encoder.push({ type: 'error', ...brokenError(args, failed) }));
    return { complete: false, tier: broken.tier(committed.tier), bytesOut, wireBytes: broken.meter.bytes, reported, error: failed };
  }
  bytesOut += Buffer.byteLength(pending);
  if (args.beforeEnd && !failed && costMicroUsd !== undefined) await args.beforeEnd(costMicroUsd);
  res.end(pending);
  return {
    complete: !failed, usage: finish!.usage, ...(finish!.unreported ? { estimated: true } : {}), tier: finish!.tier!, costMicroUsd, bytesOut,
    error: failed ?? dropped,
  };
}

/** A frame's size as an SSE event of the wire (`event: …\ndata: …\n\n`, ASCII JSON counted a
 *  character a byte): what bytesPerOutputToken measures, whatever framing carried it (Bedrock's
 *  binary event stream wraps the same events in base64). */
const sseSize = (frame: SSEFrame): number => frame.data.length + (frame.event ? frame.event.length + 8 : 0) + 8;

/** An event of the answer's output (text, reasoning, tool arguments, the blocks holding them), not
 *  of its life (start, usage, finish, error). */
const isOutput = (ev: IREvent): boolean => ev.type !== 'start' && ev.type !== 'usage' && ev.type !== 'finish' && ev.type !== 'error';

/** What a decoded upstream's frames say, taken as they go, for the charge of an answer that breaks
 *  (lib/http/pipeline.ts unpricedUsage), the same as its passthrough is charged: the bytes of the
 *  frames its decoder made output of (StreamResult.wireBytes: Responses' response.created and
 *  response.failed repeat the whole request, and make none), and the tier the provider named in
 *  the last frame its wire's tap reads (Responses' response.failed), read only if it broke. */
class BrokenCharge {
  private tapped: SSEFrame | undefined;

  constructor(private readonly tap: UsageTap, readonly meter: { bytes: number } = { bytes: 0 }) {}

  /** `frame`, which the decoder made `events` of. */
  count(frame: SSEFrame, events: IREvent[]): void {
    if (events.some(isOutput)) this.meter.bytes += sseSize(frame);
    if (this.tap.carriesUsage(frame)) this.tapped = frame;
  }

  /** The tier the provider named as a passthrough's tap reads it, else `committed`. */
  tier(committed: Tier): Tier {
    if (!this.tapped) return committed;
    const read: TapState = { usage: zeroUsage(), sawUsage: false };
    try { this.tap.read(this.tap.pick ? pickMembers(this.tapped.data, this.tap.pick) : JSON.parse(this.tapped.data), read); } catch { return committed; }
    return read.tier ?? committed;
  }
}

async function assemble(args: RespondArgs): Promise<StreamResult> {
  const { committed } = args;
  let body: Record<string, any>;
  let usage: IRUsage;
  let estimated: true | undefined;   // usage is the estimate: the provider's answer carried none
  let tier: Tier;
  let raw: Buffer | undefined;
  // A streamed upstream's events so far and the provider's bytes behind them: an answer that breaks
  // is charged from them as the same stream broken before a streaming caller would be (what the
  // provider reported, the output its bytes hold), not from the input estimate alone.
  let collector: ResponseCollector | undefined;
  let finished = false;
  const broken = new BrokenCharge(args.wire.tap, args.wireMeter);
  try {
    // Asked non-streamed, a provider answers one JSON body; one that streams anyway (a replayed
    // recording does) is assembled from its events like any stream.
    if (!committed.streamed && !isEventStream(committed.headers['content-type'])) {
      raw = await collectBody(committed);
      body = JSON.parse(raw.toString('utf8'));
      const ir = args.wire.decodeResponse(body);
      const failure = failureOf(ir);
      if (failure) return failedAssembly(args, failure, ir.tier ?? committed.tier, ir.usage);
      if (ir.unreported) ir.usage = args.pricing.unreported(outputOf(ir), ir.usage);
      usage = ir.usage;
      estimated = ir.unreported;
      tier = ir.tier ?? committed.tier;
      if (args.issued && ir.id) { args.issued.record(ir.id); await args.issued.written(); }
      if (args.wire.name !== args.caller.name) { body = args.caller.encodeResponse(ir, args.ctx); raw = undefined; }
    } else {
      // Same API in and out: where the codec has a native assembler, the body is built from the
      // provider's own events, keeping what the IR has no shape for (Anthropic's stop_sequence,
      // citations, redacted_thinking); the IR events it returns still give usage, tier and failure.
      const native = args.wire.name === args.caller.name ? args.wire.assembleNative?.() : undefined;
      const decoder = native ?? args.wire.createStreamDecoder();
      const events = collector = new ResponseCollector(committed.tier);
      await drainFrames(committed, committed.framer, committed.frames, args.res, (frames) => {
        for (const frame of frames) {
          const decoded = decoder.push(frame);
          broken.count(frame, decoded);
          for (const ev of decoded) { events.push(ev); if (ev.type === 'finish') finished = true; }
        }
      });
      for (const ev of decoder.end()) { events.push(ev); if (ev.type === 'finish') finished = true; }
      const ir = events.result();
      // A failed finish is the provider's final usage; a stream that ended early, a floor.
      if (!finished) return failedAssembly(args, 'upstream stream ended before its final event', broken.tier(committed.tier), ir.usage, broken.meter.bytes);
      const failure = failureOf(ir);
      if (failure) return failedAssembly(args, failure, ir.tier ?? committed.tier, ir.usage);
      if (ir.unreported) ir.usage = args.pricing.unreported(outputIn(args.wire, broken.meter.bytes), ir.usage);
      usage = ir.usage;
      estimated = ir.unreported;
      tier = ir.tier;
      if (args.issued && ir.id) { args.issued.record(ir.id); await args.issued.written(); }
      // Same API in and out: keep the provider's id, the one its stored state is found by
      // (previous_response_id, previous_interaction_id).
      const ctx = { ...args.ctx, tier, ...(args.wire.name === args.caller.name && ir.id ? { id: ir.id } : {}) };
      body = native?.response(ir, ctx) ?? args.caller.encodeResponse(ir, ctx);
    }
  } catch (err) {
    return failedAssembly(args, (err as Error).message, broken.tier(committed.tier), collector?.result().usage, finished ? undefined : broken.meter.bytes);
  }
  const { costMicroUsd, extras } = args.pricing.price(usage, tier);
  const headers: Headers = args.headers(tier);
  if (costMicroUsd !== undefined) headers['x-service-cost'] = costMicroUsd;
  if (args.includeCost && extras) {
    // Formats that already name input_tokens/output_tokens keep their own values (Anthropic's
    // input_tokens excludes cache reads); the others get the IR's.
    const own = body.usage ?? {};
    const tokens = { input: own.input_tokens ?? usage.inputTokens, output: own.output_tokens ?? usage.outputTokens };
    body.usage = addCostExtras({ ...own }, extras, tokens);
    raw = undefined;
  } else if (extras?.cost) {
    // A non-streamed answer always reports its cost in usage.cost, as in x-service-cost (the
    // spec's "Cost inside a stream", 1): spliced into the provider's own bytes where they go out
    // as they came; the routing block and token names stay include_cost's.
    const spliced = raw && withMemberIn(raw, 'usage', 'cost', extras.cost);
    if (spliced) raw = spliced;
    else { body.usage = { ...(body.usage ?? {}), cost: extras.cost }; raw = undefined; }
  }
  const out = raw ?? Buffer.from(JSON.stringify(body));
  if (args.beforeEnd && costMicroUsd !== undefined) await args.beforeEnd(costMicroUsd);
  args.res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length, ...headers });
  args.res.end(out);
  return { complete: true, usage, ...(estimated ? { estimated } : {}), tier, costMicroUsd, bytesOut: out.length };
}

/** The most output tokens a whole answer's body holds: the bytes of what it generated (its text,
 *  reasoning, tool names and arguments), at least one per token. */
function outputOf(ir: IRResponse): number {
  let bytes = 0;
  for (const block of ir.blocks) {
    bytes += block.kind === 'tool_call' ? Buffer.byteLength(block.name) + Buffer.byteLength(block.arguments) : Buffer.byteLength(block.text);
  }
  return bytes;
}

/** Why a provider's whole answer is a failure, if it is: its error, or a finish that says it failed
 *  (Vertex MALFORMED_FUNCTION_CALL, a `failed` Interaction), which a stream of the same answer ends
 *  with an error event for: a 200 never carries it. */
function failureOf(ir: IRResponse): string | undefined {
  if (ir.error) return ir.error.message;
  return ir.stopReason === 'error' ? 'the provider ended the response with an error' : undefined;
}

/** An answer that could not be assembled or failed: nothing was written (the caller gets its
 *  format's 502 provider_error). It is charged as a broken answer (lib/http/pipeline.ts
 *  unpricedUsage) at `tier` (the provider's named one, else the committed one): what the provider
 *  reported it used (a failed finish is billed), else the input estimate; where the stream broke,
 *  the output its frames so far hold at most (`wireBytes`), never less than it reported: what the
 *  same stream broken in front of a streaming caller is charged. */
const failedAssembly = (args: RespondArgs, error: string, tier: Tier, reported?: IRUsage, wireBytes?: number): StreamResult =>
  ({ complete: false, tier, bytesOut: 0, error, ...(reported ? { reported } : {}), ...(wireBytes !== undefined ? { wireBytes } : {}) });

const isEventStream = (ct: string | string[] | undefined): boolean => typeof ct === 'string' && ct.startsWith('text/event-stream');

/** A non-streamed upstream body, whole. */
function collectBody(committed: Committed): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    if (committed.head.length) parts.push(committed.head);
    committed.pipe({
      data(chunk) { parts.push(chunk); return true; },
      end() { resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts)); },
      error: reject,
    });
  });
}

export type { FormatName };
