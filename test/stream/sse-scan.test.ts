// The passthrough scanner: bytes out are the bytes in, cut only at frame boundaries, however the
// upstream splits them; only frames holding a marker are decoded, and a replacement lands in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassthroughScanner } from '../../lib/stream/sse-scan.ts';
import type { RawFrame } from '../../lib/sse.ts';
import { countByteWork } from '../helpers/byte-work.ts';

const STREAM = 'event: response.created\ndata: {"type":"response.created"}\n\n'
  + ': keep-alive\n\n'
  + 'event: response.output_text.delta\ndata: {"delta":"hé"}\n\n'
  + 'event: response.completed\ndata: {"type":"response.completed","usage":{"n":1}}\n\n';

function run(chunks: Buffer[], replace?: (f: RawFrame) => Buffer | undefined): { out: string[]; seen: string[] } {
  const s = new PassthroughScanner(['response.completed']);
  const seen: string[] = [];
  const on = (f: RawFrame): Buffer | undefined => { seen.push(f.data); return replace?.(f); };
  const out = chunks.map((c) => s.push(c, on).toString('utf8'));
  out.push(s.end(on).toString('utf8'));
  return { out, seen };
}

/** Splitting `stream` at every byte gives it back whole, cut only after whole frames (ending in
 *  `sep`), and only the marked frame decoded. */
function assertEverySplit(stream: string, sep: string): void {
  const bytes = Buffer.from(stream);
  for (let i = 1; i < bytes.length; i++) {
    const { out, seen } = run([bytes.subarray(0, i), bytes.subarray(i)]);
    assert.equal(out.join(''), stream, `split at ${i}`);
    for (const piece of out) assert.ok(piece === '' || piece.endsWith(sep), `split at ${i}: a piece ends mid-frame`);
    assert.deepEqual(seen, ['{"type":"response.completed","usage":{"n":1}}'], `split at ${i}: only the marked frame is decoded`);
  }
}

test('every split of the stream gives the same bytes, cut only after whole frames', () => {
  assertEverySplit(STREAM, '\n\n');
});

test('CRLF framing: every split gives the same bytes, cut only after whole frames', () => {
  assertEverySplit(STREAM.replaceAll('\n', '\r\n'), '\r\n\r\n');
});

test('CRLF framing and a last frame without its blank line', () => {
  const crlf = 'data: {"a":1}\r\n\r\nevent: response.completed\r\ndata: {"b":2}';
  const { out, seen } = run([Buffer.from(crlf)]);
  assert.equal(out.join(''), crlf);
  assert.deepEqual(out, ['data: {"a":1}\r\n\r\n', 'event: response.completed\r\ndata: {"b":2}']);
  assert.deepEqual(seen, ['{"b":2}']);
});

test('a replacement takes the frame\'s place; the rest is untouched', () => {
  const { out } = run([Buffer.from(STREAM)], (f) => (f.event === 'response.completed' ? Buffer.from('data: X\n\n') : undefined));
  assert.equal(out.join(''), STREAM.replace(/event: response\.completed\n.*\n\n$/, 'data: X\n\n'));
});

test('a marker inside another frame\'s text is decoded and passed through unchanged', () => {
  const s = 'event: response.output_text.delta\ndata: {"delta":"response.completed"}\n\n';
  const { out, seen } = run([Buffer.from(s)], () => undefined);
  assert.equal(out.join(''), s);
  assert.equal(seen.length, 1);
});

test('markers are literal text, several in one frame decode it once, and frames come in stream order', () => {
  const s = new PassthroughScanner(['"usage":{', 'a.b']);
  const seen: string[] = [];
  const text = 'data: {"x":"axb"}\n\n'                       // "a.b" is not a pattern: no match
    + 'data: {"usage":{"n":1},"y":"a.b"}\n\n'              // both markers, one frame
    + 'data: {"z":1}\n\n'
    + 'data: {"w":"a.b"}\n\n';
  const out = s.push(Buffer.from(text), (f) => { seen.push(f.data); return undefined; });
  assert.equal(out.toString(), text);
  assert.deepEqual(seen, ['{"usage":{"n":1},"y":"a.b"}', '{"w":"a.b"}']);
});

// A once scanner (Responses: the usage frame is one of three terminal events, sent once and last).
const TERMINALS = ['response.completed', 'response.incomplete', 'response.failed'];

function runOnce(chunks: Buffer[], terminal: string): { out: string; seen: string[] } {
  const s = new PassthroughScanner(TERMINALS, true);
  const seen: string[] = [];
  const on = (f: RawFrame): undefined => { seen.push(f.data); if (f.event === terminal) s.found(); };
  const out = chunks.map((c) => s.push(c, on).toString('utf8')).join('') + s.end(on).toString('utf8');
  return { out, seen };
}

test('once: the search ends at the frame the consumer found, so the alternatives after it are not read', () => {
  const text = 'event: response.output_text.delta\ndata: {"delta":"response.failed"}\n\n'   // the third marker, as text
    + 'event: response.completed\ndata: {"type":"response.completed","usage":{"n":1}}\n\n'
    + 'event: response.output_text.delta\ndata: {"delta":"response.completed"}\n\n';  // after it: not read
  const once = runOnce([Buffer.from(text)], 'response.completed');
  assert.equal(once.out, text);
  assert.deepEqual(once.seen, ['{"type":"response.completed","usage":{"n":1}}']);
  // The same stream through a scanner that is not once reads every frame that holds a marker.
  const every = new PassthroughScanner(TERMINALS);
  const seen: string[] = [];
  every.push(Buffer.from(text), (f) => { seen.push(f.data); return undefined; });
  assert.equal(seen.length, 3);
});

test('once: a frame whose text holds an alternative does not end the search', () => {
  const text = 'event: response.output_text.delta\ndata: {"delta":"response.completed"}\n\n'
    + 'event: response.incomplete\ndata: {"type":"response.incomplete","usage":{"n":2}}\n\n';
  const { out, seen } = runOnce([Buffer.from(text)], 'response.incomplete');
  assert.equal(out, text);
  assert.deepEqual(seen, ['{"delta":"response.completed"}', '{"type":"response.incomplete","usage":{"n":2}}']);
});

test('once: every split gives the same bytes, and the terminal frame is read once', () => {
  const text = STREAM + 'event: response.output_text.delta\ndata: {"delta":"response.failed"}\n\n';
  const bytes = Buffer.from(text);
  for (let i = 1; i < bytes.length; i++) {
    const { out, seen } = runOnce([bytes.subarray(0, i), bytes.subarray(i)], 'response.completed');
    assert.equal(out, text, `split at ${i}`);
    assert.deepEqual(seen, ['{"type":"response.completed","usage":{"n":1}}'], `split at ${i}`);
  }
});

test('once: the terminal frame\'s replacement (include_cost) lands in its place at every split', () => {
  const before = 'event: response.output_text.delta\ndata: {"delta":"response.completed"}\n\n';   // a marker, as text
  const text = before + STREAM;
  const expected = before + STREAM.replace(/event: response\.completed\n.*\n\n$/, 'event: response.completed\ndata: {"priced":1}\n\n');
  const bytes = Buffer.from(text);
  for (let i = 1; i < bytes.length; i++) {
    const s = new PassthroughScanner(TERMINALS, true);
    const on = (f: RawFrame): Buffer | undefined => {
      if (f.event !== 'response.completed') return undefined;
      s.found();
      return Buffer.from('event: response.completed\ndata: {"priced":1}\n\n');
    };
    const out = [bytes.subarray(0, i), bytes.subarray(i)].map((c) => s.push(c, on).toString('utf8')).join('') + s.end(on).toString('utf8');
    assert.equal(out, expected, `split at ${i}`);
  }
});

// A frame that spans chunks: held until its blank line comes, which may itself be cut between two
// chunks ("\n" | "\n", "\r\n" | "\r\n", "\r\n\r" | "\n", …). The scanner's separators are a line
// feed after a line feed ("\n\n", "\r\n\n" too) and "\r\n\r\n"; "\r\r" ends nothing.

/** `bytes` cut into `size`-byte chunks, the first one `offset` bytes long (when not 0). */
function chunked(bytes: Buffer, size: number, offset = 0): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  if (offset) { chunks.push(bytes.subarray(0, offset)); at = offset; }
  for (; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return chunks;
}

/** Offsets just after each blank line of `bytes`, as the scanner defines one. */
function frameEnds(bytes: Buffer): Set<number> {
  const ends = new Set<number>();
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    if (bytes[i - 1] === 0x0a || (i >= 3 && bytes[i - 1] === 0x0d && bytes[i - 2] === 0x0a && bytes[i - 3] === 0x0d)) ends.add(i + 1);
  }
  return ends;
}

const LONG = `data: {"delta":"${'é'.repeat(150)}\r\r${'x'.repeat(300)}"}`;   // longer than many chunks; "\r\r" inside
const SPANNING = [
  STREAM,
  STREAM.replaceAll('\n', '\r\n'),
  `${LONG}\n\n${LONG}\r\n\r\n${LONG}\r\n\n: c\r\n\r\nevent: response.completed\r\ndata: {"type":"response.completed","usage":{"n":1}}\r\n\r\n${LONG}\n\n`,
];

test('frames cut into 1- and 7-byte chunks, at every offset: the same bytes and frames as one chunk, cut only after whole frames', () => {
  for (const stream of SPANNING) {
    const bytes = Buffer.from(stream);
    const whole = run([bytes]);
    assert.equal(whole.out.join(''), stream);
    const ends = frameEnds(bytes);
    for (const size of [1, 7]) {
      for (let offset = 0; offset < size; offset++) {
        const { out, seen } = run(chunked(bytes, size, offset));
        const label = `${JSON.stringify(stream.slice(0, 20))}… in ${size}-byte chunks from ${offset}`;
        assert.equal(out.join(''), stream, label);
        assert.deepEqual(seen, whole.seen, label);
        let at = 0;
        for (const piece of out.slice(0, -1)) {
          at += Buffer.byteLength(piece);
          if (piece) assert.ok(ends.has(at), `${label}: a piece ends mid-frame at ${at}`);
        }
      }
    }
  }
});

test('a frame without its blank line costs work in proportion to its size, not its square', () => {
  const line = Buffer.from(`data: ${'x'.repeat(57)}\n`);        // 64 bytes: a line, but no blank line
  const chunk = Buffer.concat(Array.from({ length: 1024 }, () => line));   // 64 KB
  const work = (mib: number): { allocated: number; searched: number; out: Buffer } => {
    const s = new PassthroughScanner(['response.completed']);
    let out: Buffer = Buffer.alloc(0);
    const counted = countByteWork(() => {
      for (let i = 0; i < mib * 16; i++) assert.equal(s.push(chunk, () => undefined).length, 0);
      out = s.push(Buffer.from('\n'), () => undefined);
    });
    return { ...counted, out };
  };
  const small = work(2);
  const big = work(8);
  const n = 8 * 1024 * 1024;
  assert.equal(big.out.length, n + 1, 'the frame goes out whole once its blank line comes');
  assert.ok(big.out.subarray(0, chunk.length).equals(chunk));
  // Held in a buffer that doubles: what is allocated stays under three times the frame (each
  // chunk concatenated to what was held, as before, allocated 64 times the frame at 8 MiB).
  assert.ok(big.allocated < 3 * n, `allocated ${big.allocated} for ${n}`);
  assert.ok(big.searched < 2 * n, `searched ${big.searched} for ${n}`);
  assert.ok(big.allocated < 5 * small.allocated && big.searched < 5 * small.searched, 'four times the bytes, about four times the work');
});

test('a frame that grows past the limit without its blank line fails the stream', () => {
  const s = new PassthroughScanner(['response.completed'], false, 1000);
  const on = (): undefined => undefined;
  assert.equal(s.push(Buffer.from('data: {"a":1}\n\n'), on).toString(), 'data: {"a":1}\n\n');
  const line = Buffer.from(`data: ${'x'.repeat(93)}\n`);      // 100 bytes
  for (let i = 0; i < 10; i++) assert.equal(s.push(line, on).length, 0, 'exactly the limit is held');
  assert.throws(() => s.push(Buffer.from('x'), on), /upstream event grew past 1000 bytes/);
  // A frame that ends within the limit after many chunks goes through, in order.
  const ok = new PassthroughScanner(['response.completed'], false, 1000);
  for (let i = 0; i < 9; i++) ok.push(line, on);
  assert.equal(ok.push(Buffer.from('\ndata: b\n\n'), on).toString(), line.toString().repeat(9) + '\ndata: b\n\n');
});
