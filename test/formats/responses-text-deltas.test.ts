// The Responses stream decoder reads text deltas in vendor A's shape with one regular expression
// instead of parsing them (lib/formats/responses/stream-decode.ts). Whatever the delta holds, the
// IR is the one the whole parse gives: the same stream with each delta's members in another order
// (which the expression does not read, so the event is parsed) is the reference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createResponsesStreamDecoder } from '../../lib/formats/responses/stream-decode.ts';
import type { SSEFrame } from '../../lib/formats/types.ts';
import type { IREvent } from '../../lib/ir.ts';

const frame = (type: string, data: Record<string, unknown>): SSEFrame => ({ event: type, data: JSON.stringify({ type, ...data }) });

/** A stream of text deltas as vendor A orders their members, or with the delta's members reversed. */
function stream(deltas: Array<{ output: number; content: number; delta: unknown }>, reorder: boolean): SSEFrame[] {
  const frames = [frame('response.created', { sequence_number: 0, response: { id: 'resp_1', model: 'gpt-5.4' } })];
  deltas.forEach(({ output, content, delta }, i) => {
    const members = { sequence_number: i + 1, item_id: 'msg_1', output_index: output, content_index: content, delta, logprobs: [], obfuscation: 'xyz' };
    frames.push(reorder
      ? { event: 'response.output_text.delta', data: JSON.stringify(Object.fromEntries([...Object.entries(members).reverse(), ['type', 'response.output_text.delta']])) }
      : frame('response.output_text.delta', members));
  });
  return frames;
}

function decode(frames: SSEFrame[]): IREvent[] {
  const d = createResponsesStreamDecoder();
  return frames.flatMap((f) => d.push(f));
}

const TEXTS = ['The', ' final', '', 'line\nbreak', 'a "quoted" word', 'back\\slash\\', 'tab\tand \u0001 control', 'é ü 漢字', '😀 emoji', '\\"', '"', 'x'.repeat(5_000)];

test('every text delta gives the IR the whole parse gives, escapes, unicode and empty deltas included', () => {
  const deltas = TEXTS.map((delta) => ({ output: 0, content: 0, delta }));
  const fast = decode(stream(deltas, false));
  assert.deepEqual(fast, decode(stream(deltas, true)));
  const texts = fast.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text);
  assert.deepEqual(texts, TEXTS.filter((t) => t !== ''));
});

test('deltas of several parts and items open one block each, in order, and return to it', () => {
  const deltas = [
    { output: 0, content: 0, delta: 'a' }, { output: 0, content: 1, delta: 'b' }, { output: 0, content: 0, delta: 'c' },
    { output: 2, content: 0, delta: 'd' }, { output: 12, content: 3, delta: 'e' }, { output: 2, content: 0, delta: 'f' },
  ];
  const fast = decode(stream(deltas, false));
  assert.deepEqual(fast, decode(stream(deltas, true)));
  const starts = fast.filter((e) => e.type === 'block_start').length;
  assert.equal(starts, 4);
  const byText = Object.fromEntries(fast.filter((e) => e.type === 'text_delta').map((e) => [(e as any).text, (e as any).index]));
  assert.deepEqual(byText, { a: 0, b: 1, c: 0, d: 2, e: 3, f: 2 });
});

test('a delta that is not a plain string or index is read by the whole parse', () => {
  const odd = [
    { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":null}' },
    { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","output_index":"0","content_index":0,"delta":"s"}' },
    { event: 'response.output_text.delta', data: '{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "spaced"}' },
    { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"bad \\x escape"}' },
  ];
  const events = decode([frame('response.created', { response: { id: 'r' } }), ...odd]);
  const texts = events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text);
  assert.deepEqual(texts, ['s', 'spaced']);   // null carries nothing; the invalid escape is malformed JSON
});

// The first and the terminal event echo the request; past a size, the decoder takes only the
// members it reads from them. The IR must be the one a stream without the echoes gives.
test('a created and a terminal event that echo long instructions and tools decode as the same events without them', () => {
  const instructions = 'You are a coding agent. Quote "paths" \\ and\n "usage":{"output_tokens":1} verbatim. '.repeat(200);
  const tools = Array.from({ length: 12 }, (_, i) => ({
    type: 'function', name: `tool_${i}`, description: 'Runs a "command"; reports usage.'.repeat(10),
    parameters: { type: 'object', properties: { usage: { type: 'string' }, model: { type: 'string' } } },
  }));
  const echo = { instructions, tools, metadata: { id: 'not-this', model: 'nor-this', status: 'failed' } };
  const usage = { input_tokens: 4000, input_tokens_details: { cached_tokens: 3500 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 } };
  const build = (withEcho: boolean, status: 'completed' | 'incomplete'): SSEFrame[] => {
    const extra = withEcho ? echo : {};
    return [
      frame('response.created', { sequence_number: 0, response: { ...extra, id: 'resp_big', model: 'gpt-5.4', status: 'in_progress' } }),
      frame('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_1', content: [] } }),
      frame('response.content_part.added', { output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } }),
      frame('response.output_text.delta', { output_index: 0, content_index: 0, delta: 'Hi' }),
      frame('response.output_text.done', { output_index: 0, content_index: 0, text: 'Hi' }),
      frame('response.output_item.done', { output_index: 0, item: { type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Hi' }] } }),
      frame(`response.${status}`, {
        response: {
          ...extra, id: 'resp_big', model: 'gpt-5.4', status, service_tier: 'flex', usage,
          incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
          output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi' }] }],
        },
      }),
    ];
  };
  for (const status of ['completed', 'incomplete'] as const) {
    const big = build(true, status);
    assert.ok(big[0]!.data.length > 10_000 && big.at(-1)!.data.length > 10_000);
    const events = decode(big);
    assert.deepEqual(events, decode(build(false, status)));
    assert.deepEqual(events[0], { type: 'start', id: 'resp_big', model: 'gpt-5.4' });
    const finish = events.at(-1) as Extract<IREvent, { type: 'finish' }>;
    assert.equal(finish.reason, status === 'completed' ? 'end' : 'max_tokens');
    assert.equal(finish.tier, 'flex');
    assert.equal(finish.usage.inputTokens, 4000);
  }
  // A terminal event that comes before any block opened carries the answer: read whole.
  const relayed = decode([build(true, 'completed').at(-1)!]);
  assert.ok(relayed.some((e) => e.type === 'text_delta' && e.text === 'Hi'));
});
