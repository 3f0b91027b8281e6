// Incremental SSE framing for whoever decodes a stream's events (translation, assembly): each
// chunk is decoded to text once (a UTF-8 sequence cut between chunks waits for its rest), the
// blank lines that end frames are found in the text, and each frame's fields are slices of it.
// A passthrough never frames this way: it forwards the provider's bytes (lib/stream/sse-scan.ts).
// Ground floor: the codecs write frames, the provider adapters and the stream floor read them.
import { StringDecoder } from 'node:string_decoder';

/** One server-sent event as it came off the wire. `event` is absent for data-only formats. */
export interface SSEFrame { event?: string; data: string }

export interface RawFrame extends SSEFrame { raw: Buffer }

/** Most one frame (event) may hold while its blank line has not come. A frame is held whole until
 *  then, and an upstream that never sends one (lines of data with no blank line) would otherwise
 *  grow it until the process runs out of memory, with no idle timeout to stop it while bytes keep
 *  coming. The largest real events are a Responses stream's terminal one, which repeats the whole
 *  output, the request's instructions and its tools (hundreds of KB for a coding agent): 32 MiB is
 *  far above any of them. Passed, the stream fails as a malformed upstream. */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;

export function frameTooLarge(limit: number): Error {
  return new Error(`an upstream event grew past ${limit} bytes without the blank line that ends it`);
}

/** Pieces of a frame kept as they came are joined this many at a time, so a provider writing a few
 *  bytes at a time costs one list slot per this many chunks, not one per chunk. */
const JOIN_EVERY = 64;

export class SSEParser {
  private readonly decoder = new StringDecoder('utf8');
  /** The start of a frame whose blank line has not come yet, in the pieces it came in: joined once
   *  when the frame ends. Joined to each chunk instead, it was copied and searched again per chunk,
   *  and a frame that never ended cost the square of its size. */
  private pending: string[] = [];
  private pendingLength = 0;
  /** How many of `pending`'s first pieces are already JOIN_EVERY pieces joined. */
  private joined = 0;

  /** `limit`: the most characters one frame may hold while it waits for its blank line. */
  constructor(private readonly limit = MAX_FRAME_BYTES) {}

  push(chunk: Buffer): SSEFrame[] {
    const text = this.decoder.write(chunk);
    const frames: SSEFrame[] = [];
    const start = this.pendingLength ? this.endPending(text, frames) : 0;
    if (start === -1) return frames;
    return this.framesOf(text, start, frames);
  }

  /** Whatever is left when the body ends (a final frame without its blank line). */
  end(): SSEFrame[] {
    const rest = this.takePending() + this.decoder.end();
    const frame = rest ? parseFrame(rest) : undefined;
    return frame ? [frame] : [];
  }

  /** The frames of `text` from `start`, each ended by a blank line; the rest waits for the next chunk. */
  private framesOf(text: string, start: number, frames: SSEFrame[]): SSEFrame[] {
    // Each separator is searched again only once a frame passes it (not from the start of the
    // rest for every frame: a stream without CRLF would rescan its whole chunk once per frame).
    let lf = text.indexOf('\n\n', start);
    let crlf = text.indexOf('\r\n\r\n', start);
    while (lf !== -1 || crlf !== -1) {
      const [end, sep] = crlf !== -1 && (lf === -1 || crlf < lf) ? [crlf, 4] : [lf, 2];
      const frame = parseFrame(text.slice(start, end));
      if (frame) frames.push(frame);
      start = end + sep;
      if (lf !== -1 && lf < start) lf = text.indexOf('\n\n', start);
      if (crlf !== -1 && crlf < start) crlf = text.indexOf('\r\n\r\n', start);
    }
    if (start < text.length) this.hold(text.slice(start));
    return frames;
  }

  /** Ends the pending frame if `text` brings its blank line: returns where the next frame starts
   *  in `text`, or -1 when the frame goes on (`text` then joins it). Only `text` and the pending
   *  frame's last characters are searched: the pending frame itself holds no blank line. */
  private endPending(text: string, frames: SSEFrame[]): number {
    // A blank line that begins among the pending frame's last three characters, the earliest first.
    for (let at = -3; at < 0; at++) {
      const sep = this.code(text, at) === 13 && this.code(text, at + 1) === 10 && this.code(text, at + 2) === 13 && this.code(text, at + 3) === 10 ? 4
        : this.code(text, at) === 10 && this.code(text, at + 1) === 10 ? 2 : 0;
      if (sep === 0) continue;
      const whole = this.takePending();
      const frame = parseFrame(whole.slice(0, whole.length + at));
      if (frame) frames.push(frame);
      return at + sep;
    }
    const lf = text.indexOf('\n\n');
    const crlf = text.indexOf('\r\n\r\n');
    const [end, sep] = crlf !== -1 && (lf === -1 || crlf < lf) ? [crlf, 4] : [lf, 2];
    if (end === -1) { this.hold(text); return -1; }
    const frame = parseFrame(this.takePending() + text.slice(0, end));
    if (frame) frames.push(frame);
    return end + sep;
  }

  /** The code of character `i` of the pending frame followed by `text`, counted from the start of
   *  `text` (negative: in the pending frame); NaN past either end. */
  private code(text: string, i: number): number {
    if (i >= 0) return text.charCodeAt(i);
    for (let p = this.pending.length - 1; p >= 0; p--) {
      const piece = this.pending[p]!;
      if (-i <= piece.length) return piece.charCodeAt(piece.length + i);
      i += piece.length;
    }
    return NaN;
  }

  /** Adds `text` to the frame waiting for its blank line. */
  private hold(text: string): void {
    if (!text) return;
    if ((this.pendingLength += text.length) > this.limit) throw frameTooLarge(this.limit);
    const pending = this.pending;
    pending.push(text);
    if (pending.length - this.joined === JOIN_EVERY) pending.push(pending.splice(this.joined++).join(''));
  }

  private takePending(): string {
    if (!this.pendingLength) return '';
    const whole = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending.length = 0;
    this.joined = 0;
    this.pendingLength = 0;
    return whole;
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
