// A route adapter is mostly data: which wire formats it speaks, where, how it authenticates, how
// the flex tier is asked for, and how its stream is framed. Shared code (lib/stream/attempt.ts)
// executes; it never branches on a route's name, so adding a route touches only its adapter.
// One file per provider API, named after the API it speaks (openai, gemini, anthropic, vertex,
// bedrock); each exports the adapter of the route that speaks it (vendorA, vendorB, vendorC,
// cloudA, cloudB).
import type { GatewayError } from '../errors.ts';
import type { FormatName } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';
import type { RawFrame, SSEFrame } from '../sse.ts';

export interface UpstreamRequest {
  origin: string;              // scheme://host:port — selects the undici pool
  path: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

export interface BuildArgs {
  wire: FormatName;            // which of the adapter's wire formats this call uses
  body: Record<string, any>;   // the provider body in that wire format (already encoded)
  model: string;               // the model id the route expects
  tier: Tier;
  stream: boolean;             // upstream streaming (always true unless the "now" non-stream fast path)
  credential: unknown;         // the org's own key or the managed key for this route
  translated: boolean;         // the body was translated from another caller format
  /** A passthrough: the caller's body bytes, forwarded with the route's members cut and set. */
  raw?: Buffer;
  betas?: readonly string[];   // understood `anthropic-beta` values of a Messages caller (lib/formats/messages/betas.ts)
}

/** Cuts a body into frames: an SSE parser's (decoded only) or a route's own (with their bytes). */
export interface Framer<F extends SSEFrame = RawFrame> {
  push(chunk: Buffer): F[];
  end(): F[];
  /** A frame a provider sends in place of an answer inside a 200 stream (cloud_b's exception
   *  messages): as the stream's first frame it fails the attempt with this failure, before commit,
   *  so it is retried or fallen back from; after commit it is an ordinary error frame. */
  refusal?(frame: F): Failure | undefined;
}

export interface RouteAdapter {
  route: RouteName;
  /** Wire formats this route speaks; the first is the canonical one. */
  wires: FormatName[];
  /** Can the flex tier be asked for on this route (a route-level fact; models decide too). */
  flex: boolean;
  build(args: BuildArgs): Promise<UpstreamRequest> | UpstreamRequest;
  /** The route's own token counter (vendor C: POST /v1/messages/count_tokens), when it has one. */
  countTokens?(args: { body: Record<string, any>; credential: unknown; betas?: readonly string[] }): UpstreamRequest;
  /** Byte framing of the streamed body; SSE unless the route says otherwise. */
  framer?(): Framer;
  /** The provider answered 401 to an attempt made with `credential`: a route whose auth is
   *  minted and cached per credential (cloud_a's access token) forgets it, so the retry or the
   *  next request carries a new one. Called before the attempt's failure is acted on. */
  authRejected?(credential: unknown): void;
}

export interface Failure {
  kind: 'capacity' | 'transient' | 'fatal';
  status: number;
  message: string;
  retryAfterMs?: number;
  upstreamCode?: string;
  /** A billing or spend-cap refusal (never retried): on a managed route it is the service's account's. */
  billing?: true;
  /** Set when the gateway itself refused (capacity): the error code to answer if nothing else serves. */
  gatewayCode?: 'rate_limit_exceeded' | 'upstream_capacity_exceeded';
  /** Set when the caller's request could not be built for the provider (nothing was sent): the
   *  caller's own error, answered as it is. */
  callerError?: GatewayError;
}
