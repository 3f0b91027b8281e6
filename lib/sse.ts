// Incremental SSE framing for whoever decodes a stream's events (translation, assembly): each
// chunk is decoded to text once (a UTF-8 sequence cut between chunks waits for its rest), the
// blank lines that end frames are found in the text, and each frame's fields are slices of it.
// A passthrough never frames this way: it forwards the provider's bytes (lib/stream/sse-scan.ts).
// Ground floor: the codecs write frames, the provider adapters and the stream floor read them.
import { StringDecoder } from 'node:string_decoder';

/** One server-sent event as it came off the wire. `event` is absent for data-only formats. */
export interface SSEFrame { event?: string; data: string }

export interface RawFrame extends SSEFrame { raw: Buffer }

export class SSEParser {
  private readonly decoder = new StringDecoder('utf8');
  private tail = '';

  push(chunk: Buffer): SSEFrame[] {
    const decoded = this.decoder.write(chunk);
    const text = this.tail ? this.tail + decoded : decoded;
    const frames: SSEFrame[] = [];
    let start = 0;
    // Each separator is searched again only once a frame passes it (not from the start of the
    // rest for every frame: a stream without CRLF would rescan its whole chunk once per frame).
    let lf = text.indexOf('\n\n');
    let crlf = text.indexOf('\r\n\r\n');
    while (lf !== -1 || crlf !== -1) {
      const [end, sep] = crlf !== -1 && (lf === -1 || crlf < lf) ? [crlf, 4] : [lf, 2];
      const frame = parseFrame(text.slice(start, end));
      if (frame) frames.push(frame);
      start = end + sep;
      if (lf !== -1 && lf < start) lf = text.indexOf('\n\n', start);
      if (crlf !== -1 && crlf < start) crlf = text.indexOf('\r\n\r\n', start);
    }
    this.tail = start === text.length ? '' : text.slice(start);
    return frames;
  }

  /** Whatever is left when the body ends (a final frame without its blank line). */
  end(): SSEFrame[] {
    const rest = this.tail + this.decoder.end();
    this.tail = '';
    const frame = rest ? parseFrame(rest) : undefined;
    return frame ? [frame] : [];
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
