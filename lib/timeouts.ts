// Every edge's time limit. Ground floor: the http floor reads the request edges, the stream floor
// the upstream ones, the app the shutdown drain; lib/config.ts merges a file's values over these.

/** Every edge's time limit, in ms (0 = none). Defaults in DEFAULT_TIMEOUTS; README "Timeouts". */
export interface TimeoutsConfig {
  /** From connection (or the previous request on it) to the end of the request headers. */
  request_headers_ms: number;
  /** From the end of the headers to the last byte of the request body. */
  request_body_ms: number;
  /** Longest gap between two chunks of the request body. */
  request_body_idle_ms: number;
  /** TCP (and TLS) connect to a provider. */
  upstream_connect_ms: number;
  /** From sending a streamed upstream request to its response headers. */
  upstream_first_byte_ms: number;
  /** Longest gap between two chunks of an upstream body (also bounds headers → first event). */
  upstream_idle_ms: number;
  /** A non-streamed upstream call (the "now" fast path) waits this long for its whole answer. */
  upstream_nonstream_ms: number;
  /** A caller that reads nothing of a streamed answer this long is cut off like a disconnect
   *  (the responder's backpressure cut-off, lib/stream/respond.ts). */
  caller_idle_ms: number;
  /** On SIGTERM: how long streams in flight may run before they are aborted. */
  shutdown_drain_ms: number;
  /** A streamed request whose race has not committed this long after arrival gets its 200 and
   *  event-stream headers at once, kept alive by SSE comment lines until commit: clients give up
   *  waiting for response headers (node's fetch, under the OpenAI SDK, after 300 s) before a
   *  `start_within` of up to 10 minutes has run out. */
  stream_head_ms: number;
}

export const DEFAULT_TIMEOUTS: TimeoutsConfig = {
  request_headers_ms: 30_000,
  request_body_ms: 60_000,
  request_body_idle_ms: 15_000,
  upstream_connect_ms: 10_000,
  upstream_first_byte_ms: 60_000,
  upstream_idle_ms: 120_000,
  upstream_nonstream_ms: 600_000,
  caller_idle_ms: 60_000,
  shutdown_drain_ms: 10_000,
  stream_head_ms: 240_000,
};
