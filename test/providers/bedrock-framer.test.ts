// cloud_b's event-stream framer (lib/providers/bedrock.ts EventStreamFramer): messages cut from the
// binary stream however the bytes are split, at a cost linear in the stream (a message split
// finely was re-copied whole per piece), a prelude that announces a length no message may have
// failed at once (it was waited for, up to 4 GiB), and an exception message known for the refusal
// it is (Framer.refusal): a stream whose first message is one is retried, not committed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { EventStreamFramer } from '../../lib/providers/bedrock.ts';
import { MAX_FRAME_BYTES, type RawFrame } from '../../lib/sse.ts';
import { countByteWork } from '../helpers/byte-work.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });

function chunkMessage(event: object): Buffer {
  const payload = JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') });
  return Buffer.from(codec.encode({
    headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') },
    body: fromUtf8(payload),
  }));
}

function exceptionMessage(name: string, message?: string): Buffer {
  return Buffer.from(codec.encode({
    headers: { ':exception-type': str(name), ':content-type': str('application/json'), ':message-type': str('exception') },
    body: fromUtf8(message === undefined ? '' : JSON.stringify({ message })),
  }));
}

const stream = Buffer.concat([
  chunkMessage({ type: 'message_start', message: { id: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } } }),
  chunkMessage({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo ✓' } }),
  exceptionMessage('modelStreamErrorException', 'stream broke'),
]);

const view = (frames: RawFrame[]) => frames.map((f) => ({ event: f.event, data: f.data, raw: f.raw.toString() }));

function pushPieces(framer: EventStreamFramer, bytes: Buffer, size: number): RawFrame[] {
  const out: RawFrame[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...framer.push(bytes.subarray(i, i + size)));
  return out;
}

test('the same frames however the stream is split: whole, byte by byte, in pieces of every size up to a message', () => {
  const whole = view(new EventStreamFramer().push(stream));
  assert.deepEqual(whole.map((f) => f.event), ['message_start', 'content_block_delta', 'error']);
  assert.match(whole[1]!.raw, /^event: content_block_delta\ndata: .*héllo ✓.*\n\n$/);
  for (let size = 1; size <= 200; size++) assert.deepEqual(view(pushPieces(new EventStreamFramer(), stream, size)), whole, `pieces of ${size}`);
});

test('a message split into small pieces costs bytes linear in its size, not its square', () => {
  const counts = [256, 1024].map((kb) => {
    const message = chunkMessage({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x'.repeat(kb * 1024) } });
    let frames = 0;
    const work = countByteWork(() => { frames = pushPieces(new EventStreamFramer(), message, 64).length; });
    assert.equal(frames, 1);
    return work.allocated / message.length;
  });
  // Each byte is copied a bounded number of times (once into a joined group, once into the message);
  // re-joined per piece, a 256 KiB message in 64-byte pieces allocated ≈ 2,700 times its size.
  for (const perByte of counts) assert.ok(perByte < 4, `allocated ${perByte.toFixed(1)} bytes per byte of the message`);
});

test('a prelude announcing more than MAX_FRAME_BYTES, or fewer than a message\'s 16, fails at once (split or not)', () => {
  const first = chunkMessage({ type: 'message_start', message: { id: 'm' } });
  for (const total of [MAX_FRAME_BYTES + 1, 0xFFFFFFF0, 15, 0]) {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(total, 0);
    assert.throws(() => new EventStreamFramer().push(Buffer.concat([first, prelude])), /announced \d+ bytes/, `${total} in the chunk of a message`);
    const framer = new EventStreamFramer();
    assert.equal(framer.push(Buffer.concat([first, prelude.subarray(0, 2)])).length, 1, 'the whole message before it is read');
    assert.throws(() => framer.push(prelude.subarray(2)), /announced \d+ bytes/, `${total} with its length cut in two`);
  }
  // At the bound itself the message is waited for.
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(MAX_FRAME_BYTES, 0);
  assert.deepEqual(new EventStreamFramer().push(prelude), []);
});

test('an exception message is the error event it always was, and the framer says which refusal it is', () => {
  const framer = new EventStreamFramer();
  const table: Array<[string, 'transient' | 'fatal', number]> = [
    ['throttlingException', 'transient', 429], ['serviceUnavailableException', 'transient', 503],
    ['modelTimeoutException', 'transient', 408], ['internalServerException', 'transient', 500],
    ['modelStreamErrorException', 'transient', 424], ['modelNotReadyException', 'transient', 429],
    ['validationException', 'fatal', 400], ['accessDeniedException', 'fatal', 403],
    ['resourceNotFoundException', 'fatal', 404], ['serviceQuotaExceededException', 'fatal', 400],
    ['modelErrorException', 'fatal', 424], ['somethingNewException', 'transient', 502],
    ['constructor', 'transient', 502], ['__proto__', 'transient', 502],
  ];
  for (const [name, kind, status] of table) {
    const [frame] = framer.push(exceptionMessage(name, 'Too many requests, please wait.'));
    assert.equal(frame!.event, 'error');
    const errorType = name === 'throttlingException' ? 'rate_limit_error' : 'api_error';
    assert.deepEqual(JSON.parse(frame!.data), { type: 'error', error: { type: errorType, message: name } }, 'the event after commit is unchanged');
    const failure = framer.refusal(frame!);
    assert.equal(failure?.retryAfterMs, undefined, 'no wait the exception did not ask for');
    assert.deepEqual(failure, { kind, status, message: `${name}: Too many requests, please wait.`, upstreamCode: name }, name);
  }
  const [bare] = framer.push(exceptionMessage('ThrottlingException'));
  assert.deepEqual(framer.refusal(bare!), { kind: 'transient', status: 429, message: 'ThrottlingException', upstreamCode: 'ThrottlingException' });
  const [event] = framer.push(chunkMessage({ type: 'message_start', message: { id: 'm' } }));
  assert.equal(framer.refusal(event!), undefined, 'an event is no refusal');
});
