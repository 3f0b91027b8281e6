// Incremental SSE framing at the byte level (no decode to text and back): find the blank line that ends a
// frame with Buffer.indexOf, keep the tail for the next chunk, and hand out each frame with its
// raw bytes so a passthrough can forward them untouched. Ground floor: the codecs write frames, the
// provider adapters and the stream floor read them.

/** One server-sent event as it came off the wire. `event` is absent for data-only formats. */
export interface SSEFrame { event?: string; data: string }

export interface RawFrame extends SSEFrame { raw: Buffer }

const LF2 = Buffer.from('\n\n');
const CRLF2 = Buffer.from('\r\n\r\n');

export class SSEParser {
  private tail: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RawFrame[] {
    let buf = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const frames: RawFrame[] = [];
    // Each separator is searched again only once the frame passes it (not from the start of the
    // rest for every frame: a stream without CRLF would rescan its whole chunk once per frame).
    let lf = buf.indexOf(LF2);
    let crlf = buf.indexOf(CRLF2);
    for (;;) {
      let end: number;
      let sep: number;
      if (lf === -1 && crlf === -1) break;
      if (crlf !== -1 && (lf === -1 || crlf < lf)) { end = crlf; sep = 4; } else { end = lf; sep = 2; }
      const raw = buf.subarray(0, end + sep);
      const frame = parseFrame(raw.toString('utf8', 0, end)) as RawFrame | undefined;
      if (frame) { frame.raw = raw; frames.push(frame); }
      const next = end + sep;
      buf = buf.subarray(next);
      if (lf !== -1) lf = lf >= next ? lf - next : buf.indexOf(LF2);
      if (crlf !== -1) crlf = crlf >= next ? crlf - next : buf.indexOf(CRLF2);
    }
    this.tail = buf;
    return frames;
  }

  /** Whatever is left when the body ends (a final frame without its blank line). */
  end(): RawFrame[] {
    if (!this.tail.length) return [];
    const raw = this.tail;
    this.tail = Buffer.alloc(0);
    const frame = parseFrame(raw.toString('utf8')) as RawFrame | undefined;
    if (!frame) return [];
    frame.raw = raw;
    return [frame];
  }
}

export function parseFrame(text: string): SSEFrame | undefined {
  let event: string | undefined;
  let data: string | undefined;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const lineEnd = end > start && text.charCodeAt(end - 1) === 13 /* \r */ ? end - 1 : end;
    if (lineEnd > start && text.charCodeAt(start) !== 58 /* ':' comment */) {
      const colon = text.indexOf(':', start);
      const hasValue = colon !== -1 && colon < lineEnd;
      const field = text.slice(start, hasValue ? colon : lineEnd);
      let v = hasValue ? colon + 1 : lineEnd;
      if (text.charCodeAt(v) === 32 && v < lineEnd) v++;
      const value = text.slice(v, lineEnd);
      if (field === 'data') data = data === undefined ? value : data + '\n' + value;
      else if (field === 'event') event = value;
    }
    start = end + 1;
  }
  if (data === undefined) return undefined;
  return event === undefined ? { data } : { event, data };
}

/** Serialise one frame; `event` omitted for data-only formats. */
export function formatFrame(data: string, event?: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}
