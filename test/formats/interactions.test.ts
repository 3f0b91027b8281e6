// Interactions codec: recorded Gemini Interactions traffic decodes to the IR the conventions
// promise; requests survive IR → body → IR; encoder frames are well-formed; the tap reads usage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { interactionsCodec } from '../../lib/formats/interactions/index.ts';
import type { EncodeContext, SSEFrame, TapState } from '../../lib/formats/types.ts';
import { type IREvent, type IRRequest, type IRUsage, zeroUsage } from '../../lib/ir.ts';
import { GatewayError } from '../../lib/errors.ts';
import { parseFrame } from '../../lib/sse.ts';
import { decodeAll } from '../helpers/decode.ts';
import { RECORDED, recordedOnly } from '../helpers/recorded.ts';

const DIR = `${RECORDED}/gemini-interactions`;

/** A recorded .chunks.txt as the frames on the wire (event name = payload.event_type), plus the
 *  `done` frame the recorder left out. */
function recorded(file: string): SSEFrame[] {
  return [
    ...readFileSync(`${DIR}/${file}`, 'utf8').split('\n').filter((l) => l.trim()).map((data) => ({ event: JSON.parse(data).event_type, data })),
    { event: 'done', data: '[DONE]' },
  ];
}

const decode = (frames: SSEFrame[]) => decodeAll(interactionsCodec, frames);

const usage = (input: number, output: number, reasoning: number, cached = 0): IRUsage =>
  ({ ...zeroUsage(), inputTokens: input, outputTokens: output, reasoningTokens: reasoning, cachedInputTokens: cached });

const fixtureJSON = (file: string) => JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8'));

test('basic: thought signature, text, usage (output = total_output + total_thought), tier', recordedOnly, () => {
  const { events, res } = decode(recorded('basic.chunks.txt'));
  assert.deepEqual(events[0], { type: 'start', id: 'v1_ChdUR3NIYXVyQkFlYVA2ZGtQajZERThBVRIXVEdzSGF1ckJBZWFQNmRrUGo2REU4QVU', model: 'gemini-2.5-flash' });
  assert.equal(res.blocks.length, 2);
  const [thought, text] = res.blocks;
  assert.ok(thought!.kind === 'reasoning' && thought!.text === '' && thought!.signature!.startsWith('CiQBDDnWxzCnKBoG0'));
  assert.deepEqual(text, { kind: 'text', text: "I'm doing great, thank you for asking!\n\nHow are you doing today? And what can I do for you?" });
  assert.equal(res.stopReason, 'end');
  assert.deepEqual(res.usage, usage(7, 26 + 115, 115));
  assert.equal(res.tier, 'standard');
});

test('tool-call-step1: function_call with arguments, requires_action → tool_use', recordedOnly, () => {
  const { res } = decode(recorded('tool-call-step1.chunks.txt'));
  const call = res.blocks[1]!;
  assert.ok(call.kind === 'tool_call');
  if (call.kind !== 'tool_call') return;
  assert.equal(call.id, '61nzpsv4');
  assert.equal(call.name, 'getWeather');
  assert.deepEqual(JSON.parse(call.arguments), { location: 'San Francisco' });
  assert.equal(call.signature, undefined); // the step's "signature":"" says nothing
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.usage, usage(53, 15 + 65, 65));
});

test('tool-call-step2 and multi-turn-stateless-turn1: text after a thought; empty interaction id', recordedOnly, () => {
  const step2 = decode(recorded('tool-call-step2.chunks.txt')).res;
  assert.deepEqual(step2.blocks[1], { kind: 'text', text: 'The weather in San Francisco right now is sunny with a temperature of 27 degrees Celsius.' });
  assert.equal((step2.blocks[0] as { signature?: string }).signature, 'CiRlMjQ4MzBhNy01Y2Q2LTQyZmUtOTk4Yi1lZTUzOWU3MmI5YzM=');
  assert.deepEqual(step2.usage, usage(161, 19, 0));
  const turn1 = decode(recorded('multi-turn-stateless-turn1.chunks.txt'));
  assert.deepEqual(turn1.events[0], { type: 'start', model: 'gemini-2.5-flash' });
  assert.deepEqual(turn1.res.blocks[1], { kind: 'text', text: 'The three largest cities in Spain are:\n\n1.  **Madrid**\n2.  **Barcelona**\n3.  **Valencia**' });
  assert.deepEqual(turn1.res.usage, usage(10, 29 + 174, 174));
});

test('status mapping, flex tier, error events, a stream cut before interaction.completed', () => {
  const completed = (status: string, tier = 'standard') => ({ event: 'interaction.completed', data: JSON.stringify({ event_type: 'interaction.completed', interaction: { id: 'v1_x', status, service_tier: tier, usage: { total_input_tokens: 4, total_cached_tokens: 2, total_output_tokens: 3, total_thought_tokens: 1, total_tool_use_tokens: 5 } } }) });
  const created = { event: 'interaction.created', data: '{"event_type":"interaction.created","interaction":{"id":"v1_x","status":"in_progress"}}' };
  const incomplete = decode([created, completed('incomplete', 'flex')]);
  assert.equal(incomplete.res.stopReason, 'max_tokens');
  assert.equal(incomplete.res.tier, 'flex');
  assert.deepEqual(incomplete.res.usage, { ...usage(9, 4, 1, 2), toolUseTokens: 5 });
  assert.equal(decode([created, completed('failed')]).res.stopReason, 'error');
  const err = decode([created, { event: 'error', data: '{"error":{"message":"Deadline expired before operation could complete.","code":"gateway_timeout"},"event_type":"error"}' }]);
  assert.deepEqual(err.events.at(-1), { type: 'error', code: 'gateway_timeout', message: 'Deadline expired before operation could complete.' });
  assert.equal(decode([created]).events.at(-1)!.type, 'error');
});

test('thought summaries and a function_call step.start that carries its arguments', () => {
  const frames: SSEFrame[] = [
    { event: 'interaction.created', data: '{"event_type":"interaction.created","interaction":{"id":"v1_y","status":"in_progress"}}' },
    { event: 'step.start', data: '{"event_type":"step.start","index":0,"step":{"type":"thought"}}' },
    { event: 'step.delta', data: '{"event_type":"step.delta","index":0,"delta":{"type":"thought_summary","content":{"type":"text","text":"Plan: "}}}' },
    { event: 'step.delta', data: '{"event_type":"step.delta","index":0,"delta":{"type":"thought_summary","content":{"type":"text","text":"call f."}}}' },
    { event: 'step.delta', data: '{"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"SIG"}}' },
    { event: 'step.stop', data: '{"event_type":"step.stop","index":0}' },
    { event: 'step.start', data: '{"event_type":"step.start","index":1,"step":{"type":"function_call","id":"c1","name":"f","arguments":{"q":"x"},"signature":"FSIG"}}' },
    { event: 'step.stop', data: '{"event_type":"step.stop","index":1}' },
    { event: 'interaction.completed', data: '{"event_type":"interaction.completed","interaction":{"id":"v1_y","status":"requires_action","usage":{}}}' },
  ];
  const { res } = decode(frames);
  assert.deepEqual(res.blocks, [
    { kind: 'reasoning', text: 'Plan: call f.', signature: 'SIG' },
    { kind: 'tool_call', id: 'c1', name: 'f', arguments: '{"q":"x"}', signature: 'FSIG' },
  ]);
});

test('decodeResponse: basic.json, tool-call-step1.json, structured-output.json', recordedOnly, () => {
  const basic = interactionsCodec.decodeResponse(fixtureJSON('basic.json'));
  assert.equal(basic.id, 'v1_ChdTbXNIYXFyUEV0ZUttdGtQNXVqVHdRRRIXU21zSGFxclBFdGVLbXRrUDV1alR3UUU');
  assert.ok(basic.blocks[0]!.kind === 'reasoning' && basic.blocks[0]!.signature!.startsWith('CqwBAQw51sfg'));
  assert.deepEqual(basic.blocks[1], { kind: 'text', text: "Hello! I'm doing well, thank you for asking.\n\nHow are you today?" });
  assert.deepEqual(basic.usage, usage(7, 19 + 32, 32));
  assert.equal(basic.stopReason, 'end');
  const tool = interactionsCodec.decodeResponse(fixtureJSON('tool-call-step1.json'));
  assert.deepEqual(tool.blocks[1], { kind: 'tool_call', id: 'zggxzq8r', name: 'getWeather', arguments: '{"location":"San Francisco"}' });
  assert.equal(tool.stopReason, 'tool_use');
  assert.deepEqual(tool.usage, usage(53, 15 + 41, 41));
  const structured = interactionsCodec.decodeResponse(fixtureJSON('structured-output.json'));
  assert.deepEqual(JSON.parse((structured.blocks[1] as { text: string }).text), { name: 'John Doe', age: 30 });
  assert.equal(structured.model, 'gemini-2.5-flash');
});

const PNG = Buffer.from('png').toString('base64');
const PDF = Buffer.from('%PDF').toString('base64');

function fullIR(): IRRequest {
  return {
    model: 'gemini-3-flash',
    system: 'Be terse.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', mediaType: 'image/png', data: PNG }, { type: 'file', mediaType: 'application/pdf', data: PDF }] },
      { role: 'assistant', content: [
        { type: 'reasoning', signature: 'thought-sig' },
        { type: 'tool_call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}', signature: 'fc-sig' },
      ] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'c1', name: 'get_weather', content: '18C' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'summary', signature: 's2' }, { type: 'text', text: 'It is 18C.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ],
    tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
    toolChoice: 'required',
    maxOutputTokens: 500,
    temperature: 0.5,
    topP: 0.9,
    reasoning: { effort: 'low' },
    responseFormat: { type: 'json_schema', schema: { type: 'object' } },
    stopSequences: ['END'],
    stream: false,
  };
}

test('round trip IR → encodeRequest → decodeRequest keeps steps, signatures, media, tools, format', () => {
  const ir = fullIR();
  const body = interactionsCodec.encodeRequest(ir);
  assert.equal(body.model, 'gemini-3-flash');
  assert.equal('stream' in body, false);
  assert.equal('service_tier' in body, false);
  assert.deepEqual(body.input.map((s: any) => s.type), ['user_input', 'thought', 'function_call', 'function_result', 'thought', 'model_output', 'user_input']);
  assert.deepEqual(body.input[2], { type: 'function_call', id: 'c1', name: 'get_weather', arguments: { city: 'Paris' }, signature: 'fc-sig' });
  assert.deepEqual(body.input[3], { type: 'function_result', call_id: 'c1', name: 'get_weather', result: '18C' });
  assert.deepEqual(body.generation_config, { max_output_tokens: 500, temperature: 0.5, top_p: 0.9, stop_sequences: ['END'], thinking_level: 'low', tool_choice: 'any' });
  assert.deepEqual(body.response_format, { type: 'text', mime_type: 'application/json', schema: { type: 'object' } });
  assert.deepEqual(interactionsCodec.decodeRequest(body), ir);
});

test('encodeRequest: thinking_level for a model that thinks (2.5 too: the API\'s only knob), none for Gemini 2.0, which refuses it', () => {
  const level = (model: string) => interactionsCodec.encodeRequest({ model, stream: false, messages: [], reasoning: { effort: 'low' } }).generation_config?.thinking_level;
  assert.equal(level('gemini-3.5-flash'), 'low');
  assert.equal(level('gemini-2.5-flash'), 'low');
  assert.equal(level('gemini-2.0-flash'), undefined);
});

test('encodeRequest: function_result name from the earlier call; unsigned reasoning dropped; choice of one tool', () => {
  const body = interactionsCodec.encodeRequest({
    model: 'g', stream: true,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'openai summary', encrypted: 'gAAA' }, { type: 'tool_call', id: 'call_9', name: 'lookup', arguments: '' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'call_9', content: 'found', isError: true }] },
    ],
    tools: [{ name: 'lookup', parameters: { type: 'object' } }],
    toolChoice: { name: 'lookup' },
  });
  assert.deepEqual(body.input, [
    { type: 'user_input', content: [{ type: 'text', text: 'go' }] },
    // an OpenAI-made call has no Gemini signature: Google's skip value stands in for it
    { type: 'function_call', id: 'call_9', name: 'lookup', arguments: {}, signature: 'skip_thought_signature_validator' },
    { type: 'function_result', call_id: 'call_9', name: 'lookup', result: 'found', is_error: true },
  ]);
  assert.deepEqual(body.generation_config.tool_choice, { allowed_tools: { mode: 'any', tools: ['lookup'] } });
});

test('decodeRequest: string input, content parts, turns, generation_config extras to native', () => {
  assert.deepEqual(interactionsCodec.decodeRequest({ model: 'g', input: 'hello' }).messages, [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
  const parts = interactionsCodec.decodeRequest({ model: 'g', input: [{ type: 'text', text: 'look' }, { type: 'image', uri: 'https://x/a.png', mime_type: 'image/png' }, { type: 'audio', data: 'AAA', mime_type: 'audio/wav' }] });
  assert.deepEqual(parts.messages, [{ role: 'user', content: [
    { type: 'text', text: 'look' }, { type: 'image', mediaType: 'image/png', url: 'https://x/a.png' }, { type: 'file', mediaType: 'audio/wav', data: 'AAA' },
  ] }]);
  const turns = interactionsCodec.decodeRequest({ model: 'g', input: [
    { role: 'user', content: 'hi' },
    { role: 'model', content: [{ type: 'text', text: 'hello' }] },
    { role: 'user', content: [{ type: 'function_result', call_id: 'a', name: 'f', result: { ok: true } }] },
  ] });
  assert.deepEqual(turns.messages, [
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'a', name: 'f', content: '{"ok":true}' }] },
  ]);
  const ir = interactionsCodec.decodeRequest({
    model: 'g', input: 'x', previous_interaction_id: 'v1_prev', store: false,
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'google_search' }],
    generation_config: { thinking_level: 'high', thinking_summaries: 'auto', seed: 7, tool_choice: { allowed_tools: { mode: 'any', tools: ['f', 'g'] } } },
    response_format: [{ type: 'text', mime_type: 'application/json' }],
  });
  assert.deepEqual(ir.reasoning, { effort: 'high' });
  assert.equal(ir.toolChoice, 'required');
  assert.deepEqual(ir.responseFormat, { type: 'json_object' });
  assert.deepEqual(ir.native, { family: 'interactions', fields: {
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'google_search' }],
    generation_config: { thinking_summaries: 'auto', seed: 7, tool_choice: { allowed_tools: { mode: 'any', tools: ['f', 'g'] } } },
    previous_interaction_id: 'v1_prev', store: false,
  } });
  const back = interactionsCodec.encodeRequest(ir);
  assert.deepEqual(back.generation_config, { thinking_level: 'high', tool_choice: { allowed_tools: { mode: 'any', tools: ['f', 'g'] } }, thinking_summaries: 'auto', seed: 7 });
  assert.equal(back.previous_interaction_id, 'v1_prev');
  assert.deepEqual(back.tools, ir.native!.fields.tools);
  assert.throws(() => interactionsCodec.decodeRequest({ model: 'g', input: 'x', system_instruction: { parts: [] } }), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request');
});

const CTX: EncodeContext = { id: 'v1_gw', model: 'gemini-gw', createdAt: 1_760_000_000, tier: 'flex' };
const routing = { provider: 'vendor_b' as const, requested_provider: 'vendor_b' as const, tier: 'flex' as const, reason: 'primary', fallback_attempts: 0, mode: 'managed' as const };

function encode(events: IREvent[]): { event?: string; data: any }[] {
  const enc = interactionsCodec.createStreamEncoder(CTX);
  return events.map((e) => enc.push(e)).join('').split('\n\n').filter(Boolean).map((chunk) => {
    const f = parseFrame(chunk)!;
    return { event: f.event, data: f.data === '[DONE]' ? f.data : JSON.parse(f.data) };
  });
}

test('stream encoder: lifecycle frames, renumbered steps, function_call signature on step.start, usage extras', () => {
  const frames = encode([
    { type: 'start', id: 'msg_upstream' },
    { type: 'block_start', index: 4, block: { kind: 'reasoning' } },
    { type: 'reasoning_delta', index: 4, text: 'hmm' },
    { type: 'signature', index: 4, signature: 'S' },
    { type: 'block_stop', index: 4 },
    { type: 'block_start', index: 9, block: { kind: 'tool_call', id: 'c1', name: 'f' } },
    { type: 'signature', index: 9, signature: 'FS' },
    { type: 'args_delta', index: 9, json: '{"a":1}' },
    { type: 'block_stop', index: 9 },
    { type: 'finish', reason: 'tool_use', usage: usage(10, 8, 3), extras: { cost: { total_micro_usd: 5, currency: 'USD' }, routing } },
  ]);
  assert.deepEqual(frames.map((f) => f.event), ['interaction.created', 'interaction.status_update', 'step.start', 'step.delta', 'step.delta', 'step.stop', 'step.start', 'step.delta', 'step.stop', 'interaction.completed', 'done']);
  for (const f of frames.slice(0, -1)) assert.equal(f.data.event_type, f.event);
  assert.equal(frames[0]!.data.interaction.id, 'v1_gw');
  assert.deepEqual(frames[2]!.data, { index: 0, step: { type: 'thought' }, event_type: 'step.start' });
  assert.deepEqual(frames[6]!.data.step, { type: 'function_call', id: 'c1', name: 'f', arguments: {}, signature: 'FS' });
  assert.equal(frames[6]!.data.index, 1);
  assert.deepEqual(frames[9]!.data.interaction, {
    id: 'v1_gw', status: 'requires_action',
    usage: { total_input_tokens: 10, total_cached_tokens: 0, total_output_tokens: 5, total_thought_tokens: 3, total_tool_use_tokens: 0, total_tokens: 18, input_tokens: 10, output_tokens: 8, cost: { total_micro_usd: 5, currency: 'USD' }, routing },
    created: '2025-10-09T08:53:20Z', updated: '2025-10-09T08:53:20Z', service_tier: 'flex', object: 'interaction', model: 'gemini-gw',
  });
  assert.equal(frames[10]!.data, '[DONE]');
  const err = encode([{ type: 'start' }, { type: 'error', code: 'provider_error', message: 'boom' }]);
  assert.deepEqual(err.at(-2), { event: 'error', data: { error: { code: 'provider_error', message: 'boom' }, event_type: 'error' } });
});

test('status: a content filter is incomplete; a model refusal is a completed answer with its text', () => {
  const statusOf = (reason: 'content_filter' | 'refusal') => encode([
    { type: 'start' }, { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } }, { type: 'text_delta', index: 0, text: 'No.' },
    { type: 'block_stop', index: 0 }, { type: 'finish', reason, usage: usage(3, 2, 0) },
  ]).find((f) => f.event === 'interaction.completed')!.data.interaction.status;
  assert.equal(statusOf('content_filter'), 'incomplete');
  assert.equal(statusOf('refusal'), 'completed');
  const base = { id: 'x', model: 'm', tier: 'standard' as const, usage: usage(3, 2, 0), blocks: [{ kind: 'text' as const, text: 'No.', refusal: true as const }] };
  assert.equal(interactionsCodec.encodeResponse({ ...base, stopReason: 'content_filter' }, CTX).status, 'incomplete');
  const refused = interactionsCodec.encodeResponse({ ...base, stopReason: 'refusal' }, CTX);
  assert.equal(refused.status, 'completed');
  assert.deepEqual(refused.steps.at(-1).content, [{ type: 'text', text: 'No.' }]);
});

test('encodeResponse: Interaction with thought, model_output, function_call; status; usage', () => {
  const body = interactionsCodec.encodeResponse({
    id: 'x', model: 'claude', stopReason: 'max_tokens', tier: 'standard',
    blocks: [{ kind: 'reasoning', text: 'r', signature: 'sig' }, { kind: 'text', text: 'a' }, { kind: 'text', text: 'b' }],
    usage: usage(20, 10, 4, 5),
  }, { ...CTX, tier: 'standard' });
  assert.deepEqual(body, {
    id: 'v1_gw', object: 'interaction', model: 'gemini-gw', status: 'incomplete', created: '2025-10-09T08:53:20Z', updated: '2025-10-09T08:53:20Z', service_tier: 'standard',
    steps: [{ type: 'thought', signature: 'sig', summary: [{ type: 'text', text: 'r' }] }, { type: 'model_output', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
    usage: { total_input_tokens: 20, total_cached_tokens: 5, total_output_tokens: 6, total_thought_tokens: 4, total_tool_use_tokens: 0, total_tokens: 30 },
  });
  // Tool-use prompt tokens, part of the IR's input, go back outside total_input_tokens.
  const searched = interactionsCodec.encodeResponse({ id: '', model: '', stopReason: 'end', tier: 'standard', blocks: [], usage: { ...usage(1050, 300, 200, 1000), toolUseTokens: 40 } }, CTX);
  assert.deepEqual(searched.usage, {
    total_input_tokens: 1010, total_cached_tokens: 1000, total_output_tokens: 100, total_thought_tokens: 200, total_tool_use_tokens: 40, total_tokens: 1350,
  });
  const tool = interactionsCodec.encodeResponse({ id: '', model: '', stopReason: 'end', tier: 'flex', blocks: [{ kind: 'tool_call', id: 'c', name: 'f', arguments: '{"x":1}' }], usage: zeroUsage() }, CTX);
  assert.equal(tool.status, 'requires_action');
  assert.deepEqual(tool.steps, [{ type: 'function_call', id: 'c', name: 'f', arguments: { x: 1 } }]);
});

function tapFinal(frames: SSEFrame[]): { state: TapState; final?: any } {
  const state: TapState = { usage: zeroUsage(), sawUsage: false };
  let final: any;
  for (const frame of frames) {
    if (!interactionsCodec.tap.carriesUsage(frame)) continue;
    const data = JSON.parse(frame.data);
    interactionsCodec.tap.read(data, state);
    if (interactionsCodec.tap.isFinal(frame, data)) final = data;
  }
  return { state, final };
}

test('tap: final usage of every recorded stream equals the decoder\'s; inject adds only the spec fields', recordedOnly, () => {
  for (const file of ['basic.chunks.txt', 'tool-call-step1.chunks.txt', 'tool-call-step2.chunks.txt', 'multi-turn-stateless-turn1.chunks.txt']) {
    const frames = recorded(file);
    const { state, final } = tapFinal(frames);
    assert.ok(state.sawUsage, file);
    assert.deepEqual(state.usage, decode(frames).res.usage, file);
    assert.equal(state.tier, 'standard', file);
    assert.equal(final.event_type, 'interaction.completed', file);
  }
  const { final } = tapFinal(recorded('basic.chunks.txt'));
  const out = JSON.parse(interactionsCodec.tap.inject(final, { cost: { total_micro_usd: 3, currency: 'USD' }, routing }));
  const { cost, routing: r, input_tokens, output_tokens, ...rest } = out.interaction.usage;
  assert.deepEqual([cost, r, input_tokens, output_tokens], [{ total_micro_usd: 3, currency: 'USD' }, routing, 7, 141]);
  assert.deepEqual({ ...out, interaction: { ...out.interaction, usage: rest } }, final);
});

test('decodeRequest: an input item whose type names an Object.prototype member is an unknown item like any other (native only)', () => {
  const decode = (type: string) => interactionsCodec.decodeRequest({
    model: 'm', input: [{ type: 'user_input', content: [{ type: 'text', text: 'hi' }] }, { type }],
  });
  const unknown = decode('bogus_item');
  assert.deepEqual(unknown.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    assert.deepEqual(decode(type).messages, unknown.messages, type);
    assert.equal(decode(type).native?.fields.input !== undefined, unknown.native?.fields.input !== undefined, `${type}: kept as sent, as an unknown item is`);
  }
});
