// Chat Completions codec: recorded chunks and bodies decode to the right IR; requests survive
// IR → body → IR; the encoders write what the official openai SDK accepts; the passthrough tap
// reads the usage chunk and injects cost, routing and the spec's token names.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import OpenAI from 'openai';
import { closeCodecServers, serveFixed } from '../helpers/codec-server.ts';
import { GatewayError } from '../../lib/errors.ts';
import { chatCodec } from '../../lib/formats/chat/index.ts';
import { ResponseCollector } from '../../lib/formats/collect.ts';
import type { EncodeContext, SSEFrame, TapState } from '../../lib/formats/types.ts';
import { type CostExtras, type IREvent, type IRRequest, zeroUsage } from '../../lib/ir.ts';
import { collect } from '../helpers/decode.ts';
import { RECORDED, recordedFiles, recordedOnly } from '../helpers/recorded.ts';

const DIR = `${RECORDED}/openai-chat`;
const chunkFiles = recordedFiles('openai-chat', '.chunks.txt');

/** Recorded chunk lines → data-only frames, with the `[DONE]` the live stream ends with. */
function recorded(file: string, done = true): SSEFrame[] {
  const frames = readFileSync(`${DIR}/${file}`, 'utf8').split('\n').filter(l => l.trim()).map(data => ({ data }));
  return done ? [...frames, { data: '[DONE]' }] : frames;
}

function decode(frames: SSEFrame[]): IREvent[] {
  const dec = chatCodec.createStreamDecoder();
  return [...frames.flatMap(f => dec.push(f)), ...dec.end()];
}


function expected(frames: SSEFrame[]) {
  const chunks = frames.filter(f => f.data !== '[DONE]').map(f => JSON.parse(f.data));
  return {
    text: chunks.map(c => c.choices?.[0]?.delta?.content ?? '').join(''),
    usage: chunks.find(c => c.usage)?.usage,
    id: chunks.find(c => c.id)?.id,
  };
}

describe('chat stream decoder on recorded streams', recordedOnly, () => {
  for (const file of chunkFiles) {
    test(file, () => {
      const frames = recorded(file);
      const events = decode(frames);
      const exp = expected(frames);
      const res = collect(events);
      assert.deepEqual(res.blocks, [{ kind: 'text', text: exp.text }]);
      assert.equal(res.id, exp.id);
      const finishes = events.filter(e => e.type === 'finish');
      assert.equal(finishes.length, 1);
      const finish = finishes[0];
      assert.ok(finish.type === 'finish');
      assert.equal(finish.reason, 'end');
      assert.deepEqual(finish.usage, {
        inputTokens: exp.usage.prompt_tokens, cachedInputTokens: exp.usage.prompt_tokens_details.cached_tokens, cacheWriteTokens: 0,
        outputTokens: exp.usage.completion_tokens, reasoningTokens: exp.usage.completion_tokens_details.reasoning_tokens,
      });
      assert.deepEqual(events.filter(e => e.type === 'block_start' || e.type === 'block_stop').map(e => e.type), ['block_start', 'block_stop']);
    });
  }

  test('openai-text: numbers and tier', () => {
    const finish = decode(recorded('openai-text.chunks.txt')).find(e => e.type === 'finish');
    assert.ok(finish?.type === 'finish');
    assert.equal(finish.usage.inputTokens, 16);
    assert.equal(finish.usage.outputTokens, 300);
    assert.equal(finish.tier, 'standard'); // service_tier "default"
  });

  test('azure: empty first chunk does not start; reasoning count; no tier reported', () => {
    const events = decode(recorded('azure-model-router.1.chunks.txt'));
    assert.deepEqual(events[0], { type: 'start', id: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt', model: 'gpt-5-nano-2025-08-07' });
    const finish = events.find(e => e.type === 'finish');
    assert.ok(finish?.type === 'finish');
    assert.equal(finish.usage.reasoningTokens, 64);
    assert.equal(finish.usage.outputTokens, 78);
    assert.equal(finish.tier, undefined);
    assert.deepEqual(collect(events).blocks, [{ kind: 'text', text: 'Capital of Denmark.' }]);
  });

  test('without [DONE], end() finishes because usage was seen', () => {
    const dec = chatCodec.createStreamDecoder();
    const frames = recorded('openai-text.chunks.txt', false);
    const body = frames.slice(0, -1).flatMap(f => dec.push(f));
    assert.equal(body.some(e => e.type === 'finish'), false); // finish_reason alone waits for usage
    const last = dec.push(frames.at(-1)!);
    assert.equal(last.at(-1)?.type, 'finish');
    assert.deepEqual(dec.end(), []);
  });

  test('cut before the usage chunk, no [DONE]: end() emits nothing', () => {
    const dec = chatCodec.createStreamDecoder();
    recorded('openai-text.chunks.txt', false).slice(0, -1).forEach(f => dec.push(f));
    assert.deepEqual(dec.end(), []);
  });

  const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
    ({ data: JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', service_tier: 'flex', choices: [{ index: 0, delta, finish_reason: finish }], ...extra }) });

  test('tool calls by index, ids and names on the first fragment; tier flex', () => {
    const frames: SSEFrame[] = [
      chunk({ role: 'assistant', content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      { data: JSON.stringify({ id: 'chatcmpl-1', choices: [], service_tier: 'flex', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }) },
      { data: '[DONE]' },
    ];
    const events = decode(frames);
    assert.deepEqual(events.filter(e => e.type === 'block_start').map(e => e.type === 'block_start' && [e.index, e.block]), [
      [0, { kind: 'text' }], [1, { kind: 'tool_call', id: 'call_a', name: 'get_weather' }], [2, { kind: 'tool_call', id: 'call_b', name: 'get_time' }],
    ]);
    const res = collect(events);
    assert.deepEqual(res.blocks, [
      { kind: 'text', text: 'Checking.' },
      { kind: 'tool_call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { kind: 'tool_call', id: 'call_b', name: 'get_time', arguments: '{}' },
    ]);
    assert.equal(res.stopReason, 'tool_use');
    assert.equal(res.tier, 'flex');
    assert.equal(res.usage.inputTokens, 10);
  });

  test('refusal, content filter, length, error chunk', () => {
    const refusal = collect(decode([chunk({ refusal: 'I cannot.' }), chunk({}, 'stop', { usage: { prompt_tokens: 1, completion_tokens: 2 } })]));
    assert.equal(refusal.stopReason, 'refusal');
    assert.deepEqual(refusal.blocks, [{ kind: 'text', text: 'I cannot.', refusal: true }]);
    const filtered = collect(decode([chunk({ content: 'Here is' }), chunk({}, 'content_filter'), { data: '[DONE]' }]));
    assert.equal(filtered.stopReason, 'content_filter');
    assert.deepEqual(filtered.blocks, [{ kind: 'text', text: 'Here is' }]);
    const cut = collect(decode([chunk({ content: 'a' }), chunk({}, 'length'), { data: '[DONE]' }]));
    assert.equal(cut.stopReason, 'max_tokens');
    assert.deepEqual(cut.usage, zeroUsage()); // [DONE] without include_usage: a clean end that reports nothing
    const err = decode([chunk({ content: 'a' }), { data: '{"error":{"message":"overloaded","type":"server_error","param":null,"code":"server_is_overloaded"}}' }]);
    assert.deepEqual(err.at(-1), { type: 'error', code: 'server_is_overloaded', message: 'overloaded' });
    assert.equal(err.some(e => e.type === 'finish'), false);
  });
});

describe('chat decodeResponse', recordedOnly, () => {
  test('recorded text body', () => {
    const body = JSON.parse(readFileSync(`${DIR}/openai-text.json`, 'utf8'));
    const res = chatCodec.decodeResponse(body);
    assert.deepEqual(res.blocks, [{ kind: 'text', text: body.choices[0].message.content }]);
    assert.equal(res.stopReason, 'end');
    assert.deepEqual(res.usage, { inputTokens: 16, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 363, reasoningTokens: 0 });
    assert.equal(res.tier, 'standard');
    assert.equal(res.id, 'chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU');
  });

  test('recorded tool-call body (qwen-plus, empty content)', () => {
    const body = JSON.parse(readFileSync(`${DIR}/qwen-plus-normalized-replayed-tool-arguments-success.json`, 'utf8'));
    const res = chatCodec.decodeResponse(body);
    assert.deepEqual(res.blocks, [{ kind: 'tool_call', id: 'call_48dc828f33d7473fa345dd', name: 'set_cell_range', arguments: '{"label": "A1:B10"}' }]);
    assert.equal(res.stopReason, 'tool_use');
    assert.equal(res.usage.inputTokens, 202);
    assert.equal(res.usage.outputTokens, 24);
  });
});

const IMAGE = Buffer.from('png').toString('base64');
const PDF = Buffer.from('%PDF').toString('base64');

describe('chat request round trip', () => {
  const ir: IRRequest = {
    model: 'gpt-4.1',
    system: 'Be brief.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', mediaType: 'image/png', data: IMAGE }, { type: 'image', url: 'https://x/y.png' }, { type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'a.pdf' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Calling.' }, { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' }, { type: 'tool_call', id: 'call_2', name: 'g', arguments: '{}' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'call_1', name: 'f', content: 'one' }, { type: 'tool_result', callId: 'call_2', name: 'g', content: 'two' }] },
      { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
    ],
    tools: [{ name: 'f', description: 'F', parameters: { type: 'object', properties: { a: { type: 'number' } } }, strict: false }, { name: 'g', parameters: { type: 'object' } }],
    toolChoice: 'required',
    maxOutputTokens: 64,
    temperature: 0,
    topP: 1,
    reasoning: { effort: 'minimal' },
    responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
    stopSequences: ['END'],
    stream: true,
  };

  test('IR → encodeRequest is a valid Chat body', () => {
    const body = chatCodec.encodeRequest(ir);
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [
        { type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE}` } },
        { type: 'image_url', image_url: { url: 'https://x/y.png' } }, { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' } },
      ] },
      { role: 'assistant', content: 'Calling.', tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }, { id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'call_1', content: 'one' },
      { role: 'tool', tool_call_id: 'call_2', content: 'two' },
      { role: 'user', content: 'And now?' },
    ]);
    assert.deepEqual(body.tools[0], { type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object', properties: { a: { type: 'number' } } }, strict: false } });
    assert.equal(body.max_completion_tokens, 64);
    assert.equal(body.reasoning_effort, 'minimal');
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } });
    assert.deepEqual(body.stop, ['END']);
    assert.equal(body.stream, undefined);
  });

  test('IR → encodeRequest → decodeRequest', () => {
    const back = chatCodec.decodeRequest(chatCodec.encodeRequest(ir));
    assert.deepEqual(back, { ...ir, stream: false, native: { family: 'chat', fields: { store: false } } });
  });

  test('reasoning parts have no Chat form and are dropped', () => {
    const body = chatCodec.encodeRequest({ model: 'm', stream: false, messages: [
      { role: 'assistant', content: [{ type: 'reasoning', text: 't', encrypted: 'e' }, { type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }] },
    ] });
    assert.deepEqual(body.messages, [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }]);
  });

  test('caller body: developer/system fold, tool messages merge, data URL image, native fields', () => {
    const body = {
      model: 'gpt-4.1', stream: true, stream_options: { include_usage: true }, service_tier: 'auto', seed: 7, presence_penalty: 0.5, n: 1,
      messages: [
        { role: 'developer', content: 'A' },
        { role: 'system', content: [{ type: 'text', text: 'B' }] },
        { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${IMAGE}`, detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'r1' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'r2' }] },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      max_tokens: 10, response_format: { type: 'json_object' }, stop: 'X', reasoning_effort: 'none',
    };
    const got = chatCodec.decodeRequest(body);
    assert.equal(got.system, 'A\n\nB');
    assert.deepEqual(got.messages, [
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', mediaType: 'image/jpeg', data: IMAGE, detail: 'low' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: '{}' }, { type: 'tool_call', id: 'c2', name: 'g', arguments: '{}' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'c1', name: 'f', content: 'r1' }, { type: 'tool_result', callId: 'c2', name: 'g', content: 'r2' }] },
    ]);
    assert.deepEqual(got.toolChoice, { name: 'f' });
    assert.equal(got.maxOutputTokens, 10);
    assert.deepEqual(got.responseFormat, { type: 'json_object' });
    assert.deepEqual(got.stopSequences, ['X']);
    assert.equal(got.reasoning, undefined);
    assert.deepEqual(got.native, { family: 'chat', fields: { seed: 7, presence_penalty: 0.5, store: false, reasoning_effort: 'none' } });
    const out = chatCodec.encodeRequest(got);
    assert.equal(out.seed, 7);
    assert.equal(out.messages[1].content[1].image_url.detail, 'low');
    assert.equal(out.reasoning_effort, 'none');
    assert.equal(out.service_tier, undefined);
    assert.equal(out.stream_options, undefined);
  });

  test('shapes the IR cannot carry are refused', () => {
    assert.throws(() => chatCodec.decodeRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }),
      (e: unknown) => e instanceof GatewayError && e.code === 'unsupported_parameter' && e.param === 'messages[0].content[0].type');
    assert.throws(() => chatCodec.decodeRequest({ model: 'm' }), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request' && e.param === 'messages');
    assert.throws(() => chatCodec.decodeRequest({ model: 'm', messages: [{ role: 'tool', content: 'x' }] }), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request');
  });
});

// ---------- the official SDK reads what the encoders write ----------

after(closeCodecServers);

/** Serves one fixed body to every request; returns an SDK client pointed at it. */
async function serve(body: string, contentType: string): Promise<OpenAI> {
  return new OpenAI({ apiKey: 'x', baseURL: `${await serveFixed(body, contentType)}/v1`, maxRetries: 0 });
}

const CTX: EncodeContext = { id: '', model: 'gpt-4.1', createdAt: 1_770_000_000, tier: 'standard', includeUsage: true };
const EXTRAS: CostExtras = {
  cost: { total_micro_usd: 42, currency: 'USD' },
  routing: { provider: 'vendor_a', requested_provider: 'vendor_a', tier: 'standard', reason: 'standard_requested', fallback_attempts: 0, mode: 'managed' },
};
const USAGE = { inputTokens: 30, cachedInputTokens: 10, cacheWriteTokens: 0, outputTokens: 12, reasoningTokens: 4 };

const irStream = (extras?: CostExtras): IREvent[] => [
  { type: 'start', id: 'x', model: 'y' },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'hidden' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Hi "there"' },
  { type: 'text_delta', index: 1, text: '\n\u2713' },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
  { type: 'args_delta', index: 2, json: '{"a":' },
  { type: 'args_delta', index: 2, json: '1}' },
  { type: 'block_stop', index: 2 },
  { type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'call_2', name: 'g' } },
  { type: 'args_delta', index: 3, json: '{}' },
  { type: 'block_stop', index: 3 },
  { type: 'finish', reason: 'tool_use', usage: USAGE, ...(extras ? { extras } : {}) },
];

const encodeAll = (events: IREvent[], ctx: EncodeContext = CTX): string => {
  const enc = chatCodec.createStreamEncoder(ctx);
  return events.map(e => enc.push(e)).join('');
};

describe('chat stream encoder through the official SDK', () => {
  test('framing: data-only chunks, usage null until the usage chunk, then [DONE]', () => {
    const text = encodeAll(irStream(EXTRAS));
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    const chunks = text.split('\n\n').filter(Boolean).slice(0, -1).map(l => { assert.ok(l.startsWith('data: ')); return JSON.parse(l.slice(6)); });
    assert.ok(chunks.every(c => c.object === 'chat.completion.chunk' && c.service_tier === 'default' && c.id === chunks[0].id && c.id.startsWith('chatcmpl-')));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    assert.ok(chunks.slice(0, -1).every(c => c.usage === null));
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, {
      prompt_tokens: 30, completion_tokens: 12, total_tokens: 42, prompt_tokens_details: { cached_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 4 },
      input_tokens: 30, output_tokens: 12, cost: EXTRAS.cost, routing: EXTRAS.routing,
    });
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'tool_calls');
  });

  test('without include_usage: no usage field and no usage chunk', () => {
    const text = encodeAll(irStream(), { ...CTX, includeUsage: false, tier: 'flex' });
    const chunks = text.split('\n\n').filter(l => l && l !== 'data: [DONE]').map(l => JSON.parse(l.slice(6)));
    assert.ok(chunks.every(c => !('usage' in c) && c.service_tier === 'flex'));
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
  });

  test('chat.completions.create({stream:true}) chunks accumulate', async () => {
    const client = await serve(encodeAll(irStream(EXTRAS)), 'text/event-stream');
    let content = '';
    const args: string[] = [];
    let usage: any;
    let finish: string | null = null;
    for await (const c of await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })) {
      const ch = c.choices[0];
      content += ch?.delta.content ?? '';
      for (const tc of ch?.delta.tool_calls ?? []) args[tc.index] = (args[tc.index] ?? '') + (tc.function?.arguments ?? '');
      finish = ch?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    assert.equal(content, 'Hi "there"\n\u2713');
    assert.deepEqual(args, ['{"a":1}', '{}']);
    assert.equal(finish, 'tool_calls');
    assert.equal(usage.prompt_tokens, 30);
    assert.equal(usage.input_tokens, 30);
    assert.deepEqual(usage.cost, EXTRAS.cost);
  });

  test('ChatCompletionStream.finalChatCompletion()', async () => {
    const client = await serve(encodeAll(irStream(EXTRAS)), 'text/event-stream');
    const final = await client.chat.completions.stream({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } }).finalChatCompletion();
    const msg = final.choices[0].message;
    assert.equal(msg.content, 'Hi "there"\n\u2713');
    assert.deepEqual(msg.tool_calls?.map(t => t.type === 'function' && [t.id, t.function.name, t.function.arguments]), [['call_1', 'f', '{"a":1}'], ['call_2', 'g', '{}']]);
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.equal(final.usage?.completion_tokens, 12);
    assert.deepEqual((final.usage as any).routing, EXTRAS.routing);
  });

  test('an IR error mid-stream: error frame, no [DONE], SDK raises APIError', async () => {
    const events: IREvent[] = [{ type: 'start' }, { type: 'text_delta', index: 0, text: 'part' }, { type: 'error', code: 'provider_error', message: 'reset' }, { type: 'text_delta', index: 0, text: 'x' }];
    const text = encodeAll(events);
    assert.ok(text.endsWith('data: {"error":{"message":"reset","type":"server_error","param":null,"code":"provider_error"}}\n\n'));
    assert.ok(!text.includes('[DONE]'));
    const client = await serve(text, 'text/event-stream');
    await assert.rejects(async () => {
      for await (const _ of await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true })) { /* drain */ }
    }, (e: unknown) => e instanceof OpenAI.APIError && e.code === 'provider_error');
  });

  test('non-streamed body through chat.completions.create', async () => {
    const res = new ResponseCollector();
    for (const e of irStream(EXTRAS)) res.push(e);
    const body = chatCodec.encodeResponse(res.result(), { ...CTX, id: 'abc', tier: 'flex' });
    assert.equal(body.id, 'chatcmpl-abc');
    const client = await serve(JSON.stringify(body), 'application/json');
    const got = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(got.choices[0].message.content, 'Hi "there"\n\u2713');
    assert.equal(got.choices[0].finish_reason, 'tool_calls');
    assert.equal(got.choices[0].message.tool_calls?.length, 2);
    assert.equal(got.service_tier, 'flex');
    assert.equal((got.usage as any).output_tokens, 12);
    assert.deepEqual((got.usage as any).cost, EXTRAS.cost);
  });

  test('finish reasons map: length, content_filter, a refusal in message.refusal with stop; text-only body has no tool_calls', () => {
    const base = { id: '', model: '', usage: zeroUsage(), tier: 'standard' as const };
    const cut = chatCodec.encodeResponse({ ...base, blocks: [{ kind: 'text', text: 'a' }], stopReason: 'max_tokens' }, CTX);
    assert.equal(cut.choices[0].finish_reason, 'length');
    assert.equal('tool_calls' in cut.choices[0].message, false);
    assert.equal(cut.usage.cost, undefined);
    const filtered = chatCodec.encodeResponse({ ...base, blocks: [{ kind: 'text', text: 'Here is' }], stopReason: 'content_filter' }, CTX);
    assert.equal(filtered.choices[0].finish_reason, 'content_filter');
    assert.deepEqual(filtered.choices[0].message, { role: 'assistant', content: 'Here is', refusal: null });
    const refused = chatCodec.encodeResponse({ ...base, blocks: [{ kind: 'text', text: 'I cannot.', refusal: true }], stopReason: 'refusal' }, CTX);
    assert.equal(refused.choices[0].finish_reason, 'stop');
    assert.deepEqual(refused.choices[0].message, { role: 'assistant', content: null, refusal: 'I cannot.' });
    const back = chatCodec.decodeResponse(refused);
    assert.deepEqual([back.blocks, back.stopReason], [[{ kind: 'text', text: 'I cannot.', refusal: true }], 'refusal']);
    assert.equal(chatCodec.decodeResponse(filtered).stopReason, 'content_filter');
  });

  test('a refusal streams as delta.refusal with finish_reason stop; the SDK stream helper returns it', async () => {
    const events: IREvent[] = [
      { type: 'start' },
      { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
      { type: 'text_delta', index: 0, text: "I'm sorry, " },
      { type: 'text_delta', index: 0, text: "I can't." },
      { type: 'block_stop', index: 0 },
      { type: 'finish', reason: 'refusal', usage: USAGE },
    ];
    const text = encodeAll(events);
    const chunks = text.split('\n\n').filter(l => l && l !== 'data: [DONE]').map(l => JSON.parse(l.slice(6)));
    assert.deepEqual(chunks.slice(1, 3).map(c => c.choices[0].delta), [{ refusal: "I'm sorry, " }, { refusal: "I can't." }]);
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
    const client = await serve(text, 'text/event-stream');
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const final = await client.chat.completions.stream({
      model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema } },
    }).finalChatCompletion();
    assert.equal(final.choices[0].message.refusal, "I'm sorry, I can't.");
    assert.equal(final.choices[0].message.parsed, null);
    assert.equal(final.choices[0].finish_reason, 'stop');
    const decoded = collect(decode(text.split('\n\n').filter(Boolean).map(l => ({ data: l.slice(6) }))));
    assert.deepEqual([decoded.blocks, decoded.stopReason], [[{ kind: 'text', text: "I'm sorry, I can't.", refusal: true }], 'refusal']);
  });
});

describe('chat passthrough tap', recordedOnly, () => {
  for (const file of chunkFiles) {
    test(file, () => {
      const frames = recorded(file);
      const acc: TapState = { usage: zeroUsage(), sawUsage: false };
      let finals = 0;
      let parsed = 0;
      for (const frame of frames) {
        if (!chatCodec.tap.carriesUsage(frame)) continue;
        parsed++;
        const data = JSON.parse(frame.data);
        chatCodec.tap.read(data, acc);
        if (!chatCodec.tap.isFinal(frame, data)) continue;
        finals++;
        const injected = JSON.parse(chatCodec.tap.inject(data, EXTRAS));
        const want = structuredClone(data);
        Object.assign(want.usage, { input_tokens: data.usage.prompt_tokens, output_tokens: data.usage.completion_tokens, cost: EXTRAS.cost, routing: EXTRAS.routing });
        assert.deepEqual(injected, want);
      }
      assert.equal(parsed, 2); // the finish chunk and the usage chunk, nothing else
      assert.equal(finals, 1);
      const finish = decode(frames).find(e => e.type === 'finish');
      assert.ok(finish?.type === 'finish');
      assert.deepEqual(acc.usage, finish.usage);
      assert.equal(acc.sawUsage, true);
      assert.equal(acc.tier, finish.tier);
    });
  }
});
