// Passthrough framing without decoding (bench/README.md "passthrough" measures it): a
// caller in the provider's own format gets the provider's bytes, cut only at frame boundaries so a
// stream that breaks later never ends inside half a frame. Finding the boundary is a native
// search for line feeds from the end of the chunk; finding the frames that carry usage is a
// native substring search for each of the tap's markers (each a whole pass over the chunk, so a
// tap whose markers are alternatives stops at the one it finds: `once`). Only a frame that contains
// a marker is decoded (text, fields, JSON); every other frame passes as bytes, with no string or
// object made for it (a regular expression over the chunk would find all markers in one pass,
// 1.1 µs against 4.5 on the bench's 5.5 KB stream, but needs the chunk as a string: as many bytes
// allocated as the stream carries).
import { frameTooLarge, MAX_FRAME_BYTES, parseFrame, type RawFrame } from '../sse.ts';

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);
/** Each tap's markers, encoded once. */
const ENCODED = new WeakMap<readonly string[], Buffer[]>();

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

/** The last blank line that begins in the `held` bytes and ends in `chunk`, which follows them:
 *  its end in `chunk`, 0 when there is none. Only a line feed among the chunk's first three bytes
 *  can end one. */
function boundaryAcross(held: Buffer, chunk: Buffer): number {
  for (let lf = Math.min(2, chunk.length - 1); lf >= 0; lf--) {
    if (chunk[lf] !== LF) continue;
    const before = byteAt(held, chunk, lf - 1);
    if (before === LF || (before === CR && byteAt(held, chunk, lf - 2) === LF && byteAt(held, chunk, lf - 3) === CR)) return lf + 1;
  }
  return 0;
}

/** Byte `i` of `held` followed by `chunk`, counted from the chunk's start (negative: in `held`). */
function byteAt(held: Buffer, chunk: Buffer, i: number): number | undefined {
  return i >= 0 ? chunk[i] : held[held.length + i];
}

/** End (exclusive, separator included) of the first frame that starts at `at` and is complete,
 *  -1 when its blank line has not come yet. `from`: where to look for its blank line's line feed,
 *  when the caller knows none before it ends one (the bytes it searched already). */
export function frameEndAfter(buf: Buffer, at: number, from = at): number {
  for (let lf = buf.indexOf(LF, from); lf !== -1; lf = buf.indexOf(LF, lf + 1)) {
    if (endsBlankLine(buf, lf, at)) return lf + 1;
  }
  return -1;
}

/** End of the frame that starts at `at` in a region that ends at a boundary (or at the body's end). */
function frameEnd(buf: Buffer, at: number): number {
  const end = frameEndAfter(buf, at);
  return end === -1 ? buf.length : end;
}

/** Bytes that wait for the blank line that ends their frame, in a buffer that doubles when full:
 *  each byte is copied a bounded number of times however finely the frame is split. Joined to
 *  each chunk instead, a frame was copied and searched again per chunk, and one that never ended
 *  cost the square of its size. Past `limit` bytes the frame is a malformed upstream's. */
export class PendingBytes {
  /** What is held: the first piece as it was added, then a view of `store`. */
  bytes: Buffer = EMPTY;
  /** Where the pieces after the first go; it holds `bytes` from its start. */
  private store: Buffer = EMPTY;

  constructor(private readonly limit = MAX_FRAME_BYTES) {}

  /** Adds `piece` (the first one is kept as it is: the caller decides whether it is a copy). */
  add(piece: Buffer): void {
    const held = this.bytes.length;
    const need = held + piece.length;
    if (need > this.limit) throw frameTooLarge(this.limit);
    if (held === 0) { this.bytes = piece; return; }
    if (need > this.store.length) {
      const grown = Buffer.allocUnsafe(Math.min(Math.max(need, 2 * held), this.limit));
      this.bytes.copy(grown);
      this.store = grown;
    }
    piece.copy(this.store, held);
    this.bytes = this.store.subarray(0, need);
  }

  /** The bytes held followed by `last` (the frame's end), copied once; nothing is held after. */
  take(last: Buffer = EMPTY): Buffer {
    const held = this.bytes;
    const need = held.length + last.length;
    let whole: Buffer;
    if (!last.length) whole = held;
    else if (need <= this.store.length) { last.copy(this.store, held.length); whole = this.store.subarray(0, need); }
    else whole = Buffer.concat([held, last], need);
    this.bytes = this.store = EMPTY;
    return whole;
  }
}

export class PassthroughScanner {
  /** A partial frame waiting for its next chunk (made when a frame first spans two). */
  private carry: PendingBytes | undefined;
  private readonly markers: Buffer[];
  private searching = true;

  /** `once`: the markers name alternatives of one frame that a stream carries once (a Responses
   *  stream ends with one of three terminal events). They are then searched one at a time, and
   *  the search stops for good when the consumer says it has read that frame (found()): a stream
   *  that arrives in one chunk is not searched again for the two alternatives it did not end with.
   *  `frameLimit`: the most bytes a frame may hold while its blank line has not come (push()
   *  throws past it, which fails the stream). */
  constructor(markers: string[], private readonly once = false, private readonly frameLimit = MAX_FRAME_BYTES) {
    let encoded = ENCODED.get(markers);
    if (!encoded) { encoded = markers.map((m) => Buffer.from(m)); ENCODED.set(markers, encoded); }
    this.markers = encoded;
  }

  /** The consumer has read the frame a `once` scanner looks for: nothing after it is searched. */
  found(): void {
    if (this.once) this.searching = false;
  }

  /** The complete frames of what came so far (a view, no copy; empty when none is complete yet).
   *  `onCandidate` sees each complete frame that contains a marker, decoded, in stream order, with
   *  the bytes before it in what goes out (a view), and may return bytes to put in its place. */
  push(chunk: Buffer, onCandidate: (frame: RawFrame, before: Buffer) => Buffer | undefined): Buffer {
    const carry = this.carry;
    const carried = carry !== undefined && carry.bytes.length > 0;
    // Only this chunk is searched: what is carried holds no blank line.
    let end = boundaryBefore(chunk, chunk.length);
    if (end === 0 && carried) end = boundaryAcross(carry.bytes, chunk);
    if (end === 0) {
      // The frame goes on, held until it ends: copied, as below (into the held bytes once some are).
      (this.carry ??= new PendingBytes(this.frameLimit)).add(carried ? chunk : Buffer.from(chunk));
      return EMPTY;
    }
    const head = end === chunk.length ? chunk : chunk.subarray(0, end);
    const region = carried ? carry.take(head) : head;
    // A copy, not a view: a partial frame waiting for its next chunk (maybe for seconds, on a slow
    // stream) must not keep the whole chunk it came in alive.
    if (end < chunk.length) (this.carry ??= new PendingBytes(this.frameLimit)).add(Buffer.from(chunk.subarray(end)));
    return this.candidates(region, onCandidate);
  }

  /** What is left when the body ends: a last frame without its blank line, as it came. */
  end(onCandidate: (frame: RawFrame, before: Buffer) => Buffer | undefined): Buffer {
    const rest = this.carry?.take() ?? EMPTY;
    return rest.length ? this.candidates(rest, onCandidate) : EMPTY;
  }

  private candidates(region: Buffer, onCandidate: (frame: RawFrame, before: Buffer) => Buffer | undefined): Buffer {
    if (!this.searching) return region;
    if (!this.once) return this.decode(region, this.framesWith(region, 0, this.markers.length), onCandidate);
    // Alternatives of one frame: each marker's frames are read before the next marker is searched
    // for, and the search ends once the consumer has the frame. A frame whose text merely holds a
    // marker is read and passed through like any other (the consumer does not call found() for it).
    let out = region;
    for (let m = 0; m < this.markers.length && this.searching; m++) {
      out = this.decode(out, this.framesWith(out, m, m + 1), onCandidate);
    }
    return out;
  }

  /** Starts of the frames of `region` that contain one of the markers `from` to `to` (exclusive),
   *  in stream order, each once. */
  private framesWith(region: Buffer, from: number, to: number): number[] | undefined {
    let starts: number[] | undefined;
    for (let m = from; m < to; m++) {
      const marker = this.markers[m]!;
      for (let at = region.indexOf(marker); at !== -1; at = region.indexOf(marker, at + marker.length)) {
        const start = boundaryBefore(region, at);
        if (!starts) starts = [start];
        else if (!starts.includes(start)) starts.push(start);
      }
    }
    if (starts && starts.length > 1) starts.sort((a, b) => a - b);
    return starts;
  }

  /** `region` with each frame that starts at one of `starts` decoded for `onCandidate`, and put in
   *  place of it what that returns. */
  private decode(region: Buffer, starts: number[] | undefined, onCandidate: (frame: RawFrame, before: Buffer) => Buffer | undefined): Buffer {
    if (!starts) return region;
    let out: Buffer[] | undefined;
    let copied = 0;
    for (const start of starts) {
      if (!this.searching) break;   // a once scanner's frame was found: what follows is not read
      const end = frameEnd(region, start);
      const raw = region.subarray(start, end);
      const frame = parseFrame(raw.toString('utf8')) as RawFrame | undefined;
      if (!frame) continue;
      frame.raw = raw;
      const replacement = onCandidate(frame, region.subarray(0, start));
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

const EVENT = Buffer.from('event:');
const SPACE = 0x20;
const COLON = 0x3a;

/** The bytes of the frames a passthrough opens with that carry no output (UsageTap.echoes
 *  opening: Responses' response.created repeats the whole request), counted off whole frames as
 *  they go out, until the first other frame. Only the first line of those few frames is read (its
 *  bytes compared in place: a native call costs more than the comparison); after them a chunk
 *  costs one test. A frame not told by an `event:` first line (data-only framing) ends the
 *  opening: its bytes count as output, as every frame's did. */
export class OpeningFrames {
  private readonly encoded: Buffer[];
  private open: boolean;

  constructor(private readonly names: readonly string[] = []) {
    let encoded = ENCODED.get(names);
    if (!encoded) { encoded = names.map((name) => Buffer.from(name)); ENCODED.set(names, encoded); }
    this.encoded = encoded;
    this.open = names.length > 0;
  }

  /** Bytes of the opening frames `bytes` (whole frames, next in the stream) begins with. */
  measure(bytes: Buffer): number {
    const at = this.peek(bytes);
    if (at < bytes.length) this.open = false;
    return at;
  }

  /** The same, of bytes that are measured again when they go out: the opening does not end here. */
  peek(bytes: Buffer): number {
    if (!this.open) return 0;
    let at = 0;
    while (at < bytes.length && this.opens(bytes, at)) {
      const end = frameEndAfter(bytes, at);
      at = end === -1 ? bytes.length : end;
    }
    return at;
  }

  /** Of a stream whose frames come decoded (a route's own framing): is `event` an opening one? */
  isOpening(event: string | undefined): boolean {
    if (!this.open) return false;
    if (event !== undefined && this.names.includes(event)) return true;
    this.open = false;
    return false;
  }

  /** Does the frame at `at` open with `event: <one of the names>` and its line's end, or is it a
   *  comment (a keep-alive, which carries nothing either)? */
  private opens(bytes: Buffer, at: number): boolean {
    // Comment lines carry nothing: a frame of comments alone (a keep-alive) is an opening one, any
    // other is judged by its first line that is not a comment (a comment may lead an output frame).
    while (bytes[at] === COLON) {
      const lf = bytes.indexOf(LF, at);
      if (lf === -1) return true;
      at = lf + 1;
      if (at >= bytes.length || bytes[at] === LF || bytes[at] === CR) return true;
    }
    if (!startsAt(bytes, at, EVENT)) return false;
    const p = bytes[at + EVENT.length] === SPACE ? at + EVENT.length + 1 : at + EVENT.length;
    for (const name of this.encoded) {
      const after = bytes[p + name.length];
      if ((after === LF || after === CR) && startsAt(bytes, p, name)) return true;
    }
    return false;
  }
}

/** Do `bytes` hold `what` at `at`? */
function startsAt(bytes: Buffer, at: number, what: Buffer): boolean {
  if (at + what.length > bytes.length) return false;
  for (let i = 0; i < what.length; i++) if (bytes[at + i] !== what[i]) return false;
  return true;
}
