// Across formats: a Messages caller's request encodes to valid Interactions and Vertex bodies (and
// back the other way); recorded Gemini streams, decoded and re-encoded as Messages SSE, are
// accepted by the official Anthropic SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { messagesCodec } from '../../lib/formats/messages/index.ts';
import { interactionsCodec } from '../../lib/formats/interactions/index.ts';
import { vertexCodec } from '../../lib/formats/vertex/index.ts';
import type { EncodeContext, FormatCodec, SSEFrame } from '../../lib/formats/types.ts';
import type { IREvent } from '../../lib/ir.ts';
import { RECORDED, recordedOnly } from '../helpers/recorded.ts';

const REC = RECORDED;
const PNG = Buffer.from('png bytes').toString('base64');

/** A Messages caller's second turn after a tool call, with thinking, an image and vendor-only fields. */
const MESSAGES_BODY = {
  model: 'gemini-3-flash',
  max_tokens: 2048,
  system: 'You are a weather bot.',
  top_k: 3,
  thinking: { type: 'enabled', budget_tokens: 3000 },
  tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
  tool_choice: { type: 'auto' },
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather where this photo was taken?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
    { role: 'assistant', content: [
      { type: 'thinking', thinking: '', signature: 'gemini-signature:gemini-thought-sig' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
    ] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: '18C, sunny' }] }, { type: 'text', text: 'Thanks! Summarise.' }] },
  ],
};

const STEP_TYPES = new Set(['user_input', 'model_output', 'thought', 'function_call', 'function_result']);
const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'video', 'document']);
const CREATE_KEYS = new Set(['model', 'input', 'system_instruction', 'tools', 'response_format', 'generation_config', 'previous_interaction_id', 'store', 'background', 'safety_settings', 'labels', 'cached_content', 'response_modalities', 'webhook_config', 'environment']);
const GENERATION_KEYS = new Set(['max_output_tokens', 'thinking_level', 'thinking_summaries', 'temperature', 'top_p', 'stop_sequences', 'tool_choice', 'seed', 'image_config', 'speech_config']);

/** The CreateModelInteraction shape (js-genai's types; the SDK does not validate requests). */
function assertValidInteractionsBody(body: Record<string, any>): void {
  for (const k of Object.keys(body)) assert.ok(CREATE_KEYS.has(k), `unknown key ${k}`);
  assert.equal(typeof body.model, 'string');
  assert.ok(Array.isArray(body.input));
  const calls = new Set<string>();
  for (const step of body.input) {
    assert.ok(STEP_TYPES.has(step.type), `step type ${step.type}`);
    if (step.type === 'user_input' || step.type === 'model_output') {
      assert.ok(step.content.length > 0);
      for (const c of step.content) {
        assert.ok(CONTENT_TYPES.has(c.type), `content type ${c.type}`);
        if (c.type === 'text') assert.equal(typeof c.text, 'string');
        else assert.ok(typeof c.data === 'string' || typeof c.uri === 'string');
      }
    }
    if (step.type === 'thought') assert.equal(typeof step.signature, 'string');
    if (step.type === 'function_call') {
      assert.ok(typeof step.id === 'string' && typeof step.name === 'string' && step.arguments && typeof step.arguments === 'object');
      calls.add(step.id);
    }
    if (step.type === 'function_result') {
      assert.ok(calls.has(step.call_id), 'function_result answers an earlier call');
      assert.ok(typeof step.name === 'string' && step.name.length > 0, 'function_result has a name');
      assert.ok(step.result !== undefined);
    }
  }
  for (const t of body.tools ?? []) assert.ok(t.type === 'function' && typeof t.name === 'string' && typeof t.parameters === 'object');
  for (const k of Object.keys(body.generation_config ?? {})) assert.ok(GENERATION_KEYS.has(k), `generation_config.${k}`);
  if (body.system_instruction !== undefined) assert.equal(typeof body.system_instruction, 'string');
}

const PART_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];
const VERTEX_GENERATION_KEYS = new Set(['maxOutputTokens', 'temperature', 'topP', 'topK', 'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'thinkingConfig', 'seed', 'candidateCount']);

function assertValidVertexBody(body: Record<string, any>): void {
  assert.equal('model' in body, false);
  assert.ok(Array.isArray(body.contents) && body.contents.length > 0);
  assert.equal(body.contents[0].role, 'user');
  body.contents.forEach((c: any, i: number) => {
    assert.ok(c.role === 'user' || c.role === 'model');
    if (i > 0) assert.notEqual(c.role, body.contents[i - 1].role, 'roles alternate');
    for (const p of c.parts) {
      assert.equal(PART_FIELDS.filter((f) => f in p).length, 1, `one data field in ${JSON.stringify(p)}`);
      if (p.functionCall) assert.equal(c.role, 'model');
      if (p.functionResponse) {
        assert.equal(c.role, 'user');
        assert.ok(p.functionResponse.name && typeof p.functionResponse.response === 'object');
      }
    }
  });
  for (const k of Object.keys(body.generationConfig ?? {})) assert.ok(VERTEX_GENERATION_KEYS.has(k), `generationConfig.${k}`);
  for (const t of body.tools ?? []) for (const d of t.functionDeclarations) assert.ok(d.name && d.parametersJsonSchema);
}

test('a Messages request → Interactions body: valid steps, the call signature kept, no Messages-only fields', () => {
  const ir = messagesCodec.decodeRequest(MESSAGES_BODY);
  const body = interactionsCodec.encodeRequest(ir);
  assertValidInteractionsBody(body);
  assert.deepEqual(body.input.map((s: any) => s.type), ['user_input', 'thought', 'function_call', 'function_result', 'user_input']);
  assert.deepEqual(body.input[1], { type: 'thought', signature: 'gemini-thought-sig' });
  assert.deepEqual(body.input[3], { type: 'function_result', call_id: 'toolu_01', name: 'get_weather', result: '18C, sunny' });
  assert.equal(body.system_instruction, 'You are a weather bot.');
  assert.deepEqual(body.generation_config, { max_output_tokens: 2048, thinking_level: 'medium', tool_choice: 'auto' });
  assert.equal(JSON.stringify(body).includes('top_k'), false);
});

test('a Messages request → Vertex body: valid contents, the signature on its functionCall', () => {
  const ir = messagesCodec.decodeRequest(MESSAGES_BODY);
  const body = vertexCodec.encodeRequest(ir);
  assertValidVertexBody(body);
  assert.deepEqual(body.contents[1], { role: 'model', parts: [{ functionCall: { id: 'toolu_01', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'gemini-thought-sig' }] });
  assert.deepEqual(body.contents[2].parts[0], { functionResponse: { id: 'toolu_01', name: 'get_weather', response: { result: '18C, sunny' } } });
  assert.deepEqual(body.generationConfig, { maxOutputTokens: 2048, thinkingConfig: { thinkingBudget: 3000, includeThoughts: true } });
  assert.equal(JSON.stringify(body).includes('top_k'), false);
});

test('an Interactions media part by URL → Messages body: a PDF is a URL document, a video or text file is refused, not sent as a document', () => {
  const encode = (part: Record<string, unknown>) => messagesCodec.encodeRequest(interactionsCodec.decodeRequest({
    model: 'claude-haiku-4-5', input: [{ type: 'text', text: 'describe' }, part],
  }));
  const pdf = encode({ type: 'document', uri: 'https://example.com/a.pdf', mime_type: 'application/pdf' });
  assert.deepEqual(pdf.messages[0].content[1], { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } });
  for (const mime_type of ['video/mp4', 'text/plain']) {
    assert.throws(() => encode({ type: 'video', uri: 'https://example.com/v', mime_type }),
      (err: any) => err.code === 'unsupported_parameter' && err.message.includes(mime_type), mime_type);
  }
});

test('an Interactions request → Messages body: tool_result leads its turn, roles alternate, no Interactions-only fields', () => {
  const ir = interactionsCodec.decodeRequest({
    model: 'claude-sonnet-4-5', system_instruction: 'Terse.', previous_interaction_id: 'v1_prev',
    input: [
      { type: 'user_input', content: [{ type: 'text', text: 'Weather?' }] },
      { type: 'thought', signature: 'gsig' },
      { type: 'function_call', id: 'fc1', name: 'get_weather', arguments: { city: 'Paris' } },
      { type: 'function_result', call_id: 'fc1', name: 'get_weather', result: 'sunny' },
      { type: 'user_input', content: [{ type: 'text', text: 'And?' }] },
    ],
    generation_config: { max_output_tokens: 100, thinking_level: 'low', seed: 1 },
  });
  const body = messagesCodec.encodeRequest(ir);
  assert.deepEqual(body.messages.map((m: any) => m.role), ['user', 'assistant', 'user']);
  assert.deepEqual(body.messages[2].content.map((b: any) => b.type), ['tool_result', 'text']);
  assert.deepEqual(body.thinking, undefined); // budget 1024 does not fit under max_tokens 100
  assert.equal(body.max_tokens, 100);
  assert.equal(JSON.stringify(body).includes('previous_interaction_id'), false);
  assert.equal(JSON.stringify(body).includes('seed'), false);
});

// ---- recorded Gemini streams → Messages SSE → Anthropic SDK ----

const CTX: EncodeContext = { id: 'msg_cross', model: 'gemini-2.5-flash', createdAt: 1_760_000_000, tier: 'standard' };
let body = '';
let server: http.Server;
let client: Anthropic;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(body); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new Anthropic({ apiKey: 'x', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function translate(frames: SSEFrame[], codec: FormatCodec): string {
  const decoder = codec.createStreamDecoder();
  const encoder = messagesCodec.createStreamEncoder(CTX);
  const events: IREvent[] = [...frames.flatMap((f) => decoder.push(f)), ...decoder.end()];
  return events.map((e) => encoder.push(e)).join('');
}

const interactionsFrames = (file: string): SSEFrame[] => [
  ...readFileSync(`${REC}/gemini-interactions/${file}`, 'utf8').split('\n').filter((l) => l.trim()).map((data) => ({ event: JSON.parse(data).event_type, data })),
  { event: 'done', data: '[DONE]' },
];
const params = { model: 'gemini-2.5-flash', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] };

test('Interactions tool-call-step1 → Messages SSE: the SDK sees thinking (signature) and tool_use input', recordedOnly, async () => {
  body = translate(interactionsFrames('tool-call-step1.chunks.txt'), interactionsCodec);
  const msg = await client.messages.stream(params).finalMessage();
  assert.deepEqual(msg.content.map((b) => b.type), ['thinking', 'tool_use']);
  const [thinking, tool] = msg.content;
  assert.ok(thinking!.type === 'thinking' && thinking!.signature.startsWith('gemini-signature:CiQBDDnWx+Xp0gYV'));
  assert.ok(tool!.type === 'tool_use' && tool!.id === '61nzpsv4' && tool!.name === 'getWeather');
  assert.deepEqual(tool!.type === 'tool_use' ? tool!.input : undefined, { location: 'San Francisco' });
  assert.equal(msg.stop_reason, 'tool_use');
  assert.deepEqual([msg.usage.input_tokens, msg.usage.output_tokens, msg.usage.service_tier], [53, 80, 'standard']);
});

test('Interactions basic → Messages SSE via messages.create({stream:true})', recordedOnly, async () => {
  body = translate(interactionsFrames('basic.chunks.txt'), interactionsCodec);
  const stream = await client.messages.create({ ...params, stream: true });
  let text = '';
  let stop: string | null = null;
  for await (const ev of stream) {
    if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    if (ev.type === 'message_delta') stop = ev.delta.stop_reason;
  }
  assert.equal(text, "I'm doing great, thank you for asking!\n\nHow are you doing today? And what can I do for you?");
  assert.equal(stop, 'end_turn');
});

test('Vertex partialArgs stream → Messages SSE: tool_use input is the rebuilt recipe, its signature a thinking block', recordedOnly, async () => {
  const frames = readFileSync(`${REC}/gemini-vertex/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt`, 'utf8').split('\n').filter((l) => l.trim()).map((data) => ({ data }));
  body = translate(frames, vertexCodec);
  const msg = await client.messages.stream(params).finalMessage();
  assert.deepEqual(msg.content.map((b) => b.type), ['thinking', 'tool_use']);
  const tool = msg.content[1]!;
  assert.ok(tool.type === 'tool_use' && tool.name === 'cookRecipe');
  const input = (tool.type === 'tool_use' ? tool.input : {}) as { recipe: { name: string; steps: string[]; ingredients: unknown[] } };
  assert.equal(input.recipe.name, 'Lasagna');
  assert.equal(input.recipe.ingredients.length, 10);
  assert.equal(input.recipe.steps[4], 'In a 9x13 baking dish, spread a thin layer of meat sauce.');
  assert.deepEqual([msg.usage.input_tokens, msg.usage.output_tokens], [31, 1710]);
  // the caller's next turn puts the signature back on the functionCall
  const next = messagesCodec.decodeRequest({ model: 'gemini-3.1-pro-preview', messages: [{ role: 'user', content: 'cook' }, { role: 'assistant', content: msg.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: tool.id, content: 'done' }] }] });
  const vertexBody = vertexCodec.encodeRequest(next);
  assertValidVertexBody(vertexBody);
  assert.equal('gemini-signature:' + vertexBody.contents[1].parts[0].thoughtSignature, (msg.content[0] as { signature: string }).signature);
  assert.equal(vertexBody.contents[1].parts[0].functionCall.name, 'cookRecipe');
});
