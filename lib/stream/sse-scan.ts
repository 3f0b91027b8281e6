// Passthrough framing without decoding (bench/README.md "passthrough" measures it): a
// caller in the provider's own format gets the provider's bytes, cut only at frame boundaries so a
// stream that breaks later never ends inside half a frame. Finding the boundary is a native
// search for line feeds from the end of the chunk; finding the frames that carry usage is one
// regular-expression pass over the chunk's bytes, read as latin1 (one character per byte, so a
// match's index is its byte offset), for all of the tap's markers at once. Only a frame that
// contains a marker is decoded (text, fields, JSON); every other frame passes as bytes.
import { parseFrame, type RawFrame } from '../sse.ts';

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);
/** Each tap's markers as one pattern, made once. */
const PATTERNS = new WeakMap<string[], RegExp>();

// A frame ends with a blank line: "\n\n" or "\r\n\r\n". Boundaries are found from the line feeds
// alone (a native single-byte search, a few per frame), never by searching "\r\n\r\n" through
// text that has none: a stream framed with "\n" would pay a whole scan of every chunk for it.

/** Does the line feed at `lf` end a blank line that starts at or after `from`? */
function endsBlankLine(buf: Buffer, lf: number, from: number): boolean {
  if (lf - 1 < from) return false;
  const before = buf[lf - 1];
  return before === LF || (before === CR && lf - 3 >= from && buf[lf - 2] === LF && buf[lf - 3] === CR);
}

/** End (exclusive) of the last blank line that ends at or before `limit`, 0 when there is none:
 *  the start of the frame that holds byte `limit`, or with `limit` = length, the end of the last
 *  complete frame. */
function boundaryBefore(buf: Buffer, limit: number): number {
  for (let lf = limit > 0 ? buf.lastIndexOf(LF, limit - 1) : -1; lf > 0; lf = buf.lastIndexOf(LF, lf - 1)) {
    if (endsBlankLine(buf, lf, 0)) return lf + 1;
  }
  return 0;
}

/** End (exclusive, separator included) of the frame that starts at `at`; the region ends at a boundary. */
function frameEnd(buf: Buffer, at: number): number {
  for (let lf = buf.indexOf(LF, at); lf !== -1; lf = buf.indexOf(LF, lf + 1)) {
    if (endsBlankLine(buf, lf, at)) return lf + 1;
  }
  return buf.length;
}

export class PassthroughScanner {
  private carry: Buffer = EMPTY;
  private readonly pattern: RegExp;

  constructor(markers: string[]) {
    let pattern = PATTERNS.get(markers);
    if (!pattern) {
      // Three substring searches of a 5.5 KB stream took 4.5 µs (node's search is slow on text
      // full of the markers' own prefixes, such as "response."); one pass for all of them 1.1 µs.
      pattern = new RegExp(markers.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
      PATTERNS.set(markers, pattern);
    }
    this.pattern = pattern;
  }

  /** The complete frames of what came so far (a view, no copy; empty when none is complete yet).
   *  `onCandidate` sees each complete frame that contains a marker, decoded, in stream order, and
   *  may return bytes to put in its place. */
  push(chunk: Buffer, onCandidate: (frame: RawFrame) => Buffer | undefined): Buffer {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = boundaryBefore(buf, buf.length);
    // A copy, not a view: a partial frame waiting for its next chunk (maybe for seconds, on a slow
    // stream) must not keep the whole chunk it came in alive.
    this.carry = end === buf.length ? EMPTY : Buffer.from(buf.subarray(end));
    if (end === 0) return EMPTY;
    const region = end === buf.length ? buf : buf.subarray(0, end);
    return this.candidates(region, onCandidate);
  }

  /** What is left when the body ends: a last frame without its blank line, as it came. */
  end(onCandidate: (frame: RawFrame) => Buffer | undefined): Buffer {
    const rest = this.carry;
    this.carry = EMPTY;
    return rest.length ? this.candidates(rest, onCandidate) : EMPTY;
  }

  private candidates(region: Buffer, onCandidate: (frame: RawFrame) => Buffer | undefined): Buffer {
    const text = region.toString('latin1');
    const pattern = this.pattern;   // shared by the tap's scanners: used synchronously, from index 0
    pattern.lastIndex = 0;
    let out: Buffer[] | undefined;
    let copied = 0;
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
      const start = boundaryBefore(region, m.index);
      const end = frameEnd(region, start);
      pattern.lastIndex = end;      // a frame is read once, however many markers it holds
      const raw = region.subarray(start, end);
      const frame = parseFrame(raw.toString('utf8')) as RawFrame | undefined;
      if (!frame) continue;
      frame.raw = raw;
      const replacement = onCandidate(frame);
      if (replacement === undefined) continue;
      out ??= [];
      out.push(region.subarray(copied, start), replacement);
      copied = end;
    }
    if (!out) return region;
    out.push(region.subarray(copied));
    return Buffer.concat(out);
  }
}
