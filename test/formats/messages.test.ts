// Messages codec: recorded Anthropic traffic decodes to the IR the conventions promise; requests
// survive IR → body → IR; the stream encoder's frames are well-formed; the tap reads final usage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { messagesCodec } from '../../lib/formats/messages/index.ts';
import type { EncodeContext, SSEFrame, TapState } from '../../lib/formats/types.ts';
import { type IREvent, type IRRequest, zeroUsage } from '../../lib/ir.ts';
import { GatewayError } from '../../lib/errors.ts';
import { parseFrame } from '../../lib/sse.ts';
import { decodeAll } from '../helpers/decode.ts';
import { RECORDED, recordedOnly } from '../helpers/recorded.ts';

const DIR = `${RECORDED}/anthropic-messages`;

/** A recorded .chunks.txt as the frames that came off the wire (event name = payload.type). */
function recorded(file: string): SSEFrame[] {
  return readFileSync(`${DIR}/${file}`, 'utf8').split('\n').filter((l) => l.trim())
    .map((data) => ({ event: JSON.parse(data).type, data }));
}

const decode = (frames: SSEFrame[]) => decodeAll(messagesCodec, frames);

const usage = (input: number, output: number, extra: Partial<ReturnType<typeof zeroUsage>> = {}) => ({ ...zeroUsage(), inputTokens: input, outputTokens: output, ...extra });

test('anthropic-text: text, end_turn, usage, tier', recordedOnly, () => {
  const { events, res } = decode(recorded('anthropic-text.chunks.txt'));
  assert.deepEqual(events[0], { type: 'start', id: 'msg_01QC4g3HwBThD4BaNtBckFDJ', model: 'claude-sonnet-4-5-20250929' });
  assert.deepEqual(res.blocks, [{ kind: 'text', text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?" }]);
  assert.equal(res.stopReason, 'end');
  assert.deepEqual(res.usage, usage(12, 30));
  assert.equal(res.tier, 'standard');
  assert.equal(events.at(-1)!.type, 'finish');
});

test('anthropic-json-tool: tool_use arguments equal the recorded JSON; the empty first delta is skipped', recordedOnly, () => {
  const { events, res } = decode(recorded('anthropic-json-tool.1.chunks.txt'));
  assert.equal(events.filter((e) => e.type === 'args_delta' && e.json === '').length, 0);
  assert.equal(res.blocks.length, 1);
  const call = res.blocks[0]!;
  assert.equal(call.kind, 'tool_call');
  if (call.kind !== 'tool_call') return;
  assert.equal(call.id, 'toolu_01KFbKqPYSuAKujiL6mTfzYA');
  assert.equal(call.name, 'json');
  assert.deepEqual(JSON.parse(call.arguments), { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] });
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.usage, usage(849, 47));
});

test('anthropic-tool-no-args: text then a call whose empty input decodes to {}', recordedOnly, () => {
  const { res } = decode(recorded('anthropic-tool-no-args.chunks.txt'));
  assert.deepEqual(res.blocks, [
    { kind: 'text', text: "I'll update the issue list for you." },
    { kind: 'tool_call', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' },
  ]);
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.usage, usage(565, 48));
});

test('anthropic-claude-sonnet-5-reasoning-summarized: thinking with signature, then text; thinking tokens', recordedOnly, () => {
  const { res } = decode(recorded('anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt'));
  assert.equal(res.blocks.length, 2);
  const [thinking, text] = res.blocks;
  assert.equal(thinking!.kind, 'reasoning');
  if (thinking!.kind !== 'reasoning' || text!.kind !== 'text') return;
  assert.equal(thinking!.text, "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.");
  assert.ok(thinking!.signature!.startsWith('EsECCokBCBAYAipA'));
  assert.ok(thinking!.signature!.endsWith('L4oPGAE='));
  assert.ok(text!.text.startsWith('# Finding GCD(1071, 462)'));
  assert.ok(text!.text.endsWith('- 462 = 21 × 22 ✓'));
  assert.equal(res.stopReason, 'end');
  assert.deepEqual(res.usage, usage(47, 373, { reasoningTokens: 62 }));
});

test('anthropic-refusal: no blocks, content filter (Anthropic\'s classifiers stopped it)', recordedOnly, () => {
  const { res } = decode(recorded('anthropic-refusal.chunks.txt'));
  assert.deepEqual(res.blocks, []);
  assert.equal(res.stopReason, 'content_filter');
  assert.deepEqual(res.usage, usage(18, 5));
});

test('anthropic-message-delta-input-tokens: message_delta input_tokens (61) overwrites message_start (43)', recordedOnly, () => {
  const { res } = decode(recorded('anthropic-message-delta-input-tokens.chunks.txt'));
  assert.deepEqual(res.blocks, [{ kind: 'text', text: 'pong' }]);
  assert.deepEqual(res.usage, usage(61, 2));
  assert.equal(res.id, 'msg_3196a1cc08de4d76b85b8f5777c0d42b');
});

test('cache reads and writes count inside IR input', () => {
  const frames: SSEFrame[] = [
    { event: 'message_start', data: JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1, service_tier: 'flex' } } }) },
    { event: 'message_delta', data: JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 7 } }) },
    { event: 'message_stop', data: '{"type":"message_stop"}' },
  ];
  const { res } = decode(frames);
  assert.deepEqual(res.usage, usage(130, 7, { cachedInputTokens: 100, cacheWriteTokens: 20 }));
  assert.equal(res.stopReason, 'max_tokens');
  assert.equal(res.tier, 'flex');
});

test('cloud_b: amazon-bedrock-invocationMetrics fill in what message_delta lacked', () => {
  const frames: SSEFrame[] = [
    { event: 'message_start', data: JSON.stringify({ type: 'message_start', message: { id: 'msg_b', model: 'claude', usage: { output_tokens: 1 } } }) },
    { event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' },
    { event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}' },
    { event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
    { event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{}}' },
    { event: 'message_stop', data: JSON.stringify({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 25, outputTokenCount: 9, invocationLatency: 500, firstByteLatency: 200 } }) },
  ];
  const { res } = decode(frames);
  assert.deepEqual(res.usage, usage(25, 9));
  // message_delta's own counts win over the metrics
  frames[4] = { event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":24,"output_tokens":8}}' };
  assert.deepEqual(decode(frames).res.usage, usage(24, 8));
});

test('error events become IR errors; a stream cut before message_delta is an error, not a clean end', () => {
  const err = decode([
    { event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_x","usage":{"input_tokens":1,"output_tokens":1}}}' },
    { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' },
  ]);
  // The provider's type is its own word: the gateway's provider_error, the type kept in the message.
  assert.deepEqual(err.events.at(-1), { type: 'error', code: 'provider_error', message: 'overloaded_error: Overloaded' });
  const cut = decode([{ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_x","usage":{"input_tokens":1,"output_tokens":1}}}' }]);
  assert.equal(cut.events.at(-1)!.type, 'error');
});

test('decodeResponse: anthropic-text.json', recordedOnly, () => {
  const body = JSON.parse(readFileSync(`${DIR}/anthropic-text.json`, 'utf8'));
  const res = messagesCodec.decodeResponse(body);
  assert.equal(res.id, 'msg_01VdEjxAP5ahtHKrrRdNBteQ');
  assert.equal(res.model, 'claude-sonnet-4-5-20250929');
  assert.deepEqual(res.blocks, [{ kind: 'text', text: "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?" }]);
  assert.equal(res.stopReason, 'end');
  assert.deepEqual(res.usage, usage(12, 29));
  assert.equal(res.tier, 'standard');
});

const PNG = Buffer.from('fake png bytes').toString('base64');
const PDF = Buffer.from('%PDF-1.4 fake').toString('base64');

function fullIR(): IRRequest {
  return {
    model: 'claude-sonnet-4-5',
    system: 'Be terse.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris? See the map.' }, { type: 'image', mediaType: 'image/png', data: PNG }, { type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'brief.pdf' }] },
      { role: 'assistant', content: [
        { type: 'reasoning', text: 'Need the weather tool.', signature: 'EqQBsig', anthropic: true },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_01', content: '18C and sunny' }, { type: 'text', text: 'And tomorrow?' }] },
      { role: 'assistant', content: [{ type: 'reasoning', signature: 'redacted-data', anthropic: true }, { type: 'tool_call', id: 'toolu_02', name: 'get_weather', arguments: '{"city":"Paris","day":"tomorrow"}' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_02', content: 'no data', isError: true }] },
    ],
    tools: [{ name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    toolChoice: 'auto', // a forced choice would leave thinking out (Anthropic refuses the two together)
    parallelToolCalls: false,
    maxOutputTokens: 20000,
    temperature: 1,
    topP: 0.9,
    reasoning: { effort: 'medium', budgetTokens: 4096 },
    // Already in Anthropic's subset (a closed object), so the round trip keeps it as it is.
    responseFormat: { type: 'json_schema', schema: { type: 'object', properties: { answer: { type: 'string' } }, additionalProperties: false } },
    stopSequences: ['END'],
    stream: true,
  };
}

test('round trip IR → encodeRequest → decodeRequest keeps tools, results, signatures, media, format', () => {
  const ir = fullIR();
  const body = messagesCodec.encodeRequest(ir);
  assert.equal(body.model, 'claude-sonnet-4-5');
  assert.equal(body.max_tokens, 20000);
  assert.equal(body.stream, undefined);
  assert.equal(body.service_tier, undefined);
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 4096 });
  assert.deepEqual(body.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  assert.deepEqual(body.output_config, { format: { type: 'json_schema', schema: ir.responseFormat!.type === 'json_schema' ? ir.responseFormat!.schema : {} } });
  // tool_result blocks lead their user turn; the redacted thinking goes back as redacted_thinking
  assert.equal(body.messages[2].content[0].type, 'tool_result');
  assert.deepEqual(body.messages[3].content[0], { type: 'redacted_thinking', data: 'redacted-data' });
  assert.deepEqual(body.messages[1].content[2], { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } });
  // Only a signature known to be Anthropic's is sent, untagged, and an untagged one decodes as
  // Anthropic's (reasoning-tags.ts).
  const back = messagesCodec.decodeRequest({ ...body, stream: true });
  // top_p 0.9 is dropped beside thinking, which takes 0.95 to 1 only (thinking.ts encodeSampling).
  assert.equal(body.top_p, undefined);
  const { topP: _dropped, ...sent } = ir;
  assert.deepEqual(back, JSON.parse(JSON.stringify(sent)));
});

test('encodeRequest: merges same-role turns, drops unsigned reasoning, leaves max_tokens out when absent', () => {
  const body = messagesCodec.encodeRequest({
    model: 'm', stream: false,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'unsigned summary', encrypted: 'gAAA' }, { type: 'text', text: 'c' }] },
    ],
    reasoning: { effort: 'high' },
  });
  assert.equal('max_tokens' in body, false);
  assert.deepEqual(body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'c' }] },
  ]);
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 16384 });
  assert.throws(() => messagesCodec.encodeRequest({ model: 'm', stream: false, messages: [], responseFormat: { type: 'json_object' } }),
    (e: unknown) => e instanceof GatewayError && e.code === 'unsupported_parameter');
});

test('decodeRequest: block shapes, thinking bands, vendor-only fields to native', () => {
  const body = {
    model: 'claude-opus-4-5',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'One.' }, { type: 'text', text: 'Two.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: [
        { type: 'text', text: 'Read these' },
        { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
        { type: 'document', source: { type: 'url', url: 'https://x/doc.pdf' } },
      ] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'look', input: { q: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }] },
    ],
    tools: [{ name: 'look', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }],
    tool_choice: { type: 'any' },
    thinking: { type: 'enabled', budget_tokens: 1500 },
    top_k: 5,
    metadata: { user_id: 'u1' },
    output_config: { effort: 'high' },
  };
  const ir = messagesCodec.decodeRequest(body);
  assert.equal(ir.system, 'One.\n\nTwo.');
  assert.equal(ir.maxOutputTokens, 1024);
  assert.deepEqual(ir.reasoning, { effort: 'low', budgetTokens: 1500 });
  assert.equal(ir.toolChoice, 'required');
  assert.deepEqual(ir.tools, [{ name: 'look', parameters: { type: 'object' } }]);
  assert.deepEqual(ir.messages[0]!.content, [
    { type: 'text', text: 'Read these' },
    { type: 'image', url: 'https://x/y.png' },
    { type: 'file', mediaType: 'text/plain', data: Buffer.from('plain words').toString('base64') },
    { type: 'file', mediaType: 'application/pdf', url: 'https://x/doc.pdf' },
  ]);
  assert.deepEqual(ir.messages[2]!.content, [
    { type: 'tool_result', callId: 'toolu_9', content: 'line 1\nline 2' },
    { type: 'image', mediaType: 'image/png', data: PNG },
  ]);
  assert.equal(ir.native?.family, 'messages');
  assert.deepEqual(ir.native!.fields.top_k, 5);
  assert.deepEqual(ir.native!.fields.metadata, { user_id: 'u1' });
  assert.deepEqual(ir.native!.fields.output_config, { effort: 'high' });
  assert.deepEqual(ir.native!.fields.system, body.system); // cache_control kept
  assert.deepEqual(ir.native!.fields.tools, body.tools); // the server tool kept
  assert.equal('messages' in ir.native!.fields, false); // nothing lost there
  // the Messages encoder gives the vendor-only fields back
  const again = messagesCodec.encodeRequest(ir);
  assert.equal(again.top_k, 5);
  assert.deepEqual(again.system, body.system);
  assert.deepEqual(again.tools, body.tools);
  assert.deepEqual(again.output_config, { effort: 'high' });
  assert.equal(messagesCodec.decodeRequest({ model: 'm', messages: [], thinking: { type: 'adaptive' } }).reasoning?.effort, 'medium');
  assert.equal(messagesCodec.decodeRequest({ model: 'm', messages: [], thinking: { type: 'disabled' } }).reasoning, undefined);
  assert.equal(messagesCodec.decodeRequest({ model: 'm', messages: [], thinking: { type: 'enabled', budget_tokens: 9000 } }).reasoning?.effort, 'high');
  assert.equal(messagesCodec.decodeRequest({ model: 'm', messages: [] }).maxOutputTokens, undefined);
  assert.throws(() => messagesCodec.decodeRequest({ model: 'm', messages: 'hi' }), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request');
  assert.throws(() => messagesCodec.decodeRequest({ model: 'm', messages: [{ role: 'developer', content: 'x' }] }), GatewayError);
});

test('decodeRequest: a system-role message folds into the system text; the Messages encoder puts it back where it was', () => {
  // Claude Code's shape: the user's turn, then its environment as a system-role message.
  const body = {
    model: 'claude-opus-4-8', max_tokens: 64000,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
      { role: 'system', content: '# Environment\nPlatform: linux' },
      { role: 'user', content: 'And goodbye' },
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    ],
  };
  const ir = messagesCodec.decodeRequest(body);
  assert.equal(ir.system, '# Environment\nPlatform: linux\n\nBe brief.');
  assert.deepEqual(ir.messages, [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }, { type: 'text', text: 'And goodbye' }] }]);
  const again = messagesCodec.encodeRequest(ir);
  assert.deepEqual(again.messages, body.messages);
  assert.equal('system' in again, false, 'no top-level system was sent; the text is not sent twice');
  // After a top-level system; that one comes back as it was.
  const withSystem = messagesCodec.decodeRequest({ ...body, system: 'You are terse.' });
  assert.equal(withSystem.system, 'You are terse.\n\n# Environment\nPlatform: linux\n\nBe brief.');
  assert.equal(messagesCodec.encodeRequest(withSystem).system, 'You are terse.');
  assert.throws(() => messagesCodec.decodeRequest({ model: 'm', messages: [{ role: 'system', content: [{ type: 'image', source: {} }] }] }),
    (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request' && e.param === 'messages[0].content[0]');
});

const CTX: EncodeContext = { id: 'msg_gw1', model: 'claude-gw', createdAt: 1_760_000_000, tier: 'flex' };

function encode(events: IREvent[]): { text: string; frames: { event?: string; data: any }[] } {
  const enc = messagesCodec.createStreamEncoder(CTX);
  const text = events.map((e) => enc.push(e)).join('');
  const frames = text.split('\n\n').filter(Boolean).map((chunk) => {
    const f = parseFrame(chunk)!;
    return { event: f.event, data: JSON.parse(f.data) };
  });
  return { text, frames };
}

test('stream encoder: lazy message_start, contiguous indexes, a function-call signature as a thinking block', () => {
  const { frames } = encode([
    { type: 'block_start', index: 3, block: { kind: 'reasoning' } },
    { type: 'reasoning_delta', index: 3, text: 'think' },
    { type: 'signature', index: 3, signature: 'sig-r' },
    { type: 'block_stop', index: 3 },
    { type: 'block_start', index: 7, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
    { type: 'signature', index: 7, signature: 'sig-gemini' },
    { type: 'args_delta', index: 7, json: '{"a":' },
    { type: 'args_delta', index: 7, json: '1}' },
    { type: 'block_stop', index: 7 },
    { type: 'finish', reason: 'tool_use', usage: usage(100, 40, { cachedInputTokens: 30, reasoningTokens: 10 }), tier: 'flex' },
  ]);
  for (const f of frames) assert.equal(f.event, f.data.type);
  assert.deepEqual(frames.map((f) => f.event), [
    'message_start', 'ping',
    'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
    'content_block_start', 'content_block_delta', 'content_block_stop',
    'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
    'message_delta', 'message_stop',
  ]);
  assert.equal(frames[0]!.data.message.id, 'msg_gw1');
  assert.equal(frames[0]!.data.message.usage.service_tier, 'flex');
  assert.deepEqual(frames.filter((f) => f.event === 'content_block_start').map((f) => [f.data.index, f.data.content_block.type]), [[0, 'thinking'], [1, 'thinking'], [2, 'tool_use']]);
  assert.deepEqual(frames[7]!.data.delta, { type: 'signature_delta', signature: 'gemini-signature:sig-gemini' }, 'Gemini\'s signature goes tagged');
  assert.deepEqual(frames[13]!.data, {
    type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { input_tokens: 70, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 30 },
  });
});

test('stream encoder: cost and routing on message_delta; IR error → error event; failed finish is an error', () => {
  const routing = { provider: 'vendor_b' as const, requested_provider: 'vendor_b' as const, tier: 'flex' as const, reason: 'primary', fallback_attempts: 0, mode: 'managed' as const };
  const withCost = encode([{ type: 'start' }, { type: 'finish', reason: 'end', usage: usage(5, 6), extras: { cost: { total_micro_usd: 42, currency: 'USD' }, routing } }]);
  const md = withCost.frames.find((f) => f.event === 'message_delta')!;
  assert.deepEqual(md.data.usage.cost, { total_micro_usd: 42, currency: 'USD' });
  assert.deepEqual(md.data.usage.routing, routing);
  const err = encode([{ type: 'start' }, { type: 'error', code: 'overloaded', message: 'busy' }]);
  assert.deepEqual(err.frames.at(-1), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'busy', code: 'overloaded' } } });
  const failed = encode([{ type: 'start' }, { type: 'finish', reason: 'error', usage: zeroUsage() }]);
  assert.equal(failed.frames.at(-1)!.event, 'error');
  assert.equal(failed.frames.at(-1)!.data.error.code, 'provider_error');
});

test('a model refusal and a content filter both end with stop_reason refusal; the refusal text is a text block', () => {
  const refusal: IREvent[] = [
    { type: 'start' }, { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
    { type: 'text_delta', index: 0, text: 'No.' }, { type: 'block_stop', index: 0 }, { type: 'finish', reason: 'refusal', usage: usage(5, 2) },
  ];
  const streamed = encode(refusal).frames;
  assert.deepEqual(streamed.find((f) => f.event === 'content_block_delta')!.data.delta, { type: 'text_delta', text: 'No.' });
  assert.equal(streamed.find((f) => f.event === 'message_delta')!.data.delta.stop_reason, 'refusal');
  const filtered = encode([{ type: 'start' }, { type: 'finish', reason: 'content_filter', usage: usage(5, 0) }]).frames;
  assert.equal(filtered.find((f) => f.event === 'message_delta')!.data.delta.stop_reason, 'refusal');
  const base = { id: 'x', model: 'gpt', tier: 'standard' as const, usage: usage(5, 2) };
  const body = messagesCodec.encodeResponse({ ...base, stopReason: 'refusal', blocks: [{ kind: 'text', text: 'No.', refusal: true }] }, CTX);
  assert.deepEqual([body.content, body.stop_reason], [[{ type: 'text', text: 'No.' }], 'refusal']);
  assert.equal(messagesCodec.encodeResponse({ ...base, stopReason: 'content_filter', blocks: [] }, CTX).stop_reason, 'refusal');
  assert.equal(messagesCodec.decodeResponse({ ...body, stop_reason: 'refusal' }).stopReason, 'content_filter');
});

test('encodeResponse: Message body with thinking, text, tool_use, Anthropic usage convention, tier', () => {
  const body = messagesCodec.encodeResponse({
    id: 'x', model: 'gemini', stopReason: 'tool_use', tier: 'flex',
    blocks: [
      { kind: 'reasoning', text: 'hmm', signature: 's1' },
      { kind: 'text', text: 'Calling.' },
      { kind: 'tool_call', id: 'toolu_7', name: 'f', arguments: '{"x":1}' },
    ],
    usage: usage(50, 20, { cachedInputTokens: 10, cacheWriteTokens: 5 }),
  }, CTX);
  assert.deepEqual(body, {
    id: 'msg_gw1', type: 'message', role: 'assistant', model: 'claude-gw',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'gemini-signature:s1' },
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'toolu_7', name: 'f', input: { x: 1 } },
    ],
    stop_reason: 'tool_use', stop_sequence: null,
    usage: { input_tokens: 35, output_tokens: 20, cache_creation_input_tokens: 5, cache_read_input_tokens: 10, service_tier: 'flex' },
  });
});

function tapFinal(frames: SSEFrame[]): { state: TapState; final: { frame: SSEFrame; data: any } | undefined } {
  const state: TapState = { usage: zeroUsage(), sawUsage: false };
  let final: { frame: SSEFrame; data: any } | undefined;
  for (const frame of frames) {
    if (!messagesCodec.tap.carriesUsage(frame)) continue;
    const data = JSON.parse(frame.data);
    messagesCodec.tap.read(data, state);
    if (messagesCodec.tap.isFinal(frame, data)) final = { frame, data };
  }
  return { state, final };
}

test('tap: final usage of every recorded stream equals the decoder\'s', recordedOnly, () => {
  const files = ['anthropic-text.chunks.txt', 'anthropic-json-tool.1.chunks.txt', 'anthropic-tool-no-args.chunks.txt',
    'anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt', 'anthropic-refusal.chunks.txt', 'anthropic-message-delta-input-tokens.chunks.txt'];
  for (const file of files) {
    const frames = recorded(file);
    const { state, final } = tapFinal(frames);
    assert.ok(state.sawUsage, file);
    assert.deepEqual(state.usage, decode(frames).res.usage, file);
    assert.equal(state.tier ?? 'standard', 'standard', file);
    assert.equal(final?.frame.event, 'message_delta', file);
    assert.ok(!messagesCodec.tap.carriesUsage({ event: 'ping', data: '{"type":"ping"}' }));
  }
  assert.equal(tapFinal(recorded('anthropic-message-delta-input-tokens.chunks.txt')).state.usage.inputTokens, 61);
});

test('tap: inject adds cost and routing and changes nothing else', recordedOnly, () => {
  const { final } = tapFinal(recorded('anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt'));
  const routing = { provider: 'vendor_c' as const, requested_provider: 'vendor_c' as const, tier: 'standard' as const, reason: 'primary', fallback_attempts: 0, mode: 'byok' as const };
  const out = JSON.parse(messagesCodec.tap.inject(final!.data, { cost: { total_micro_usd: 1234, currency: 'USD' }, routing }));
  const { cost, routing: r, ...restUsage } = out.usage;
  assert.deepEqual(cost, { total_micro_usd: 1234, currency: 'USD' });
  assert.deepEqual(r, routing);
  assert.deepEqual({ ...out, usage: restUsage }, final!.data);
  const noCost = JSON.parse(messagesCodec.tap.inject(final!.data, { routing }));
  assert.equal('cost' in noCost.usage, false);
});

test('decodeRequest: a block whose type names an Object.prototype member is an unknown block like any other (native only)', () => {
  const decode = (type: string) => messagesCodec.decodeRequest({
    model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type }] }],
  });
  const unknown = decode('bogus_block');
  assert.deepEqual(unknown.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    assert.deepEqual(decode(type).messages, unknown.messages, type);
    assert.equal(decode(type).native?.fields.messages !== undefined, unknown.native?.fields.messages !== undefined, `${type}: kept as sent, as an unknown block is`);
  }
});
