// Vertex codec: the recorded streamGenerateContent (a function call streamed as partialArgs)
// decodes to the IR; requests encode to valid generateContent bodies; the tap reads final usage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { vertexCodec } from '../../lib/formats/vertex/index.ts';
import { parsePath, PartialArgs } from '../../lib/formats/vertex/partial-args.ts';
import type { EncodeContext, SSEFrame, TapState } from '../../lib/formats/types.ts';
import { type IREvent, type IRRequest, type IRUsage, zeroUsage } from '../../lib/ir.ts';
import { parseFrame } from '../../lib/sse.ts';
import { decodeAll } from '../helpers/decode.ts';
import { RECORDED, recordedOnly } from '../helpers/recorded.ts';

const FILE = `${RECORDED}/gemini-vertex/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt`;
const recorded = (): SSEFrame[] => readFileSync(FILE, 'utf8').split('\n').filter((l) => l.trim()).map((data) => ({ data }));

const decode = (frames: SSEFrame[]) => decodeAll(vertexCodec, frames);

const usage = (input: number, output: number, reasoning: number, cached = 0): IRUsage =>
  ({ ...zeroUsage(), inputTokens: input, outputTokens: output, reasoningTokens: reasoning, cachedInputTokens: cached });

const RECIPE = {
  recipe: {
    ingredients: [
      { amount: '16 oz', name: 'Lasagna noodles' }, { amount: '1 lb', name: 'Ground beef' }, { amount: '15 oz', name: 'Ricotta cheese' },
      { amount: '3 cups', name: 'Mozzarella cheese' }, { amount: '1/2 cup', name: 'Parmesan cheese' }, { amount: '24 oz', name: 'Tomato sauce' },
      { amount: '1', name: 'Egg' }, { amount: '2 cloves', name: 'Garlic' }, { amount: '1 tsp', name: 'Salt' }, { amount: '1/2 tsp', name: 'Pepper' },
    ],
    name: 'Lasagna',
    steps: [
      'Preheat oven to 375°F (190°C).',
      'Cook lasagna noodles according to package directions, drain and set aside.',
      'Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. Simmer for 10 minutes.',
      'In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.',
      'In a 9x13 baking dish, spread a thin layer of meat sauce.',
      'Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.',
      'Top with remaining mozzarella cheese.',
      'Cover with foil and bake for 25 minutes.',
      'Remove foil and bake for another 25 minutes until golden.',
      'Let stand for 15 minutes before serving.',
    ],
  },
};

test('recorded stream: one function call rebuilt from partialArgs, its thoughtSignature, usage with thoughts, tier', recordedOnly, () => {
  const { events, res } = decode(recorded());
  assert.deepEqual(events[0], { type: 'start', id: 'tjXVaYaxFISTq8YP_MWiyAo', model: 'gemini-3.1-pro-preview' });
  assert.equal(res.blocks.length, 1);
  const call = res.blocks[0]!;
  assert.ok(call.kind === 'tool_call');
  if (call.kind !== 'tool_call') return;
  assert.equal(call.name, 'cookRecipe');
  assert.match(call.id, /^call_/);
  assert.deepEqual(JSON.parse(call.arguments), RECIPE);
  assert.ok(call.signature!.startsWith('CmIBjz1rX0OQAtrZ'));
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.usage, usage(31, 684 + 1026, 1026));
  assert.equal(res.tier, 'standard');
  assert.deepEqual(events.filter((e) => e.type === 'block_start' || e.type === 'block_stop').map((e) => e.type), ['block_start', 'block_stop']);
  assert.equal(events.at(-1)!.type, 'finish');
});

test('partialArgs: paths, appended strings, numbers, booleans, nulls', () => {
  assert.deepEqual(parsePath("$.a.b[2]['c d'][\"e\"]"), ['a', 'b', 2, 'c d', 'e']);
  assert.equal(parsePath('a.b'), undefined);
  const args = new PartialArgs({ keep: 1 });
  args.apply([{ jsonPath: '$.s', stringValue: 'Hel', willContinue: true }]);
  args.apply([{ jsonPath: '$.s', stringValue: 'lo', willContinue: true }, { jsonPath: '$.s', stringValue: '' }]);
  args.apply([{ jsonPath: '$.s2', stringValue: 'x' }, { jsonPath: '$.s2', stringValue: 'y' }]); // no willContinue: a new value
  args.apply([{ jsonPath: '$.n[0].v', numberValue: 3 }, { jsonPath: '$.t', boolValue: false }, { jsonPath: '$.z', nullValue: 'NULL_VALUE' }]);
  assert.deepEqual(JSON.parse(args.json()), { keep: 1, s: 'Hello', s2: 'y', n: [{ v: 3 }], t: false, z: null });
});

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}): SSEFrame =>
  ({ data: JSON.stringify({ candidates: [{ content: { role: 'model', parts }, ...extra }], responseId: 'r1', modelVersion: 'gemini-x' }) });

test('text and thought parts, signatures on text parts, whole function calls, finish reasons, flex traffic', () => {
  const { res } = decode([
    chunk([{ text: 'Plan', thought: true }]),
    chunk([{ text: ' it.', thought: true, thoughtSignature: 'TS' }]),
    chunk([{ text: 'Hel', thoughtSignature: 'S1' }]),
    chunk([{ text: 'lo' }]),
    chunk([{ functionCall: { name: 'f', args: { a: 1 }, id: 'fc1' }, thoughtSignature: 'S2' }, { functionCall: { name: 'g', args: {} } }]),
    { data: JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 10, cachedContentTokenCount: 4, candidatesTokenCount: 5, thoughtsTokenCount: 2, totalTokenCount: 17, trafficType: 'ON_DEMAND_FLEX' } }) },
  ]);
  assert.deepEqual(res.blocks.map((b) => b.kind), ['reasoning', 'reasoning', 'text', 'tool_call', 'tool_call']);
  assert.deepEqual(res.blocks[0], { kind: 'reasoning', text: 'Plan it.', signature: 'TS' });
  assert.deepEqual(res.blocks[1], { kind: 'reasoning', text: '', signature: 'S1' }); // the text part's signature
  assert.deepEqual(res.blocks[2], { kind: 'text', text: 'Hello' });
  assert.deepEqual(res.blocks[3], { kind: 'tool_call', id: 'fc1', name: 'f', arguments: '{"a":1}', signature: 'S2' });
  assert.equal((res.blocks[4] as { arguments: string }).arguments, '{}');
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.usage, usage(10, 7, 2, 4));
  assert.equal(res.tier, 'flex');
  assert.equal(decode([chunk([{ text: 'cut' }], { finishReason: 'MAX_TOKENS' })]).res.stopReason, 'max_tokens');
  assert.equal(decode([chunk([], { finishReason: 'SAFETY' })]).res.stopReason, 'content_filter');
  assert.equal(decode([{ data: '{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}' }]).res.stopReason, 'content_filter');
  assert.equal(decode([chunk([{ text: 'no finish' }])]).events.at(-1)!.type, 'error');
  assert.deepEqual(decode([{ data: '{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}' }]).events.at(-1), { type: 'error', code: 'RESOURCE_EXHAUSTED', message: 'Quota' });
});

test('decodeResponse: a whole GenerateContentResponse', () => {
  const res = vertexCodec.decodeResponse({
    candidates: [{ content: { role: 'model', parts: [{ text: 'Hi', thoughtSignature: 'S' }, { functionCall: { name: 'f', args: { q: 'x' } } }] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8, trafficType: 'ON_DEMAND' },
    modelVersion: 'gemini-2.5-pro', responseId: 'rid',
  });
  assert.equal(res.id, 'rid');
  assert.equal(res.model, 'gemini-2.5-pro');
  assert.deepEqual(res.blocks.map((b) => b.kind), ['reasoning', 'text', 'tool_call']);
  assert.equal(res.stopReason, 'tool_use');
  assert.deepEqual(res.usage, usage(5, 3, 0));
});

test('tool-use prompt tokens: counted in the IR input, kept apart, written back outside promptTokenCount', () => {
  const usageMetadata = {
    promptTokenCount: 1010, cachedContentTokenCount: 1000, candidatesTokenCount: 100, thoughtsTokenCount: 200,
    toolUsePromptTokenCount: 40, totalTokenCount: 1350, trafficType: 'ON_DEMAND',
  };
  const res = vertexCodec.decodeResponse({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }], usageMetadata });
  assert.deepEqual(res.usage, { ...usage(1050, 300, 200, 1000), toolUseTokens: 40 });
  assert.deepEqual(vertexCodec.encodeResponse(res, { id: 'r', model: 'm', createdAt: 0, tier: 'standard' }).usageMetadata, usageMetadata);
});

function ir(): IRRequest {
  return {
    model: 'gemini-3-pro', stream: true, system: 'Be terse.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Cook?' }, { type: 'image', mediaType: 'image/jpeg', data: 'AAAA' }, { type: 'file', mediaType: 'application/pdf', url: 'gs://b/doc.pdf' }] },
      { role: 'assistant', content: [
        { type: 'reasoning', text: 'thought text', signature: 'T1' },
        { type: 'reasoning', signature: 'S1' },
        { type: 'tool_call', id: 'toolu_1', name: 'cook', arguments: '{"dish":"lasagna"}' },
        { type: 'tool_call', id: 'toolu_2', name: 'cook', arguments: '{"dish":"salad"}', signature: 'S2' },
      ] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_1', content: '{"ok":true}' }, { type: 'tool_result', callId: 'toolu_2', content: 'burnt', isError: true }] },
      { role: 'assistant', content: [{ type: 'reasoning', signature: 'S3' }, { type: 'text', text: 'Done.' }, { type: 'reasoning', text: 'unsigned', encrypted: 'x' }] },
    ],
    tools: [{ name: 'cook', description: 'Cook a dish', parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { dish: { type: 'string' } } } }],
    toolChoice: 'required', maxOutputTokens: 256, temperature: 0.2, topP: 0.8, stopSequences: ['X'],
    reasoning: { effort: 'high' }, responseFormat: { type: 'json_schema', schema: { type: 'object' } },
  };
}

test('encodeRequest: contents, signatures on the parts they belong to, tools, toolConfig, generationConfig', () => {
  const body = vertexCodec.encodeRequest(ir());
  assert.equal('model' in body, false);
  assert.deepEqual(body.systemInstruction, { parts: [{ text: 'Be terse.' }] });
  assert.deepEqual(body.contents, [
    { role: 'user', parts: [{ text: 'Cook?' }, { inlineData: { mimeType: 'image/jpeg', data: 'AAAA' } }, { fileData: { mimeType: 'application/pdf', fileUri: 'gs://b/doc.pdf' } }] },
    { role: 'model', parts: [
      { text: 'thought text', thought: true, thoughtSignature: 'T1' },
      { functionCall: { id: 'toolu_1', name: 'cook', args: { dish: 'lasagna' } }, thoughtSignature: 'S1' },
      { functionCall: { id: 'toolu_2', name: 'cook', args: { dish: 'salad' } }, thoughtSignature: 'S2' },
    ] },
    { role: 'user', parts: [
      { functionResponse: { id: 'toolu_1', name: 'cook', response: { ok: true } } },
      { functionResponse: { id: 'toolu_2', name: 'cook', response: { error: 'burnt' } } },
    ] },
    { role: 'model', parts: [{ text: 'Done.', thoughtSignature: 'S3' }] },
  ]);
  assert.deepEqual(body.tools, [{ functionDeclarations: [{ name: 'cook', description: 'Cook a dish', parametersJsonSchema: { type: 'object', properties: { dish: { type: 'string' } } } }] }]);
  assert.deepEqual(body.toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  assert.deepEqual(body.generationConfig, {
    maxOutputTokens: 256, temperature: 0.2, topP: 0.8, stopSequences: ['X'], responseMimeType: 'application/json', responseJsonSchema: { type: 'object' },
    thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true },
  });
  const budget = vertexCodec.encodeRequest({ model: 'm', stream: false, messages: [], reasoning: { effort: 'medium', budgetTokens: 3000 }, tools: [{ name: 'f', parameters: {} }], toolChoice: { name: 'f' } });
  assert.deepEqual(budget.generationConfig.thinkingConfig, { thinkingBudget: 3000, includeThoughts: true });
  assert.deepEqual(budget.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
});

test('encodeRequest: results sent in another order than the calls go in the calls\' order, each with its call\'s id', () => {
  // Gemini pairs the responses of parallel calls to one function by position (without ids).
  const call = (id: string, city: string) => ({ type: 'tool_call' as const, id, name: 'get_weather', arguments: JSON.stringify({ city }) });
  const result = (callId: string, content: string) => ({ type: 'tool_result' as const, callId, content });
  const body = vertexCodec.encodeRequest({ model: 'gemini-2.5-flash', stream: false, messages: [
    { role: 'user', content: [{ type: 'text', text: 'Paris, London and Rome?' }] },
    { role: 'assistant', content: [call('call_P', 'Paris'), call('call_L', 'London'), call('call_R', 'Rome')] },
    { role: 'user', content: [result('call_L', 'rain'), { type: 'text', text: 'also:' }, result('call_X', 'orphan'), result('call_R', 'warm')] },
    { role: 'user', content: [result('call_P', 'sun')] },
  ] });
  const responses = body.contents[2].parts.map((p: any) => p.functionResponse ? `${p.functionResponse.id}=${p.functionResponse.response.result}` : p.text);
  // Other parts keep their places; a response to no call of the turn comes after those that answer one.
  assert.deepEqual(responses, ['call_P=sun', 'also:', 'call_L=rain', 'call_R=warm', 'undefined=orphan']);
  assert.deepEqual(body.contents[1].parts.map((p: any) => p.functionCall.id), ['call_P', 'call_L', 'call_R']);
});

test('encodeRequest: thinking as the model\'s generation takes it: 3.x a level, 2.5 a budget within its ceiling, 2.0 none', () => {
  const thinking = (model: string, reasoning: IRRequest['reasoning']) =>
    vertexCodec.encodeRequest({ model, stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], reasoning }).generationConfig?.thinkingConfig;
  assert.deepEqual(thinking('gemini-3.5-flash', { effort: 'low' }), { thinkingLevel: 'LOW', includeThoughts: true });
  assert.deepEqual(thinking('gemini-3.5-flash', { effort: 'low', budgetTokens: 1500 }), { thinkingBudget: 1500, includeThoughts: true });
  // 2.5: an effort is Anthropic's budget for it (messages/thinking.ts); Vertex refuses a level here.
  assert.deepEqual(
    (['minimal', 'low', 'medium', 'high'] as const).map((effort) => thinking('gemini-2.5-flash', { effort })),
    [1024, 1024, 4096, 16384].map((thinkingBudget) => ({ thinkingBudget, includeThoughts: true })),
  );
  assert.deepEqual(thinking('gemini-2.5-flash', { effort: 'high', budgetTokens: 2000 }), { thinkingBudget: 2000, includeThoughts: true });
  assert.deepEqual(thinking('gemini-2.5-flash', { effort: 'high', budgetTokens: 31_999 }), { thinkingBudget: 24_576, includeThoughts: true });
  assert.deepEqual(thinking('gemini-2.5-pro', { effort: 'high', budgetTokens: 31_999 }), { thinkingBudget: 31_999, includeThoughts: true });
  assert.equal(thinking('gemini-2.0-flash', { effort: 'high' }), undefined);
  assert.equal(thinking('gemini-2.0-flash', { effort: 'medium', budgetTokens: 2000 }), undefined);
});

test('encodeRequest: an image URL without a media type gets the one its path\'s extension names, else image/png', () => {
  const urls = [
    'https://example.com/a.jpg', 'https://example.com/b.JPEG?w=200#top', 'gs://bucket/c.webp', 'https://x/d.gif', 'gs://b/e.heic',
    'https://x/f.heif', 'https://x/g.png', 'https://images.example.com/photo?id=42', 'https://x/h.svg', 'https://x.jpg/', 'gs://bucket',
  ];
  const body = vertexCodec.encodeRequest({
    model: 'm', stream: false, messages: [{ role: 'user', content: urls.map((url) => ({ type: 'image' as const, url })) }],
  });
  assert.deepEqual(body.contents[0].parts.map((p: any) => p.fileData.mimeType), [
    'image/jpeg', 'image/jpeg', 'image/webp', 'image/gif', 'image/heic',
    'image/heif', 'image/png', 'image/png', 'image/png', 'image/png', 'image/png',
  ]);
  // A media type the caller gave wins over the extension.
  const given = vertexCodec.encodeRequest({
    model: 'm', stream: false, messages: [{ role: 'user', content: [{ type: 'image', url: 'gs://b/a.jpg', mediaType: 'image/png' }] }],
  });
  assert.deepEqual(given.contents[0].parts, [{ fileData: { mimeType: 'image/png', fileUri: 'gs://b/a.jpg' } }]);
});

test('decodeRequest (best effort): reads back what encodeRequest wrote', () => {
  const body = vertexCodec.encodeRequest(ir());
  const back = vertexCodec.decodeRequest({ ...body, model: 'gemini-3-pro', safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }] });
  assert.equal(back.system, 'Be terse.');
  assert.equal(back.toolChoice, 'required');
  assert.deepEqual(back.reasoning, { effort: 'high' });
  assert.deepEqual(back.responseFormat, { type: 'json_schema', schema: { type: 'object' } });
  const calls = back.messages[1]!.content.filter((p) => p.type === 'tool_call');
  const results = back.messages[2]!.content;
  assert.deepEqual(calls.map((c) => c.type === 'tool_call' && [c.name, c.arguments, c.signature]), [['cook', '{"dish":"lasagna"}', 'S1'], ['cook', '{"dish":"salad"}', 'S2']]);
  // responses without ids answer the calls of the same name in order
  assert.deepEqual(results.map((r) => r.type === 'tool_result' && r.callId), calls.map((c) => c.type === 'tool_call' && c.id));
  assert.deepEqual(results.map((r) => r.type === 'tool_result' && [r.content, r.isError ?? false]), [['{"ok":true}', false], ['burnt', true]]);
  assert.deepEqual(back.messages[3]!.content, [{ type: 'reasoning', signature: 'S3' }, { type: 'text', text: 'Done.' }]);
  assert.deepEqual(back.native, { family: 'vertex', fields: { safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }] } });
});

const CTX: EncodeContext = { id: 'resp_gw', model: 'gemini-gw', createdAt: 1_760_000_000, tier: 'flex' };
const routing = { provider: 'cloud_a' as const, requested_provider: 'cloud_a' as const, tier: 'flex' as const, reason: 'primary', fallback_attempts: 0, mode: 'byok' as const };

test('finishReason: a content filter is SAFETY; a model refusal is its text, ended STOP', () => {
  const finishOf = (reason: 'content_filter' | 'refusal') => {
    const enc = vertexCodec.createStreamEncoder(CTX);
    const events: IREvent[] = [
      { type: 'start' }, { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } }, { type: 'text_delta', index: 0, text: 'No.' },
      { type: 'block_stop', index: 0 }, { type: 'finish', reason, usage: usage(3, 2, 0) },
    ];
    const chunks = events.map((e) => enc.push(e)).join('').split('\n\n').filter(Boolean).map((c) => JSON.parse(parseFrame(c)!.data));
    return chunks.at(-1).candidates[0].finishReason;
  };
  assert.equal(finishOf('content_filter'), 'SAFETY');
  assert.equal(finishOf('refusal'), 'STOP');
  const base = { id: 'x', model: 'm', tier: 'standard' as const, usage: usage(3, 2, 0), blocks: [{ kind: 'text' as const, text: 'No.' }] };
  assert.equal(vertexCodec.encodeResponse({ ...base, stopReason: 'content_filter' }, CTX).candidates[0].finishReason, 'SAFETY');
  assert.equal(vertexCodec.encodeResponse({ ...base, stopReason: 'refusal' }, CTX).candidates[0].finishReason, 'STOP');
});

test('stream encoder: data-only chunks; the decoder reads them back', () => {
  const enc = vertexCodec.createStreamEncoder(CTX);
  const events: IREvent[] = [
    { type: 'start' },
    { type: 'block_start', index: 0, block: { kind: 'reasoning' } }, { type: 'reasoning_delta', index: 0, text: 'hm' }, { type: 'signature', index: 0, signature: 'T' }, { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { kind: 'text' } }, { type: 'text_delta', index: 1, text: 'Hi' }, { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'c', name: 'f' } }, { type: 'signature', index: 2, signature: 'FS' }, { type: 'args_delta', index: 2, json: '{"a"' }, { type: 'args_delta', index: 2, json: ':1}' }, { type: 'block_stop', index: 2 },
    { type: 'finish', reason: 'tool_use', usage: usage(9, 6, 2), extras: { cost: { total_micro_usd: 4, currency: 'USD' }, routing } },
  ];
  const text = events.map((e) => enc.push(e)).join('');
  const frames = text.split('\n\n').filter(Boolean).map((c) => parseFrame(c)!);
  for (const f of frames) assert.equal(f.event, undefined);
  const last = JSON.parse(frames.at(-1)!.data);
  assert.equal(last.candidates[0].finishReason, 'STOP');
  assert.deepEqual(last.usageMetadata, { promptTokenCount: 9, candidatesTokenCount: 4, thoughtsTokenCount: 2, totalTokenCount: 15, trafficType: 'ON_DEMAND_FLEX', input_tokens: 9, output_tokens: 6, cost: { total_micro_usd: 4, currency: 'USD' }, routing });
  const { res } = decode(frames);
  assert.deepEqual(res.blocks, [
    { kind: 'reasoning', text: 'hm', signature: 'T' },
    { kind: 'text', text: 'Hi' },
    { kind: 'tool_call', id: (res.blocks[2] as { id: string }).id, name: 'f', arguments: '{"a":1}', signature: 'FS' },
  ]);
  assert.equal(res.tier, 'flex');
  assert.deepEqual(res.usage, usage(9, 6, 2));
  const err = vertexCodec.createStreamEncoder(CTX).push({ type: 'error', code: 'overloaded', message: 'busy' });
  assert.deepEqual(JSON.parse(parseFrame(err)!.data), { error: { code: 503, message: 'busy', status: 'UNAVAILABLE' } });
});

test('encodeResponse: GenerateContentResponse', () => {
  const body = vertexCodec.encodeResponse({
    id: 'x', model: 'claude', stopReason: 'max_tokens', tier: 'standard',
    blocks: [{ kind: 'reasoning', text: 'r' }, { kind: 'text', text: 'partial' }, { kind: 'tool_call', id: 'c', name: 'f', arguments: '{"cut' }],
    usage: usage(3, 2, 0),
  }, { ...CTX, tier: 'standard' });
  assert.deepEqual(body.candidates, [{ content: { role: 'model', parts: [{ text: 'r', thought: true }, { text: 'partial' }, { functionCall: { name: 'f', args: {} } }] }, finishReason: 'MAX_TOKENS', index: 0 }]);
  assert.deepEqual(body.usageMetadata, { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5, trafficType: 'ON_DEMAND' });
  assert.equal(body.responseId, 'resp_gw');
  assert.equal(body.modelVersion, 'gemini-gw');
});

test('tap: only the last recorded chunk carries usage; inject adds only the spec fields', recordedOnly, () => {
  const state: TapState = { usage: zeroUsage(), sawUsage: false };
  const carrying = recorded().filter((f) => vertexCodec.tap.carriesUsage(f));
  assert.equal(carrying.length, 1);
  const data = JSON.parse(carrying[0]!.data);
  vertexCodec.tap.read(data, state);
  assert.ok(vertexCodec.tap.isFinal(carrying[0]!, data));
  assert.deepEqual(state.usage, usage(31, 1710, 1026));
  assert.equal(state.tier, 'standard');
  const out = JSON.parse(vertexCodec.tap.inject(data, { cost: { total_micro_usd: 8, currency: 'USD' }, routing }));
  const { cost, routing: r, input_tokens, output_tokens, ...rest } = out.usageMetadata;
  assert.deepEqual([cost, r, input_tokens, output_tokens], [{ total_micro_usd: 8, currency: 'USD' }, routing, 31, 1710]);
  assert.deepEqual({ ...out, usageMetadata: rest }, data);
});

test('encodeRequest: an image URL whose extension names an Object.prototype member is an unknown extension (image/png)', () => {
  const urls = ['https://x/a.constructor', 'https://x/b.toString', 'https://x/c.valueOf', 'gs://b/d.hasOwnProperty', 'https://x/e.isPrototypeOf'];
  const body = vertexCodec.encodeRequest({
    model: 'm', stream: false, messages: [{ role: 'user', content: urls.map((url) => ({ type: 'image' as const, url })) }],
  });
  assert.deepEqual(body.contents[0].parts.map((p: any) => p.fileData.mimeType), urls.map(() => 'image/png'));
});
