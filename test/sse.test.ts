// SSEParser (lib/sse.ts): the frames of a stream are the same however the bytes are cut into
// chunks, a multi-byte UTF-8 character cut between two chunks included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFrame, parseFrame, SSEParser, type SSEFrame } from '../lib/sse.ts';

// Named and data-only frames, a multi-line data field, a field without a space after the colon,
// a comment line inside a frame, CRLF line endings, multi-byte UTF-8, and a comment-only frame.
const PIECES = [
  'event: response.created\ndata: {"type":"response.created","n":0}\n\n',
  'data: {"choices":[{"delta":{"content":"café ✓ 🙂"}}]}\n\n',
  ': keep-alive\n\n',
  'event: multi\ndata: line one\ndata: line two\n\n',
  'event:tight\ndata:{"a":1}\n\n',
  ': a comment\nevent: with-comment\ndata: x\n\n',
  'event: crlf\r\ndata: {"b":"ü"}\r\n\r\n',
  'data: [DONE]\n\n',
];
const INPUT = Buffer.from(PIECES.join(''));
const EXPECTED = [
  { event: 'response.created', data: '{"type":"response.created","n":0}' },
  { data: '{"choices":[{"delta":{"content":"café ✓ 🙂"}}]}' },
  { event: 'multi', data: 'line one\nline two' },
  { event: 'tight', data: '{"a":1}' },
  { event: 'with-comment', data: 'x' },
  { event: 'crlf', data: '{"b":"ü"}' },
  { data: '[DONE]' },
];
function run(chunks: Buffer[]): SSEFrame[] {
  const p = new SSEParser();
  return [...chunks.flatMap((c) => p.push(c)), ...p.end()];
}
const shape = (frames: SSEFrame[]) => frames.map(({ event, data }) => (event === undefined ? { data } : { event, data }));

test('the whole stream in one chunk: every frame, in order', () => {
  assert.deepEqual(shape(run([INPUT])), EXPECTED);
});

test('cut in two at every byte boundary (inside UTF-8 sequences and between \\r and \\n too)', () => {
  for (let i = 0; i <= INPUT.length; i++) {
    assert.deepEqual(shape(run([INPUT.subarray(0, i), INPUT.subarray(i)])), EXPECTED, `cut at ${i}`);
  }
});

test('cut in three at every pair of boundaries', () => {
  for (let i = 0; i <= INPUT.length; i += 1) {
    for (let j = i; j <= INPUT.length; j += 7) {
      const frames = run([INPUT.subarray(0, i), INPUT.subarray(i, j), INPUT.subarray(j)]);
      assert.deepEqual(shape(frames), EXPECTED, `cuts at ${i}, ${j}`);
    }
  }
});

test('one byte at a time', () => {
  assert.deepEqual(shape(run([...INPUT].map((b) => Buffer.from([b])))), EXPECTED);
});

test('a last frame without its blank line comes out of end(); a partial one without data does not', () => {
  const p = new SSEParser();
  assert.deepEqual(p.push(Buffer.from('event: a\ndata: 1\n\nevent: b\ndata: 2')).map((f) => f.data), ['1']);
  const tail = p.end();
  assert.deepEqual(shape(tail), [{ event: 'b', data: '2' }]);
  assert.deepEqual(p.end(), [], 'end() twice gives nothing more');
  const q = new SSEParser();
  q.push(Buffer.from('event: only-a-name'));
  assert.deepEqual(q.end(), []);
});

test('parseFrame: a frame with no data field is no frame; only one leading space is stripped', () => {
  assert.equal(parseFrame('event: x'), undefined);
  assert.equal(parseFrame(': just a comment'), undefined);
  assert.deepEqual(parseFrame('data:  two spaces'), { data: ' two spaces' });
  assert.deepEqual(parseFrame('data'), { data: '' });
  assert.deepEqual(parseFrame('id: 7\nretry: 10\ndata: d'), { data: 'd' }, 'other fields are ignored');
});

test('formatFrame writes what the parser reads back', () => {
  assert.equal(formatFrame('{"x":1}'), 'data: {"x":1}\n\n');
  assert.equal(formatFrame('{"x":1}', 'e'), 'event: e\ndata: {"x":1}\n\n');
  assert.deepEqual(shape(run([Buffer.from(formatFrame('d1', 'e1') + formatFrame('d2'))])), [{ event: 'e1', data: 'd1' }, { data: 'd2' }]);
});
