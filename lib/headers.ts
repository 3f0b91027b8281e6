// Response headers as the gateway writes them (node's writeHead takes numbers as well as strings).
// Ground floor: the stream floor decides the x-service-* headers of an answer, the http floor sends them.
export type Headers = Record<string, string | number>;

/** The head of every event stream the gateway answers. `x-accel-buffering: no` tells nginx (and
 *  proxies that honour it) not to buffer the stream: with nginx's defaults a stream reached the
 *  caller in 4–8 KB bursts, its first event after 6 s on a slow one (README "Behind nginx"). */
export const EVENT_STREAM_HEAD: Readonly<Headers> = {
  'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no',
};
