// The SSE parser gives the same frames however the stream is split (inside a UTF-8 sequence and
// between CR and LF too) and whether frames end with LF LF or CRLF CRLF (mixed in one stream).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SSEParser } from '../lib/sse.ts';

const STREAM = 'event: a\ndata: {"x":1}\n\n: comment\n\ndata: two\r\ndata: lines\r\n\r\nevent: b\r\ndata: é✓\r\n\r\n'
  + 'data: {"y":"\\n\\n"}\n\nevent: c\ndata: last';

function parse(chunks: Buffer[]): { frames: string[] } {
  const p = new SSEParser();
  const frames = [...chunks.flatMap((c) => p.push(c)), ...p.end()];
  return { frames: frames.map((f) => `${f.event ?? ''}|${f.data}`) };
}

test('every two-way split of the stream gives the same frames and bytes', () => {
  const bytes = Buffer.from(STREAM);
  const whole = parse([bytes]);
  assert.deepEqual(whole.frames, ['a|{"x":1}', '|two\nlines', 'b|é✓', '|{"y":"\\n\\n"}', 'c|last']);
  for (let i = 1; i < bytes.length; i++) {
    const split = parse([bytes.subarray(0, i), bytes.subarray(i)]);
    assert.deepEqual(split.frames, whole.frames, `split at ${i}`);
  }
  for (let i = 1; i < bytes.length - 1; i += 3) {
    assert.deepEqual(parse([bytes.subarray(0, i), bytes.subarray(i, i + 2), bytes.subarray(i + 2)]).frames, whole.frames, `three-way at ${i}`);
  }
});

// A frame held across many chunks (more pieces than the parser keeps apart before it joins them),
// with its blank line cut between chunks at every place.
const LONG = `event: long\r\ndata: ${'é✓'.repeat(120)}\r\r${'x'.repeat(200)}`;
const SPANNING = `${LONG}\n\n${LONG}\r\n\r\n: c\r\n\n${LONG}\r\n\ndata: {"y":2}\n\n${LONG}`;

test('1- and 7-byte chunks at every offset give the same frames as one chunk', () => {
  for (const stream of [STREAM, SPANNING]) {
    const bytes = Buffer.from(stream);
    const whole = parse([bytes]).frames;
    for (const size of [1, 7]) {
      for (let offset = 0; offset < size; offset++) {
        const chunks: Buffer[] = offset ? [bytes.subarray(0, offset)] : [];
        for (let at = offset; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
        assert.deepEqual(parse(chunks).frames, whole, `${size}-byte chunks from ${offset}`);
      }
    }
  }
  assert.equal(parse([Buffer.from(SPANNING)]).frames.length, 5);
});

test('a frame that grows past the limit without its blank line fails the stream; one within it passes', () => {
  const line = Buffer.from(`data: ${'x'.repeat(93)}\n`);      // 100 characters
  const p = new SSEParser(1000);
  assert.deepEqual(p.push(Buffer.from('data: a\n\n')), [{ data: 'a' }]);
  for (let i = 0; i < 10; i++) assert.deepEqual(p.push(line), [], 'exactly the limit is held');
  assert.throws(() => p.push(Buffer.from('x')), /upstream event grew past 1000 bytes/);
  const ok = new SSEParser(1000);
  for (let i = 0; i < 9; i++) ok.push(line);
  assert.deepEqual(ok.push(Buffer.from('\ndata: b\n\n')), [{ data: Array(9).fill('x'.repeat(93)).join('\n') }, { data: 'b' }]);
});
