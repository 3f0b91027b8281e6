// Reads a request body up to the cap, counting while it streams: a declared Content-Length over
// the cap is refused before a byte is read, and an undeclared one as soon as it passes the cap.
// A body that takes longer than totalMs in all, or pauses longer than idleMs between chunks, is
// cut off with request_timeout (the caller answers 408 and closes the connection). A body with a
// Content-Encoding is refused unread (the gateway decodes none). A client that asked
// `Expect: 100-continue` is told to send its body only here, once the request is about to read it:
// a request refused before (a wrong key, a rate) never asks for the body it will not read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';

export const BODY_CAP = 50_000_000;

export interface BodyLimits {
  cap?: number;
  /** Whole body, from the end of the headers; 0 = none. */
  totalMs?: number;
  /** Longest pause between chunks; 0 = none. */
  idleMs?: number;
  /** Told which limit cut the body ('request_body' | 'request_body_idle'), for the metrics. */
  onTimeout?: (edge: 'request_body' | 'request_body_idle') => void;
}

/** The answer of a request that expects 100-continue and has not been told to send its body
 *  (set by lib/http/server.ts on such requests only). */
const AWAITING_CONTINUE = Symbol('awaiting 100-continue');
type ContinueRequest = IncomingMessage & { [AWAITING_CONTINUE]?: ServerResponse };

/** `req` asked `Expect: 100-continue`: readBody sends the 100 when it starts reading. */
export function awaitContinue(req: IncomingMessage, res: ServerResponse): void {
  (req as ContinueRequest)[AWAITING_CONTINUE] = res;
}

/** The refusal of a body read under way, while it waits for its chunks (the slow path only): the
 *  shutdown drain ends such reads (stopBodyRead) when its time runs out. */
const READING = Symbol('body read under way');
type ReadingRequest = IncomingMessage & { [READING]?: (err: Error) => void };

/** Ends `req`'s body read, if one is under way, with `err` (nothing otherwise): the drain's end
 *  does not wait for a body that trickles in (lib/app.ts close). */
export function stopBodyRead(req: IncomingMessage, err: Error): void {
  (req as ReadingRequest)[READING]?.(err);
}

export function readBody(req: IncomingMessage, limits: number | BodyLimits = BODY_CAP): Promise<Buffer> {
  const { cap = BODY_CAP, totalMs = 0, idleMs = 0, onTimeout } = typeof limits === 'number' ? { cap: limits } : limits;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) return Promise.reject(new GatewayError('request_too_large'));
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && !isIdentity(coding)) return Promise.reject(new GatewayError('unsupported_content_encoding'));
  const waiting = (req as ContinueRequest)[AWAITING_CONTINUE];
  if (waiting !== undefined) {
    (req as ContinueRequest)[AWAITING_CONTINUE] = undefined;
    if (!waiting.headersSent && !waiting.destroyed) waiting.writeContinue();
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // A body that came with its headers (node's parser read the whole message in one go, as with
  // most requests) already waits in the request's buffer: taken at once, without listeners,
  // timers or flowing mode, whose resume and 'end' take further turns of the loop. node marks the
  // request complete only at a later read of the socket, so a buffer holding every declared byte
  // is whole too (what autocannon and most clients that send a request in one write get here).
  if (!req.readableFlowing && (req.complete || req.readableLength === declared)) {
    if (req.readableLength > cap) return Promise.reject(new GatewayError('request_too_large'));
    const body = (req.read() as Buffer | null) ?? Buffer.alloc(0);
    // The message's end is still to be read: flowing, the request then ends as any whose body
    // was read (node drops its hold on a finished request at its 'end').
    if (!req.complete) req.resume();
    return Promise.resolve(body);
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let total: NodeJS.Timeout | undefined;
    let idle: NodeJS.Timeout | undefined;
    // Every listener comes off when the body is read or refused: one left on the request (which
    // lives as long as its answer streams) would keep this scope, and every chunk in `parts`
    // with it, for minutes.
    const stop = (): void => {
      (req as ReadingRequest)[READING] = undefined;
      clearTimeout(total);
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const fail = (err: Error): void => {
      stop();
      req.pause();
      reject(err);
    };
    const timedOut = (edge: 'request_body' | 'request_body_idle') => (): void => {
      onTimeout?.(edge);
      fail(new GatewayError('request_timeout', edge === 'request_body'
        ? `The request body did not arrive within ${totalMs} ms.`
        : `The request body paused for more than ${idleMs} ms.`));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > cap) { fail(new GatewayError('request_too_large')); return; }
      parts.push(chunk);
      if (idleMs) idle!.refresh();
    };
    const onEnd = (): void => {
      stop();
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
    };
    const onError = (err: Error): void => { stop(); reject(err); };
    const onAborted = (): void => { stop(); reject(new GatewayError('client_closed_request')); };
    if (totalMs) total = setTimeout(timedOut('request_body'), totalMs);
    if (idleMs) idle = setTimeout(timedOut('request_body_idle'), idleMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    (req as ReadingRequest)[READING] = fail;
  });
}

/** `identity`, or nothing: the only codings of a body the gateway reads. */
const isIdentity = (coding: string): boolean => {
  const c = coding.trim().toLowerCase();
  return c === '' || c === 'identity';
};

const defaultLimits = new WeakMap<Services, BodyLimits>();

/** The configured body limits of this gateway (timeouts.request_body_ms / request_body_idle_ms);
 *  those with the default cap, which every inference request reads, are made once. */
export function requestBodyLimits(svc: Services, cap = BODY_CAP): BodyLimits {
  if (cap === BODY_CAP) {
    let limits = defaultLimits.get(svc);
    if (!limits) defaultLimits.set(svc, limits = bodyLimits(svc, cap));
    return limits;
  }
  return bodyLimits(svc, cap);
}

function bodyLimits(svc: Services, cap: number): BodyLimits {
  return {
    cap, totalMs: svc.config.timeouts.request_body_ms, idleMs: svc.config.timeouts.request_body_idle_ms,
    onTimeout: (edge) => svc.metrics.timeouts.inc({ edge }),
  };
}

export function parseJsonObject(buf: Buffer): Record<string, any> {
  let parsed: unknown;
  try { parsed = JSON.parse(buf.toString('utf8')); } catch { throw new GatewayError('invalid_json'); }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  return parsed as Record<string, any>;
}
