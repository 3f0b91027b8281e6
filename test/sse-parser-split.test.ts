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
