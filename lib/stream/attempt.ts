// One upstream attempt: send the request through the origin's pool and wait for the commit point
// (a 200 and the first complete event: from then on the caller has bytes and nothing can be retried). Before commit a failure is classified
// for retry/fallback; at commit the attempt hands over a Committed stream the responder drains. A
// first event that is the provider's refusal inside a 200 (Framer.refusal: Bedrock's exception
// messages) is such a failure, not a commit.
//
// The attempt is an undici dispatch handler, not a `request()` with a Readable body: chunks arrive
// as callbacks and go to the responder's sink as they are, with no stream object, async iterator
// or AbortController per request (the hot path, bench/README.md). It hears undici's own handler
// calls (lib/stream/pools.ts UpstreamHandler): the response's header lines stay raw until read.
// Backpressure is undici's: a sink that cannot take more (the caller's socket is full) pauses the
// upstream read, and resumes it on drain, so a slow caller holds at most the socket buffers.
import type { FormatName } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';
import type { Failure, Framer, RouteAdapter, UpstreamRequest } from '../providers/types.ts';
import { headersOf, type Pools, type ResponseHeaders, type UpstreamHandler, type UpstreamTerms } from './pools.ts';
import { CapacityRefused, capacityFailure } from '../providers/capacity.ts';
import { frameTooLarge, MAX_FRAME_BYTES, parseFrame, SSEParser, type RawFrame, type SSEFrame } from '../sse.ts';
import { classify, connectionFailure } from './failure.ts';
import { GatewayError } from '../errors.ts';
import { frameEndAfter, PendingBytes } from './sse-scan.ts';

export class AttemptFailed extends Error {
  constructor(readonly failure: Failure) { super(failure.message); }
}

/** Given to controller.abort: one shared reason, so stopping an attempt allocates no error. */
export const STOPPED = Object.freeze(new Error('attempt stopped'));

export interface AttemptSpec {
  route: RouteName;
  tier: Tier;
  wire: FormatName;
  adapter: RouteAdapter;
  request: () => Promise<UpstreamRequest> | UpstreamRequest;
  /** false only on the "now" non-streamed fast path: commit at the 200, body is one JSON. */
  streamed: boolean;
  /** Capacity and first-byte terms of this attempt (lib/stream/pools.ts). */
  upstream?: UpstreamTerms;
}

/** Where the body goes after commit. `data` returns false when the sink cannot take more now; it
 *  calls Committed.resume() when it can. Exactly one of `end` or `error` ends the body. */
export interface BodySink {
  data(chunk: Buffer): boolean;
  end(): void;
  error(err: Error): void;
}

export interface Committed {
  route: RouteName;
  tier: Tier;
  wire: FormatName;
  streamed: boolean;
  headers: ResponseHeaders;
  /** A route with its own byte framing (not SSE): the frames read before commit. */
  frames: RawFrame[];
  /** An SSE route: the bytes read before commit, undecoded (they hold at least the first event). */
  head: Buffer;
  /** The stream's framer for whoever decodes its events (translation, assembly): the route's own,
   *  or a fresh SSE parser (made on first use: a passthrough SSE stream never decodes). */
  framer: Framer<SSEFrame>;
  /** A route that frames its bytes its own way: its framer, holding any partial frame after
   *  `frames` (undefined for SSE, whose bytes read before commit are `head`). */
  ownFramer: Framer<RawFrame> | undefined;
  launchedAt: number;
  committedAt: number;
  /** Hands the rest of the body to `sink`; chunks that arrived since commit come first. */
  pipe(sink: BodySink): void;
  /** Resumes the upstream read after `sink.data` returned false. */
  resume(): void;
}

/** A running attempt: its commit (or failure), and a way to stop it that aborts the upstream call. */
export interface Attempt {
  committed: Promise<Committed>;
  abort(): void;
}

const MAX_ERROR_BODY = 64 * 1024;
const MAX_BACKLOG = 1024 * 1024;
const EMPTY = Buffer.alloc(0);
const NO_HEADERS: ResponseHeaders = Object.freeze({});
const NO_RAW_HEADERS: Buffer[] = [];

export function runAttempt(spec: AttemptSpec, pools: Pools, now: () => number): Attempt {
  const call = new UpstreamCall(spec, now);
  const committed = new Promise<Committed>((resolve, reject) => { call.resolve = resolve; call.reject = reject; });
  // A request that cannot be built (a body too deep to serialize) fails the attempt, sync or async.
  try {
    const built = spec.request();
    if (built instanceof Promise) built.then((req) => call.dispatch(pools, req), (err) => call.fail(err as Error));
    else call.dispatch(pools, built);
  } catch (err) {
    call.fail(err as Error);
  }
  return { committed, abort: () => call.abort() };
}

type Phase = 'waiting' | 'refused' | 'precommit' | 'committed' | 'ended';

class UpstreamCall implements UpstreamHandler, Committed {
  resolve!: (committed: Committed) => void;
  reject!: (e: unknown) => void;
  private phase: Phase = 'waiting';
  /** undici's abort of the dispatched request (onConnect), and its resume of a paused read. */
  private abortUpstream: ((err?: Error) => void) | undefined;
  private resumeUpstream: (() => void) | undefined;
  private paused = false;
  private cancel: (() => void) | undefined;
  private aborted = false;
  private status = 0;
  private errorParts: Buffer[] | undefined;
  private errorSize = 0;
  private sink: BodySink | undefined;
  /** Chunks (and the end) that arrived after commit, before the sink was attached. */
  private backlog: Buffer[] | undefined;
  private backlogBytes = 0;
  private endedEarly: Error | null | undefined;   // undefined: not ended; null: clean end

  readonly route: RouteName;
  readonly tier: Tier;
  readonly wire: FormatName;
  readonly streamed: boolean;
  /** The response's header lines as undici read them (views into the first read), until parsed. */
  private rawHeaders: Buffer[] = NO_RAW_HEADERS;
  private parsedHeaders: ResponseHeaders | undefined;
  readonly frames: RawFrame[] = [];
  head: Buffer = EMPTY;
  /** Where the search for the first complete SSE event resumes in `head`. */
  private searched = 0;
  /** `head` once it spans chunks: it grows in place, not by a copy of all of it per chunk. */
  private pendingHead: PendingBytes | undefined;
  readonly ownFramer: Framer<RawFrame> | undefined;
  private sseFramer: SSEParser | undefined;
  readonly launchedAt: number;
  committedAt = 0;
  /** Capacity terms, needed until the call is dispatched. The spec itself is not kept: its
   *  request() closure reaches the caller's body and plan, which an open stream must not hold. */
  private upstream: UpstreamTerms | undefined;

  constructor(spec: AttemptSpec, private readonly now: () => number) {
    this.route = spec.route;
    this.tier = spec.tier;
    this.wire = spec.wire;
    this.streamed = spec.streamed;
    this.ownFramer = spec.adapter.framer?.();
    this.upstream = spec.upstream;
    this.launchedAt = now();
  }

  /** The response headers, parsed on first read (an error's Retry-After, a body's content type). */
  get headers(): ResponseHeaders {
    return this.parsedHeaders ??= headersOf(this.rawHeaders);
  }

  get framer(): Framer<SSEFrame> {
    return this.ownFramer ?? (this.sseFramer ??= new SSEParser());
  }

  dispatch(pools: Pools, req: UpstreamRequest): void {
    if (this.aborted) { this.reject(STOPPED); return; }
    const terms = this.upstream;
    this.upstream = undefined;
    try {
      // Through the route's capacity gate: may wait for a connection slot (cancel() leaves the queue).
      this.cancel = pools.dispatch(this.route, req, this, terms, (err) => this.fail(err));
    } catch (err) {
      this.fail(err as Error);
    }
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    if (this.abortUpstream) this.abortUpstream(STOPPED);
    else if (this.phase === 'waiting') { this.cancel?.(); this.phase = 'ended'; this.reject(STOPPED); }
  }

  /** A failure before commit (the request could not be built or sent). */
  fail(err: Error): void {
    if (this.phase === 'ended') return;
    const before = this.phase;
    this.phase = 'ended';
    if (before === 'committed') { this.finish(err); return; }
    this.reject(this.aborted ? STOPPED : new AttemptFailed(err instanceof CapacityRefused ? capacityFailure(err)
      : err instanceof GatewayError ? { kind: 'fatal', status: err.status, message: err.message, callerError: err }
      : connectionFailure(err)));
  }

  // undici's handler calls (UpstreamHandler)

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.aborted) abort(STOPPED);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    this.resumeUpstream = resume;
    if (statusCode !== 200) { this.phase = 'refused'; this.errorParts = []; return true; }
    if (this.streamed) { this.phase = 'precommit'; return true; }
    this.commit();
    return true;
  }

  /** Returns false to pause the upstream read (undici's backpressure), until resume(). */
  onData(chunk: Buffer): boolean {
    switch (this.phase) {
      case 'committed':
        if (this.sink) { if (!this.sink.data(chunk)) this.paused = true; return !this.paused; }
        (this.backlog ??= []).push(chunk);
        // A responder that is late to attach (it should not be) cannot make the process hold a body.
        if ((this.backlogBytes += chunk.length) > MAX_BACKLOG) this.paused = true;
        return !this.paused;
      case 'precommit':
        if (this.ownFramer) {
          for (const f of this.ownFramer.push(chunk)) this.frames.push(f);
          if (this.frames.length) {
            if (this.refusedAtFirstFrame()) return false;
            this.commit();
          }
        } else {
          const scanned = this.head.length;
          if (scanned + chunk.length > MAX_FRAME_BYTES) {
            // No first event within the limit: a malformed stream, failed (and aborted) the way
            // undici fails a handler that throws, so it is retried or fallen back from.
            this.abortUpstream!(frameTooLarge(MAX_FRAME_BYTES));
            return false;
          }
          if (!scanned) this.head = chunk;
          else {
            const pending = this.pendingHead ??= new PendingBytes();
            if (!pending.bytes.length) pending.add(this.head);
            pending.add(chunk);
            this.head = pending.bytes;
          }
          if (this.hasFirstEvent(scanned)) this.commit();
        }
        return true;
      case 'refused':
        this.errorSize += chunk.length;
        if (this.errorSize <= MAX_ERROR_BODY) this.errorParts!.push(chunk);
        return true;
    }
    return true;
  }

  onComplete(): void {
    switch (this.phase) {
      case 'committed': this.phase = 'ended'; this.finish(null); return;
      case 'refused': {
        this.phase = 'ended';
        const text = Buffer.concat(this.errorParts!).toString('utf8', 0, Math.min(this.errorSize, MAX_ERROR_BODY));
        this.reject(new AttemptFailed(classify(this.status, this.headers, text, this.tier, this.now())));
        return;
      }
      case 'precommit': {
        this.phase = 'ended';
        if (this.ownFramer) for (const f of this.ownFramer.end()) this.frames.push(f);
        if (this.frames.length && this.refusedAtFirstFrame()) return;
        const started = this.ownFramer ? this.frames.length > 0 : parseFrame(this.head.toString('utf8', this.searched)) !== undefined;
        if (!started) { this.reject(new AttemptFailed(connectionFailure(new Error('stream ended before its first event')))); return; }
        this.commitAt();
        this.finish(null);
        return;
      }
    }
  }

  onError(err: Error): void {
    this.fail(err);
  }

  // Committed

  pipe(sink: BodySink): void {
    this.sink = sink;
    // The responder has read what came before commit (headers, head, frames) before piping: an
    // open stream need not keep its first chunk or the provider's headers.
    this.head = EMPTY;
    this.frames.length = 0;
    this.rawHeaders = NO_RAW_HEADERS;
    this.parsedHeaders = NO_HEADERS;
    const backlog = this.backlog;
    this.backlog = undefined;
    if (backlog) for (const chunk of backlog) sink.data(chunk);
    if (this.endedEarly !== undefined) { this.deliverEnd(this.endedEarly); return; }
    this.resume();
  }

  resume(): void {
    if (this.paused && this.phase === 'committed') { this.paused = false; this.resumeUpstream?.(); }
  }

  /** Is there a complete SSE frame with data in `head`? Frames are decoded one at a time until
   *  the first event (comments and keep-alives have no data); the rest stays bytes. The bytes
   *  before `from` were searched already: none of their line feeds ends a blank line. */
  private hasFirstEvent(from: number): boolean {
    const head = this.head;
    for (;;) {
      const end = frameEndAfter(head, this.searched, Math.max(from, this.searched));
      if (end === -1) return false;
      const frame = parseFrame(head.toString('utf8', this.searched, end));
      this.searched = end;
      if (frame) return true;
    }
  }

  /** Is the first frame the provider's refusal (Framer.refusal)? Then the attempt fails as a
   *  refused status would, and the rest of the body is not read: the upstream is aborted. */
  private refusedAtFirstFrame(): boolean {
    const failure = this.ownFramer!.refusal?.(this.frames[0]!);
    if (!failure) return false;
    this.phase = 'ended';
    this.frames.length = 0;
    this.reject(new AttemptFailed(failure));
    this.abortUpstream?.(STOPPED);
    return true;
  }

  private commit(): void {
    this.phase = 'committed';
    // No pause until the responder attaches its sink: it does so in the microtasks that follow
    // this commit, before the event loop reads the socket again, so the backlog is at most the
    // rest of the read that carried the commit.
    this.commitAt();
  }

  private commitAt(): void {
    this.pendingHead = undefined;
    this.committedAt = this.now();
    this.resolve(this);
  }

  private finish(err: Error | null): void {
    if (this.sink) this.deliverEnd(err);
    else this.endedEarly = err;
  }

  private deliverEnd(err: Error | null): void {
    const sink = this.sink!;
    this.sink = undefined;
    this.endedEarly = undefined;
    if (err) sink.error(err); else sink.end();
  }
}
