// The frames a passthrough opens with that carry no output (UsageTap.echoes opening): counted off
// whole frames, told by their first line alone, until the first other frame.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpeningFrames } from '../../lib/stream/sse-scan.ts';

const NAMES = ['response.created', 'response.in_progress'];
const created = (sep = '\n') => `event: response.created${sep}data: {"type":"response.created","instructions":"${'x'.repeat(500)}"}${sep}${sep}`;
const delta = 'event: response.output_text.delta\ndata: {"delta":"response.created"}\n\n';

test('the opening frames are counted, the first other frame ends the opening for good', () => {
  const opening = new OpeningFrames(NAMES);
  const head = created() + ': keep-alive\n\n' + 'event:response.in_progress\ndata: {}\n\n';
  assert.equal(opening.measure(Buffer.from(head + delta + created())), Buffer.byteLength(head));
  // After the opening, a frame of an opening event counts as output: it is not looked at.
  assert.equal(opening.measure(Buffer.from(created())), 0);
});

test('frames that come one at a time, or framed with CRLF, are counted alike', () => {
  const opening = new OpeningFrames(NAMES);
  assert.equal(opening.measure(Buffer.from(created('\r\n'))), Buffer.byteLength(created('\r\n')));
  assert.equal(opening.measure(Buffer.from(created())), Buffer.byteLength(created()));
  assert.equal(opening.measure(Buffer.from(delta)), 0);
});

test('an event whose name only starts with an opening one, or data-only framing, is output', () => {
  assert.equal(new OpeningFrames(NAMES).measure(Buffer.from('event: response.created_later\ndata: {}\n\n')), 0);
  assert.equal(new OpeningFrames(NAMES).measure(Buffer.from('data: {"type":"response.created"}\n\n')), 0);
  assert.equal(new OpeningFrames().measure(Buffer.from(created())), 0, 'a tap that names none');
});

test('decoded frames (a route\'s own framing): by their event', () => {
  const opening = new OpeningFrames(['message_start', 'ping']);
  assert.deepEqual(['message_start', 'ping', 'content_block_start', 'ping'].map((e) => opening.isOpening(e)), [true, true, false, false]);
});

test('a comment line leading an output frame does not make it an opening one', () => {
  const opening = new OpeningFrames(NAMES);
  const ledDelta = ': note\n' + delta;
  assert.equal(opening.measure(Buffer.from(created() + ': ping\r\n\r\n' + ledDelta + ledDelta)),
    Buffer.byteLength(created() + ': ping\r\n\r\n'), 'the delta frames count as output');
  assert.equal(new OpeningFrames(NAMES).measure(Buffer.from(': a\n: b\n\n' + created())), Buffer.byteLength(': a\n: b\n\n' + created()));
});
