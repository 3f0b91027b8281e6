// Coding agents on another vendor's model, codec by codec: Anthropic's thinking rules for a
// translated body, each vendor's opaque reasoning carried through the other format's field
// (tagged, formats/reasoning-tags.ts), images in Responses tool outputs, the parallel-call switch
// and in-stream provider errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messagesCodec } from '../../lib/formats/messages/index.ts';
import { responsesCodec } from '../../lib/formats/responses/index.ts';
import { chatCodec } from '../../lib/formats/chat/index.ts';
import { interactionsCodec } from '../../lib/formats/interactions/index.ts';
import { vertexCodec } from '../../lib/formats/vertex/index.ts';
import { ResponseCollector } from '../../lib/formats/collect.ts';
import { ANTHROPIC_SIGNATURE_TAG, GEMINI_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG } from '../../lib/formats/reasoning-tags.ts';
import { vendorC } from '../../lib/providers/anthropic.ts';
import type { EncodeContext, FormatCodec, SSEFrame } from '../../lib/formats/types.ts';
import type { IREvent } from '../../lib/ir.ts';

const CTX: EncodeContext = { id: '', model: 'm', createdAt: 1_700_000_000, tier: 'standard' };
const SIG = 'EqQBCkYIBRgCKkD0anthropicSig+/=';
const ENC = 'gAAAAABo-openai+encrypted/content==';
const PNG = Buffer.from('png bytes').toString('base64');
const PDF = Buffer.from('%PDF-1.4').toString('base64');
const TOOL = { type: 'function', name: 'shell', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };

const sse = (event: string, data: unknown): SSEFrame => ({ event, data: JSON.stringify(data) });

/** The SSE text an encoder wrote, as [event, data] pairs. */
function frames(text: string): Array<{ event: string; data: any }> {
  return text.split('\n\n').filter(Boolean).map((raw) => {
    const event = /^event: (.*)$/m.exec(raw)?.[1] ?? '';
    const data = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return { event, data: JSON.parse(data) };
  });
}

const streamThrough = (codec: FormatCodec, events: IREvent[]): string => {
  const enc = codec.createStreamEncoder(CTX);
  return events.map((ev) => enc.push(ev)).join('');
};

/** The body the vendor_c adapter sends for a translated body. */
async function vendorCBody(body: Record<string, any>): Promise<Record<string, any>> {
  const built = await vendorC('http://127.0.0.1:1', 4096).build({
    body, model: 'claude', stream: false, credential: 'k', translated: true, wire: 'messages', tier: 'standard',
  } as any);
  return JSON.parse(String(built.body));
}

/** A Claude answer: a signed thinking block, then a tool call. */
const CLAUDE_STREAM: SSEFrame[] = [
  sse('message_start', { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 5, output_tokens: 1 } } }),
  sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'List the files.' } }),
  sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIG } }),
  sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
  sse('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'shell', input: {} } }),
  sse('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"cmd":"ls"}' } }),
  sse('content_block_stop', { type: 'content_block_stop', index: 1 }),
  sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
  sse('message_stop', { type: 'message_stop' }),
];

const decodeAll = (codec: FormatCodec, list: SSEFrame[]): IREvent[] => {
  const dec = codec.createStreamDecoder();
  return [...list.flatMap((f) => dec.push(f)), ...dec.end()];
};

// ---------- 1. Anthropic's thinking rules for a translated body ----------

test('thinking from an effort, no caller max: the adapter sends max_tokens above the budget (cap + budget)', async () => {
  for (const [effort, budget] of [['low', 1024], ['medium', 4096], ['high', 16384]] as const) {
    const ir = responsesCodec.decodeRequest({ model: 'claude', input: 'hi', reasoning: { effort } });
    const body = await vendorCBody(messagesCodec.encodeRequest(ir));
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: budget }, effort);
    assert.equal(body.max_tokens, 4096 + budget, effort);
    assert.ok(body.thinking.budget_tokens < body.max_tokens, effort);
  }
  // Without thinking the configured cap alone; a caller's own max is never raised.
  assert.equal((await vendorCBody(messagesCodec.encodeRequest(chatCodec.decodeRequest({ model: 'c', messages: [{ role: 'user', content: 'hi' }] })))).max_tokens, 4096);
  const capped = messagesCodec.encodeRequest(chatCodec.decodeRequest({
    model: 'c', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', max_completion_tokens: 8000,
  }));
  assert.equal((await vendorCBody(capped)).max_tokens, 8000);
  assert.equal(capped.thinking.budget_tokens, 7999);
});

test('a forced tool choice (required, a named tool) leaves thinking out; auto keeps it', () => {
  const encode = (tool_choice: unknown) => messagesCodec.encodeRequest(responsesCodec.decodeRequest({
    model: 'claude', input: 'hi', reasoning: { effort: 'low' }, tools: [TOOL], tool_choice,
  }));
  for (const choice of ['required', { type: 'function', name: 'shell' }]) {
    const body = encode(choice);
    assert.equal(body.thinking, undefined, JSON.stringify(choice));
    assert.ok(['any', 'tool'].includes(body.tool_choice.type));
  }
  assert.deepEqual(encode('auto').thinking, { type: 'enabled', budget_tokens: 1024 });
  assert.deepEqual(encode(undefined).thinking, { type: 'enabled', budget_tokens: 1024 });
});

// ---------- 2. Anthropic's signature toward Responses and Chat callers ----------

test('Responses stream: a Claude thinking signature reaches the caller in encrypted_content, tagged', () => {
  const out = frames(streamThrough(responsesCodec, decodeAll(messagesCodec, CLAUDE_STREAM)));
  const done = out.find((f) => f.event === 'response.output_item.done' && f.data.item.type === 'reasoning')!.data.item;
  assert.equal(done.encrypted_content, ANTHROPIC_SIGNATURE_TAG + SIG);
  assert.deepEqual(done.summary, [{ type: 'summary_text', text: 'List the files.' }]);
  const completed = out.find((f) => f.event === 'response.completed')!.data.response;
  assert.equal(completed.output[0].encrypted_content, ANTHROPIC_SIGNATURE_TAG + SIG);
});

test('Responses body: a Claude signature (thinking and redacted) is tagged, decoded or collected from a stream', () => {
  const message = {
    id: 'msg_1', model: 'claude', stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 },
    content: [
      { type: 'thinking', thinking: 'List the files.', signature: SIG },
      { type: 'redacted_thinking', data: 'REDACTED' },
      { type: 'tool_use', id: 'toolu_1', name: 'shell', input: { cmd: 'ls' } },
    ],
  };
  const body = responsesCodec.encodeResponse(messagesCodec.decodeResponse(message), CTX);
  assert.deepEqual(body.output.slice(0, 2).map((o: any) => o.encrypted_content), [ANTHROPIC_SIGNATURE_TAG + SIG, `${ANTHROPIC_SIGNATURE_TAG}REDACTED`]);
  const collector = new ResponseCollector();
  for (const ev of decodeAll(messagesCodec, CLAUDE_STREAM)) collector.push(ev);
  assert.equal(responsesCodec.encodeResponse(collector.result(), CTX).output[0].encrypted_content, ANTHROPIC_SIGNATURE_TAG + SIG);
});

test('a Gemini signature has no Responses field; OpenAI encrypted content stays untagged', () => {
  const events: IREvent[] = [
    { type: 'block_start', index: 0, block: { kind: 'reasoning' } }, { type: 'reasoning_delta', index: 0, text: 't' },
    { type: 'signature', index: 0, signature: 'gemini-sig' }, { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { kind: 'reasoning' } },
    { type: 'signature', index: 1, signature: ENC, encrypted: true }, { type: 'block_stop', index: 1 },
    { type: 'finish', reason: 'end', usage: { inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1, reasoningTokens: 0 } },
  ];
  const output = frames(streamThrough(responsesCodec, events)).find((f) => f.event === 'response.completed')!.data.response.output;
  assert.equal(output[0].encrypted_content, undefined);
  assert.equal(output[1].encrypted_content, ENC);
});

test('Responses request: a tagged encrypted_content goes back to Claude as its signed thinking, never to OpenAI or Gemini', () => {
  const input = [
    { role: 'user', content: 'List files' },
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'List the files.' }], encrypted_content: ANTHROPIC_SIGNATURE_TAG + SIG },
    { type: 'function_call', call_id: 'toolu_1', name: 'shell', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'toolu_1', output: 'a.txt' },
  ];
  const ir = responsesCodec.decodeRequest({ model: 'claude', input, reasoning: { effort: 'medium' }, tools: [TOOL] });
  assert.deepEqual(ir.messages[1]!.content[0], { type: 'reasoning', text: 'List the files.', signature: SIG, anthropic: true, id: 'rs_1' });
  const claude = messagesCodec.encodeRequest(ir);
  assert.deepEqual(claude.messages[1].content[0], { type: 'thinking', thinking: 'List the files.', signature: SIG });
  assert.deepEqual(claude.thinking, { type: 'enabled', budget_tokens: 4096 }, 'the last tool turn starts with signed thinking');
  const openai = responsesCodec.encodeRequest({ ...ir, native: undefined });
  assert.ok(!openai.input.some((item: any) => item.type === 'reasoning'), 'an Anthropic signature is not OpenAI encrypted content');
  // A session moved to Gemini: the Anthropic signature is no thought signature (the replayed call
  // gets Google's skip value, not Claude's signature).
  const vertex = vertexCodec.encodeRequest({ ...ir, model: 'gemini-3-pro', native: undefined });
  assert.ok(!JSON.stringify(vertex).includes(SIG), JSON.stringify(vertex.contents));
  assert.ok(!JSON.stringify(interactionsCodec.encodeRequest({ ...ir, model: 'gemini-3-pro', native: undefined })).includes(SIG));
  // OpenAI's own, untagged, stays encrypted content.
  const own = responsesCodec.decodeRequest({ model: 'gpt', input: [{ type: 'reasoning', summary: [], encrypted_content: ENC }] });
  assert.deepEqual(own.messages[0]!.content[0], { type: 'reasoning', encrypted: ENC });
});

test('thinking is left out when the last assistant tool turn carries no signed thinking (a Chat caller\'s second turn)', () => {
  const ir = chatCodec.decodeRequest({
    model: 'claude', reasoning_effort: 'medium', tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }],
    messages: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'x' },
    ],
  });
  const body = messagesCodec.encodeRequest(ir);
  assert.equal(body.thinking, undefined);
  assert.deepEqual(body.messages[1].content.map((b: any) => b.type), ['tool_use']);
  // A first turn, or a last assistant turn without tool calls, keeps thinking.
  const first = messagesCodec.encodeRequest(chatCodec.decodeRequest({ model: 'claude', reasoning_effort: 'medium', messages: [{ role: 'user', content: 'hi' }] }));
  assert.deepEqual(first.thinking, { type: 'enabled', budget_tokens: 4096 });
  const later = messagesCodec.encodeRequest(chatCodec.decodeRequest({
    model: 'claude', reasoning_effort: 'medium',
    messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }],
  }));
  assert.deepEqual(later.thinking, { type: 'enabled', budget_tokens: 4096 });
});

// ---------- 3. OpenAI's encrypted reasoning toward Messages callers ----------

const GPT_EVENTS: IREvent[] = [
  { type: 'start', id: 'resp_1' },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Open the README.' },
  { type: 'signature', index: 0, signature: ENC, encrypted: true },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_1', name: 'read_file' } },
  { type: 'args_delta', index: 1, json: '{"path":"README.md"}' },
  { type: 'block_stop', index: 1 },
  { type: 'finish', reason: 'tool_use', usage: { inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1, reasoningTokens: 0 } },
];

test('Messages stream and body: GPT\'s encrypted reasoning is the thinking block\'s signature, tagged', () => {
  const out = frames(streamThrough(messagesCodec, GPT_EVENTS));
  const sig = out.find((f) => f.data.delta?.type === 'signature_delta')!;
  assert.equal(sig.data.index, 0);
  assert.equal(sig.data.delta.signature, OPENAI_ENCRYPTED_TAG + ENC);
  const collector = new ResponseCollector();
  for (const ev of GPT_EVENTS) collector.push(ev);
  const body = messagesCodec.encodeResponse(collector.result(), CTX);
  assert.deepEqual(body.content[0], { type: 'thinking', thinking: 'Open the README.', signature: OPENAI_ENCRYPTED_TAG + ENC });
});

test('Messages request: a tagged signature goes back to OpenAI as encrypted_content, never to Anthropic', () => {
  const body = {
    model: 'gpt', max_tokens: 20000, thinking: { type: 'enabled', budget_tokens: 4096 },
    tools: [{ name: 'read_file', input_schema: { type: 'object' } }],
    messages: [
      { role: 'user', content: 'Open README' },
      { role: 'assistant', content: [
        { type: 'thinking', thinking: 'Open the README.', signature: OPENAI_ENCRYPTED_TAG + ENC },
        { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'README.md' } },
      ] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '# readme' }] },
    ],
  };
  const ir = messagesCodec.decodeRequest(body);
  assert.deepEqual(ir.messages[1]!.content[0], { type: 'reasoning', text: 'Open the README.', encrypted: ENC });
  const openai = responsesCodec.encodeRequest(ir);
  assert.deepEqual(openai.input[1], { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Open the README.' }], encrypted_content: ENC });
  const claude = messagesCodec.encodeRequest(ir);
  assert.deepEqual(claude.messages[1].content.map((b: any) => b.type), ['tool_use'], 'OpenAI content is no Anthropic signature');
  // An untagged signature is still Anthropic's.
  const own = messagesCodec.decodeRequest({ ...body, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: SIG }] }] });
  assert.deepEqual(own.messages[0]!.content[0], { type: 'reasoning', text: 't', signature: SIG, anthropic: true });
});

test('Interactions stream and body: GPT\'s encrypted reasoning is the thought step\'s signature, tagged; it goes back to OpenAI only', () => {
  const out = frames(streamThrough(interactionsCodec, GPT_EVENTS).replace(/event: done\ndata: \[DONE\]\n\n/, ''));
  const sig = out.find((f) => f.data.delta?.type === 'thought_signature')!;
  assert.equal(sig.data.delta.signature, OPENAI_ENCRYPTED_TAG + ENC);
  const collector = new ResponseCollector();
  for (const ev of GPT_EVENTS) collector.push(ev);
  const body = interactionsCodec.encodeResponse(collector.result(), CTX);
  assert.deepEqual(body.steps[0], { type: 'thought', signature: OPENAI_ENCRYPTED_TAG + ENC, summary: [{ type: 'text', text: 'Open the README.' }] });
  const ir = interactionsCodec.decodeRequest({
    model: 'gpt',
    input: [
      { type: 'user_input', content: [{ type: 'text', text: 'Open README' }] },
      { type: 'thought', signature: OPENAI_ENCRYPTED_TAG + ENC, summary: [{ type: 'text', text: 'Open the README.' }] },
      { type: 'function_call', id: 'call_1', name: 'read_file', arguments: { path: 'README.md' } },
      { type: 'function_result', call_id: 'call_1', name: 'read_file', result: '# readme' },
    ],
  });
  const openai = responsesCodec.encodeRequest(ir);
  assert.ok(openai.input.some((item: any) => item.type === 'reasoning' && item.encrypted_content === ENC), JSON.stringify(openai.input));
  for (const other of [interactionsCodec.encodeRequest({ ...ir, model: 'gemini-3-pro', native: undefined }), messagesCodec.encodeRequest(ir)]) {
    assert.ok(!JSON.stringify(other).includes(ENC), JSON.stringify(other));
  }
});

// ---------- 4. Images and files in a Responses tool output ----------

test('Responses function_call_output with input_text, input_image and input_file: the result, then its media', () => {
  const ir = responsesCodec.decodeRequest({
    model: 'claude',
    input: [
      { role: 'user', content: 'look' },
      { type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: [
        { type: 'input_text', text: 'screenshot:' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'original' },
        { type: 'input_file', filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF}` },
      ] },
    ],
  });
  assert.deepEqual(ir.messages[2], { role: 'user', content: [
    { type: 'tool_result', callId: 'call_1', content: 'screenshot:', name: 'view_image' },
    { type: 'image', mediaType: 'image/png', data: PNG },
    { type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'a.pdf' },
  ] });
  const claude = messagesCodec.encodeRequest(ir);
  assert.deepEqual(claude.messages[2].content.map((b: any) => b.type), ['tool_result', 'image', 'document']);
  const gemini = vertexCodec.encodeRequest(ir);
  assert.ok(gemini.contents.at(-1).parts.some((p: any) => p.inlineData?.mimeType === 'image/png'));
});

// ---------- 5. The parallel-call switch ----------

test('parallel calls off: Messages disable_parallel_tool_use ↔ OpenAI parallel_tool_calls; Gemini has no switch', () => {
  const fromMessages = messagesCodec.decodeRequest({
    model: 'gpt', max_tokens: 50, messages: [{ role: 'user', content: 'x' }],
    tools: [{ name: 'read', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'read', disable_parallel_tool_use: true },
  });
  assert.equal(fromMessages.parallelToolCalls, false);
  assert.equal(fromMessages.native, undefined, 'the switch is carried, not a native leftover');
  assert.equal(responsesCodec.encodeRequest(fromMessages).parallel_tool_calls, false);
  assert.equal(chatCodec.encodeRequest(fromMessages).parallel_tool_calls, false);

  const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }];
  const fromChat = chatCodec.decodeRequest({ model: 'claude', messages: [{ role: 'user', content: 'x' }], tools, parallel_tool_calls: false });
  assert.deepEqual(messagesCodec.encodeRequest(fromChat).tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  assert.equal(responsesCodec.encodeRequest(fromChat).parallel_tool_calls, false, 'a Chat caller on vendor A still sends it');
  const fromResponses = responsesCodec.decodeRequest({ model: 'claude', input: 'x', tools: [TOOL], tool_choice: 'required', parallel_tool_calls: false });
  assert.equal(fromResponses.native, undefined);
  assert.deepEqual(messagesCodec.encodeRequest(fromResponses).tool_choice, { type: 'any', disable_parallel_tool_use: true });
  const none = responsesCodec.decodeRequest({ model: 'claude', input: 'x', tools: [TOOL], tool_choice: 'none', parallel_tool_calls: false });
  assert.deepEqual(messagesCodec.encodeRequest(none).tool_choice, { type: 'none' });
  // Gemini wires have no switch: dropped (the other fields a target cannot carry are, docs/decisions.md).
  const interactions = JSON.stringify(interactionsCodec.encodeRequest(fromResponses));
  const vertex = JSON.stringify(vertexCodec.encodeRequest(fromResponses));
  for (const text of [interactions, vertex]) assert.ok(!/parallel/i.test(text), text);
});

// ---------- 6. In-stream provider errors in translated output ----------

test('an Anthropic in-stream error reaches Chat and Responses callers as provider_error, its words kept', () => {
  const events = decodeAll(messagesCodec, [
    CLAUDE_STREAM[0]!,
    sse('error', { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } }),
  ]);
  assert.deepEqual(events.at(-1), { type: 'error', code: 'provider_error', message: 'rate_limit_error: Slow down' });
  const responses = frames(streamThrough(responsesCodec, events));
  const error = responses.find((f) => f.event === 'error')!.data;
  assert.equal(error.code, 'provider_error');
  assert.match(error.message, /rate_limit_error: Slow down/);
  assert.equal(responses.at(-1)!.data.response.error.code, 'provider_error');
  const chat = streamThrough(chatCodec, events);
  assert.match(chat, /"code":"provider_error"/);
  assert.ok(!chat.includes('"code":"rate_limit_error"'), chat);
});

// ---------- 7. Gemini's thought signatures toward Responses callers ----------

const G_THOUGHT = 'CqwBgeminiThought+Sig/=';
const G_CALL = 'CiQBgeminiCall+Sig/==';
/** What Codex sends: it asks for encrypted reasoning (store false). */
const KEEP: EncodeContext = { ...CTX, echo: { include: ['reasoning.encrypted_content'] } };
const ievent = (event_type: string, data: Record<string, unknown>): SSEFrame => sse(event_type, { ...data, event_type });

/** vendor_b (Interactions): a signed thought step with a summary, then a function call. */
const INTERACTIONS_STREAM: SSEFrame[] = [
  ievent('interaction.created', { interaction: { id: 'v1_1', status: 'in_progress', object: 'interaction', model: 'gemini-3.1-pro-preview' } }),
  ievent('step.start', { index: 0, step: { type: 'thought' } }),
  ievent('step.delta', { index: 0, delta: { type: 'thought_summary', content: { type: 'text', text: 'List the files.' } } }),
  ievent('step.delta', { index: 0, delta: { type: 'thought_signature', signature: G_THOUGHT } }),
  ievent('step.stop', { index: 0 }),
  ievent('step.start', { index: 1, step: { id: 'call_g', type: 'function_call', name: 'shell', arguments: {} } }),
  ievent('step.delta', { index: 1, delta: { type: 'arguments_delta', arguments: '{"cmd":"ls"}' } }),
  ievent('step.stop', { index: 1 }),
  ievent('interaction.completed', { interaction: { id: 'v1_1', status: 'requires_action', usage: { total_input_tokens: 5, total_output_tokens: 3, total_thought_tokens: 9 } } }),
];
/** cloud_a (Vertex): thought text, then a function call carrying Gemini 3's signature itself. */
const VERTEX_STREAM: SSEFrame[] = [
  { data: JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'List the files.', thought: true }] } }] }) },
  { data: JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'shell', args: { cmd: 'ls' } }, thoughtSignature: G_CALL }] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, thoughtsTokenCount: 9, totalTokenCount: 17 },
  }) },
];

/** The output items of a streamed Responses answer: each output_item.done, and response.completed's. */
function streamedOutput(events: IREvent[], ctx: EncodeContext): { done: any[]; completed: any[] } {
  const enc = responsesCodec.createStreamEncoder(ctx);
  const out = frames(events.map((ev) => enc.push(ev)).join(''));
  const added = out.filter((f) => f.event === 'response.output_item.added').map((f) => f.data.output_index);
  const done = out.filter((f) => f.event === 'response.output_item.done');
  assert.deepEqual(done.map((f) => f.data.output_index), added, 'items are done in the order they were added');
  assert.deepEqual(added, added.map((_, i) => i));
  return { done: done.map((f) => f.data.item), completed: out.find((f) => f.event === 'response.completed')!.data.response.output };
}

test('Responses stream and body, caller asked encrypted reasoning: Interactions\' thought signature rides its reasoning item, tagged gemini-signature', () => {
  const { done, completed } = streamedOutput(decodeAll(interactionsCodec, INTERACTIONS_STREAM), KEEP);
  for (const output of [done, completed]) {
    assert.deepEqual(output.map((o: any) => o.type), ['reasoning', 'function_call']);
    assert.equal(output[0].encrypted_content, GEMINI_SIGNATURE_TAG + G_THOUGHT);
    assert.deepEqual(output[0].summary, [{ type: 'summary_text', text: 'List the files.' }]);
  }
  const body = {
    id: 'v1_1', status: 'requires_action', usage: { total_input_tokens: 5, total_output_tokens: 3 },
    steps: [
      { type: 'thought', signature: G_THOUGHT, summary: [{ type: 'text', text: 'List the files.' }] },
      { type: 'function_call', id: 'call_g', name: 'shell', arguments: { cmd: 'ls' } },
    ],
  };
  const output = responsesCodec.encodeResponse(interactionsCodec.decodeResponse(body), KEEP).output;
  assert.deepEqual(output.map((o: any) => [o.type, o.encrypted_content]), [['reasoning', GEMINI_SIGNATURE_TAG + G_THOUGHT], ['function_call', undefined]]);
  const collector = new ResponseCollector();
  for (const ev of decodeAll(interactionsCodec, INTERACTIONS_STREAM)) collector.push(ev);
  assert.equal(responsesCodec.encodeResponse(collector.result(), KEEP).output[0].encrypted_content, GEMINI_SIGNATURE_TAG + G_THOUGHT);
});

test('Responses stream and body, caller asked encrypted reasoning: Vertex\'s signature on a function call rides a reasoning item just before the call', () => {
  const { done, completed } = streamedOutput(decodeAll(vertexCodec, VERTEX_STREAM), KEEP);
  for (const output of [done, completed]) {
    assert.deepEqual(output.map((o: any) => o.type), ['reasoning', 'reasoning', 'function_call']);
    assert.equal(output[0].encrypted_content, undefined, 'the unsigned thought keeps its summary only');
    assert.deepEqual(output[1].summary, []);
    assert.equal(output[1].encrypted_content, GEMINI_SIGNATURE_TAG + G_CALL);
    assert.equal(output[2].call_id.length > 0, true);
  }
  assert.deepEqual(completed.map((o: any) => o.id), done.map((o: any) => o.id));
  const body = JSON.parse(VERTEX_STREAM[1]!.data);
  body.candidates[0].content.parts.unshift({ text: 'List the files.', thought: true });
  const output = responsesCodec.encodeResponse(vertexCodec.decodeResponse(body), KEEP).output;
  assert.deepEqual(output.map((o: any) => [o.type, o.encrypted_content]), [
    ['reasoning', undefined], ['reasoning', GEMINI_SIGNATURE_TAG + G_CALL], ['function_call', undefined],
  ]);
});

test('Responses answers from Gemini to a caller that did not ask encrypted reasoning: no signature, no extra item (as before)', () => {
  for (const [codec, stream] of [[interactionsCodec, INTERACTIONS_STREAM], [vertexCodec, VERTEX_STREAM]] as const) {
    const { done, completed } = streamedOutput(decodeAll(codec, stream), CTX);
    for (const output of [done, completed]) {
      assert.deepEqual(output.map((o: any) => o.type), ['reasoning', 'function_call'], codec.name);
      assert.ok(output.every((o: any) => o.encrypted_content === undefined), JSON.stringify(output));
    }
  }
});

test('Responses request: a gemini-signature encrypted_content goes back to Gemini (thought step, the call\'s thoughtSignature), never to Claude or OpenAI', () => {
  const input = [
    { role: 'user', content: 'List files' },
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'List the files.' }], encrypted_content: GEMINI_SIGNATURE_TAG + G_THOUGHT },
    { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: GEMINI_SIGNATURE_TAG + G_CALL },
    { type: 'function_call', call_id: 'call_g', name: 'shell', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'call_g', output: 'a.txt' },
  ];
  const ir = responsesCodec.decodeRequest({ model: 'gemini-3.1-pro-preview', input, reasoning: { effort: 'high' }, tools: [TOOL] });
  assert.deepEqual(ir.messages[1]!.content.slice(0, 2), [
    { type: 'reasoning', text: 'List the files.', signature: G_THOUGHT, id: 'rs_1' },
    { type: 'reasoning', signature: G_CALL, id: 'rs_2' },
  ]);
  const interactions = interactionsCodec.encodeRequest({ ...ir, native: undefined });
  assert.deepEqual(interactions.input.slice(1, 4), [
    { type: 'thought', signature: G_THOUGHT, summary: [{ type: 'text', text: 'List the files.' }] },
    { type: 'thought', signature: G_CALL },
    { type: 'function_call', id: 'call_g', name: 'shell', arguments: { cmd: 'ls' } },
  ]);
  const vertex = vertexCodec.encodeRequest({ ...ir, native: undefined });
  assert.deepEqual(vertex.contents[1].parts, [
    { text: 'List the files.', thought: true, thoughtSignature: G_THOUGHT },
    { functionCall: { id: 'call_g', name: 'shell', args: { cmd: 'ls' } }, thoughtSignature: G_CALL },
  ]);
  for (const body of [interactions, vertex]) assert.ok(!JSON.stringify(body).includes('skip_thought_signature_validator'), JSON.stringify(body));
  // A session moved to Claude or GPT: a Gemini signature is neither Anthropic's nor OpenAI's.
  const claude = messagesCodec.encodeRequest({ ...ir, model: 'claude' });
  assert.deepEqual(claude.messages[1].content.map((b: any) => b.type), ['tool_use']);
  const openai = responsesCodec.encodeRequest({ ...ir, model: 'gpt', native: undefined });
  assert.ok(!openai.input.some((item: any) => item.type === 'reasoning'), JSON.stringify(openai.input));
  for (const body of [claude, openai]) {
    assert.ok(![G_THOUGHT, G_CALL, GEMINI_SIGNATURE_TAG].some((s) => JSON.stringify(body).includes(s)), JSON.stringify(body));
  }
  // An empty tagged value is no signature.
  const empty = responsesCodec.decodeRequest({ model: 'g', input: [{ type: 'reasoning', summary: [], encrypted_content: GEMINI_SIGNATURE_TAG }] });
  assert.deepEqual(empty.messages[0]!.content[0], { type: 'reasoning' });
});
