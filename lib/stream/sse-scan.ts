// Passthrough framing without decoding (bench/README.md "passthrough" measures it): a
// caller in the provider's own format gets the provider's bytes, cut only at frame boundaries so a
// stream that breaks later never ends inside half a frame. Finding the boundary is one native
// search from the end of the chunk; finding the frame that carries usage is a native substring
// search for the tap's markers. Only a frame that contains a marker is decoded (text, fields,
// JSON); every other frame passes as bytes, with no string or object made for it.
import { parseFrame, type RawFrame } from '../sse.ts';

const LF2 = Buffer.from('\n\n');
const CRLF2 = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);
/** Each tap's markers, encoded once. */
const ENCODED = new WeakMap<string[], Buffer[]>();

/** End (exclusive) of the last complete frame in buf, 0 when there is none. */
function lastBoundary(buf: Buffer): number {
  const lf = buf.lastIndexOf(LF2);
  const crlf = buf.lastIndexOf(CRLF2);
  return Math.max(lf === -1 ? 0 : lf + 2, crlf === -1 ? 0 : crlf + 4);
}

/** Start of the frame holding byte `at`: just after the previous boundary. */
function frameStart(buf: Buffer, at: number): number {
  const lf = at >= 2 ? buf.lastIndexOf(LF2, at - 2) : -1;
  const crlf = at >= 4 ? buf.lastIndexOf(CRLF2, at - 4) : -1;
  return Math.max(lf === -1 ? 0 : lf + 2, crlf === -1 ? 0 : crlf + 4);
}

/** End (exclusive, separator included) of the frame holding byte `at`; the region ends at a boundary. */
function frameEnd(buf: Buffer, at: number): number {
  const lf = buf.indexOf(LF2, at);
  const crlf = buf.indexOf(CRLF2, at);
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return crlf + 4;
  return lf === -1 ? buf.length : lf + 2;
}

export class PassthroughScanner {
  private carry: Buffer = EMPTY;
  private readonly markers: Buffer[];

  constructor(markers: string[]) {
    let encoded = ENCODED.get(markers);
    if (!encoded) { encoded = markers.map((m) => Buffer.from(m)); ENCODED.set(markers, encoded); }
    this.markers = encoded;
  }

  /** The complete frames of what came so far (a view, no copy; empty when none is complete yet).
   *  `onCandidate` sees each complete frame that contains a marker, decoded, in stream order, and
   *  may return bytes to put in its place. */
  push(chunk: Buffer, onCandidate: (frame: RawFrame) => Buffer | undefined): Buffer {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = lastBoundary(buf);
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
    let starts: number[] | undefined;
    for (const marker of this.markers) {
      for (let at = region.indexOf(marker); at !== -1; at = region.indexOf(marker, at + marker.length)) {
        const start = frameStart(region, at);
        if (!starts) starts = [start];
        else if (!starts.includes(start)) starts.push(start);
      }
    }
    if (!starts) return region;
    if (starts.length > 1) starts.sort((a, b) => a - b);
    let out: Buffer[] | undefined;
    let copied = 0;
    for (const start of starts) {
      const end = frameEnd(region, start);
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
