// vendor_c through the official @anthropic-ai/sdk: Messages, streamed and not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import type { Simulator } from '../../lib/simulator/server.ts';
import { assertSatisfies, directive, parseSSE, start } from './helpers.ts';

const SEARCH = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'number', minimum: 1, maximum: 50 },
    filters: {
      type: 'object',
      properties: { lang: { type: 'string', enum: ['en', 'de'] }, after: { type: 'string', format: 'date' } },
      required: ['lang'],
    },
  },
  required: ['query', 'filters'],
};

let sim: Simulator;
let client: Anthropic;
before(async () => {
  sim = await start();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: sim.url, maxRetries: 0 });
});
after(() => sim.close());

test('stream: message_start usage, ping, text block, cumulative message_delta usage, message_stop', async () => {
  const stream = await client.messages.create({
    model: 'claude-sim', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hello, Claude' }],
  });
  const types: string[] = [];
  let text = '';
  let inputTokens = 0;
  let startOutput = 0;
  let finalOutput = 0;
  let tier: string | null | undefined;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'message_start') {
      inputTokens = ev.message.usage.input_tokens;
      startOutput = ev.message.usage.output_tokens;
      tier = ev.message.usage.service_tier;
    }
    if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    if (ev.type === 'message_delta') {
      finalOutput = ev.usage.output_tokens;
      assert.equal(ev.delta.stop_reason, 'end_turn');
    }
  }
  assert.deepEqual(types.filter((t) => t !== 'content_block_delta'),
    ['message_start', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop']);
  assert.equal(inputTokens, Math.ceil('Hello, Claude'.length / 4));
  assert.equal(startOutput, 1);
  assert.equal(finalOutput, 16);
  assert.equal(tier, 'standard');
  assert.equal(text.split(' ').length, 16);

  // `ping` follows message_start on the wire (the SDK hides it).
  const raw = await fetch(`${sim.url}/v1/messages`, {
    method: 'POST', headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sim', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] }),
  });
  const frames = parseSSE(await raw.text());
  assert.deepEqual(frames.slice(0, 2).map((f) => f.event), ['message_start', 'ping']);
  for (const f of frames) assert.equal(JSON.parse(f.data).type, f.event);
});

test('non-stream Message; thinking block with signature when thinking is enabled', async () => {
  const msg = await client.messages.create({
    model: 'claude-sim', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: [{ role: 'user', content: [{ type: 'text', text: 'why?' }] }],
  });
  assert.equal(msg.type, 'message');
  assert.equal(msg.content[0]!.type, 'thinking');
  assert.equal(msg.content[1]!.type, 'text');
  if (msg.content[0]!.type === 'thinking') assert.ok(msg.content[0]!.signature.length > 10);
  assert.equal(msg.usage.output_tokens, 16 + 16);

  const stream = client.messages.stream({
    model: 'claude-sim', max_tokens: 2000, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'why?' }],
  });
  const deltas = new Set<string>();
  stream.on('streamEvent', (e) => { if (e.type === 'content_block_delta') deltas.add(e.delta.type); });
  const final = await stream.finalMessage();
  assert.deepEqual([...deltas].sort(), ['signature_delta', 'text_delta', 'thinking_delta']);
  assert.equal(final.content[0]!.type, 'thinking');
});

test('tool_choice any / tool → tool_use block with schema-valid input; tool_result turn → text', async () => {
  const tools: Anthropic.Tool[] = [{ name: 'search', description: 's', input_schema: SEARCH as Anthropic.Tool.InputSchema }];
  const final = await client.messages.stream({
    model: 'claude-sim', max_tokens: 500, tools, tool_choice: { type: 'tool', name: 'search' },
    messages: [{ role: 'user', content: 'find it' }],
  }).finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  const block = final.content[0]!;
  assert.equal(block.type, 'tool_use');
  if (block.type !== 'tool_use') return;
  assertSatisfies(SEARCH, block.input);

  const answered = await client.messages.create({
    model: 'claude-sim', max_tokens: 500, tools, tool_choice: { type: 'any' },
    messages: [
      { role: 'user', content: 'find it' },
      { role: 'assistant', content: [block] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: block.id, content: 'found' }] },
    ],
  });
  assert.equal(answered.stop_reason, 'end_turn');
});

test('max_tokens truncation → stop_reason max_tokens', async () => {
  const msg = await client.messages.create({ model: 'claude-sim', max_tokens: 4, messages: [{ role: 'user', content: 'go' }] });
  assert.equal(msg.stop_reason, 'max_tokens');
  assert.equal(msg.usage.output_tokens, 4);
});

test('auth and validation errors in the Anthropic shape; injected 529 overloaded_error', async () => {
  const noKey = await fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: '{}' });
  assert.equal(noKey.status, 401);
  const body = await noKey.json() as { type: string; error: { type: string } };
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'authentication_error');
  const noVersion = await fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'k' }, body: '{}' });
  assert.equal(noVersion.status, 400);
  assert.equal((await noVersion.json() as { error: { type: string } }).error.type, 'invalid_request_error');

  await assert.rejects(
    client.messages.create({ model: 'claude-sim', max_tokens: 5, service_tier: 'flex' as 'auto', messages: [{ role: 'user', content: 'x' }] }),
    (err: unknown) => err instanceof Anthropic.BadRequestError,
  );
  await assert.rejects(
    client.messages.create({ model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: `x ${directive({ fail: [529], id: 'anth-529' })}` }] }),
    (err: unknown) => err instanceof Anthropic.APIError && err.status === 529 && (err.error as { error: { type: string } }).error.type === 'overloaded_error',
  );
});

test('call ids, custom tool names and an untyped input_schema Anthropic refuses: 400 with its messages', async () => {
  const refusal = async (body: Record<string, unknown>) => {
    const err = await client.messages.create({ model: 'claude-sim', max_tokens: 5, ...body } as any).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, JSON.stringify(body));
    return (err.error as { error: { message: string } }).error.message;
  };
  const history = (id: string, resultId = id) => ({ messages: [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: resultId, content: 'sunny' }] },
  ] });
  assert.equal(await refusal(history('functions.get_weather:0')), "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'");
  assert.equal(await refusal(history('toolu_1', 'call 1')), "messages.2.content.0.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'");
  const ask = { messages: [{ role: 'user', content: 'hi' }] };
  assert.equal(await refusal({ ...ask, tools: [{ name: 'server.tool', input_schema: { type: 'object' } }] }),
    "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'");
  assert.equal(await refusal({ ...ask, tools: [{ name: 'ping', input_schema: {} }] }), 'tools.0.custom.input_schema.type: Field required');
  const fine = await client.messages.create({
    model: 'claude-sim', max_tokens: 5, ...history('toolu_01-A_b'), tools: [{ name: 'x'.repeat(128), input_schema: { type: 'object' } }],
  } as any);
  assert.equal(fine.type, 'message');
});

test('system-role messages in messages (the SDK\'s SystemMessageParam) are prompt text; a non-text block in one is refused', async () => {
  const env = '# Environment\nPlatform: linux';
  const msg = await client.messages.create({
    model: 'claude-opus-4-8', max_tokens: 20,
    messages: [{ role: 'user', content: 'Say hello' }, { role: 'system', content: env }, { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }],
  });
  assert.equal(msg.type, 'message');
  assert.equal(msg.usage.input_tokens, Math.ceil(`Say hello${env}Be brief.`.length / 4));
  const err = await client.messages.create({
    model: 'claude-sim', max_tokens: 5,
    messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }],
  } as any).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof Anthropic.BadRequestError);
  assert.equal((err.error as { error: { message: string } }).error.message, "messages.1.content.0.type: Input should be 'text'");
});

test('Opus 4.7 and later take temperature and top_p at their default; a dated Opus 4 id takes budget thinking', async () => {
  const create = (body: Record<string, unknown>) => client.messages.create({ max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], ...body } as any)
    .then(() => 'ok', (e: unknown) => (e instanceof Anthropic.BadRequestError ? (e.error as { error: { message: string } }).error.message : String(e)));
  assert.equal(await create({ model: 'claude-opus-4-8', temperature: 1, top_p: 1 }), 'ok');
  assert.equal(await create({ model: 'claude-opus-4-8', temperature: 0.5 }), 'temperature is deprecated for this model.');
  assert.equal(await create({ model: 'claude-opus-4-8', top_p: 0.99 }), 'top_p is deprecated for this model.');
  assert.equal(await create({ model: 'claude-opus-4-8', top_k: 1 }), 'top_k is deprecated for this model.');
  assert.equal(await create({ model: 'claude-opus-4-20250514', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }), 'ok');
  assert.match(await create({ model: 'claude-opus-4-7', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }), /^thinking\.type\.enabled is not supported/);
});
