// A frame is one unit the stream writer sends: its bytes and how many output tokens it carries
// (for pacing and for the reset/error-after-N-tokens faults). SSE helpers build the two framings.

export interface Frame { bytes: string | Uint8Array; tokens: number }

export const sseEvent = (event: string, payload: unknown, tokens = 0): Frame =>
  ({ bytes: `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`, tokens });

export const sseData = (payload: unknown, tokens = 0): Frame =>
  ({ bytes: `data: ${JSON.stringify(payload)}\n\n`, tokens });

/** A recorded payload line sent untouched, with or without an event name. */
export const sseRaw = (line: string, event?: string, tokens = 1): Frame =>
  ({ bytes: event === undefined ? `data: ${line}\n\n` : `event: ${event}\ndata: ${line}\n\n`, tokens });

export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';
