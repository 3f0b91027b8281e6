// What a provider route declares (providers declare, shared code executes, so a route is one file):
// how to match, authenticate and decode a request, and how to encode an Answer as a body or as
// stream frames. server.ts runs every route through the same request life.
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteName } from '../../routes.ts';
import type { Answer } from '../answer.ts';
import type { Frame } from '../frames.ts';
import type { DecodeResult, Decoded } from '../prompt.ts';
import type { ErrorFamily, ErrorName, ErrorReply } from '../errors.ts';

export interface RequestInfo {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Captures from the path pattern (e.g. model, modelId). */
  params: Record<string, string>;
  rawBody: Buffer;
}

export interface Rejection { name: ErrorName; message: string; status?: number }

/** Server-wide state a route may consult (issued OAuth tokens, AWS secrets). */
export interface RouteContext {
  isIssuedToken(token: string): boolean;
  awsSecrets?: Record<string, string>;
}

/** A stream's frames, and the format's own mid-stream failure (sent by `error_after_tokens`),
 *  which may depend on how far the frames got (sequence numbers). */
export interface StreamEncoding {
  frames: Iterable<Frame>;
  error(message: string): Frame[];
}

export interface RouteAdapter {
  name: RouteName;
  family: ErrorFamily;
  /** The captures of a matching path (model, verb, …), or undefined when the path is not ours. */
  match(path: string): Record<string, string> | undefined;
  authenticate(info: RequestInfo, ctx: RouteContext): Rejection | undefined | Promise<Rejection | undefined>;
  decode(body: unknown, info: RequestInfo): DecodeResult;
  /** The flex queue's refusal, for routes that have a flex tier. */
  flexRefusal?: { name: ErrorName; status: number; message: string };
  streamContentType: string;
  encodeBody(answer: Answer, decoded: Decoded): unknown;
  encodeStream(answer: Answer, decoded: Decoded): StreamEncoding;
  /** A recorded payload line in this route's framing, and what follows the last line. */
  replayFrame(line: string): Frame;
  replayTail: Frame[];
  /** Provider-held conversation state: the id an answer is stored under (undefined when the
   *  request asked not to store it), the stored id a request refers to, and the API's answer to
   *  an id it never issued. */
  state?: {
    issued(answer: Answer, body: Record<string, unknown>): string | undefined;
    referenced(body: Record<string, unknown>): string | undefined;
    notFound(id: string): ErrorReply;
  };
  /** Response headers added to a successful answer (request ids, tier headers). */
  headers?(answer: Answer | undefined, decoded: Decoded): Record<string, string>;
}

/** The event name of a recorded line: its `type` (or `event_type`), found even in broken JSON. */
export function recordedEventName(line: string, key: 'type' | 'event_type'): string | undefined {
  try {
    const v = (JSON.parse(line) as Record<string, unknown>)[key];
    if (typeof v === 'string') return v;
  } catch { /* not valid JSON: fall through to a textual match */ }
  const m = new RegExp(`"${key}"\\s*:\\s*"([^"]+)"`).exec(line);
  return m?.[1];
}

/** decodeURIComponent that leaves a malformed escape as it is instead of throwing. */
export function decodeSegment(segment: string): string {
  try { return decodeURIComponent(segment); } catch { return segment; }
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth !== 'string') return undefined;
  const m = /^Bearer\s+(\S.*)$/i.exec(auth.trim());
  return m?.[1]?.trim() || undefined;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
