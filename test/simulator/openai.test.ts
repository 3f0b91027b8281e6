// vendor_a through the official openai SDK: Responses and Chat Completions, streamed and not.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { Simulator } from '../../lib/simulator/server.ts';
import { assertSatisfies, directive, start } from './helpers.ts';

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 3 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    hourly: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
};

let sim: Simulator;
let client: OpenAI;
before(async () => {
  sim = await start();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
after(() => sim.close());

describe('responses', () => {
  test('stream: full event order, text, usage, tier echo and tier used', async () => {
    const stream = await client.responses.create({ model: 'gpt-sim', input: 'Say something', stream: true, service_tier: 'flex' });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = '';
    let created: OpenAI.Responses.Response | undefined;
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.created') created = ev.response;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    assert.deepEqual(seqs, types.map((_, i) => i));
    assert.deepEqual(types.filter((t) => t !== 'response.output_text.delta'), [
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
    ]);
    assert.equal(types.filter((t) => t === 'response.output_text.delta').length, 16);
    assert.equal(created!.service_tier, 'flex');
    assert.equal(completed!.service_tier, 'flex');
    const msg = completed!.output[0]!;
    assert.equal(msg.type === 'message' && msg.content[0]!.type === 'output_text' ? msg.content[0]!.text : '', text);
    assert.equal(text.split(' ').length, 16);
    const u = completed!.usage!;
    assert.equal(u.output_tokens, 16);
    assert.equal(u.input_tokens, Math.ceil('Say something'.length / 4));
    assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
    assert.equal(u.input_tokens_details.cached_tokens, 0);
    assert.equal(u.output_tokens_details.reasoning_tokens, 0);
  });

  test('response.created echoes "auto" when no tier was asked; completed says "default"', async () => {
    const stream = client.responses.stream({ model: 'gpt-sim', input: [{ role: 'user', content: 'hi' }] });
    const events: string[] = [];
    stream.on('event', (e) => { if (e.type === 'response.created') events.push(e.response.service_tier ?? 'null'); });
    const final = await stream.finalResponse();
    assert.deepEqual(events, ['auto']);
    assert.equal(final.service_tier, 'default');
    assert.equal(final.status, 'completed');
  });

  test('non-stream body is a Response with usage and the same text as the stream would have', async () => {
    const res = await client.responses.create({ model: 'gpt-sim', input: 'Same prompt' });
    const streamed = await client.responses.stream({ model: 'gpt-sim', input: 'Same prompt' }).finalResponse();
    assert.equal(res.object, 'response');
    assert.equal(res.status, 'completed');
    assert.equal(res.service_tier, 'default');
    assert.equal(res.output_text, streamed.output_text, 'deterministic from seed + content');
    assert.equal(res.usage!.output_tokens, 16);
  });

  test('reasoning: a reasoning item with summary + encrypted_content, counted inside output tokens', async () => {
    const final = await client.responses.stream({ model: 'gpt-sim', input: 'think', reasoning: { effort: 'low' } }).finalResponse();
    const [rs, msg] = final.output;
    assert.equal(rs!.type, 'reasoning');
    if (rs!.type !== 'reasoning') return;
    assert.ok(rs.encrypted_content);
    assert.equal(rs.summary[0]!.text.split(' ').length, 8);
    assert.equal(msg!.type, 'message');
    assert.equal(final.usage!.output_tokens_details.reasoning_tokens, 8);
    assert.equal(final.usage!.output_tokens, 8 + 16);
  });

  test('truncation: max_output_tokens → incomplete with reason, response.incomplete event', async () => {
    const stream = await client.responses.create({ model: 'gpt-sim', input: 'long', max_output_tokens: 5, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const last = events.at(-1)!;
    assert.equal(last.type, 'response.incomplete');
    if (last.type !== 'response.incomplete') return;
    assert.equal(last.response.status, 'incomplete');
    assert.equal(last.response.incomplete_details!.reason, 'max_output_tokens');
    assert.equal(last.response.usage!.output_tokens, 5);
    const body = await client.responses.create({ model: 'gpt-sim', input: 'long', max_output_tokens: 5 });
    assert.equal(body.status, 'incomplete');
  });

  test('forced tool call: one function_call whose arguments satisfy the schema, streamed in fragments', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'noop', parameters: { type: 'object', properties: {} }, strict: false },
      { type: 'function', name: 'get_weather', parameters: WEATHER, strict: false },
    ];
    const stream = await client.responses.create({
      model: 'gpt-sim', input: 'weather?', tools, tool_choice: { type: 'function', name: 'get_weather' }, stream: true,
    });
    let fragments = 0;
    let final: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      if (ev.type === 'response.function_call_arguments.delta') fragments++;
      if (ev.type === 'response.completed') final = ev.response;
    }
    assert.ok(fragments >= 2);
    assert.equal(final!.output.length, 1);
    const call = final!.output[0]!;
    assert.equal(call.type, 'function_call');
    if (call.type !== 'function_call') return;
    assert.equal(call.name, 'get_weather');
    assert.equal(call.status, 'completed');
    assertSatisfies(WEATHER, JSON.parse(call.arguments));

    // tool_choice "required" picks the first tool; a tool result in the last turn gets text.
    const required = await client.responses.create({ model: 'gpt-sim', input: 'x', tools, tool_choice: 'required' });
    assert.equal((required.output[0] as { name: string }).name, 'noop');
    const answered = await client.responses.create({
      model: 'gpt-sim', tools, tool_choice: 'required',
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' },
      ],
    });
    assert.equal(answered.output[0]!.type, 'message');
  });

  test('missing bearer → 401 invalid_api_key; bad JSON → 400 in the OpenAI error shape', async () => {
    const res = await fetch(`${sim.url}/v1/responses`, { method: 'POST', body: '{}' });
    assert.equal(res.status, 401);
    const body = await res.json() as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(body.error.code, 'invalid_api_key');
    assert.equal(body.error.type, 'invalid_request_error');
    const bad = await fetch(`${sim.url}/v1/responses`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{nope' });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json() as { error: { type: string } }).error.type, 'invalid_request_error');
  });
});

describe('chat completions', () => {
  test('stream with include_usage: usage:null on chunks, final choices:[] usage chunk, tier on every chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-sim', messages: [{ role: 'user', content: 'hello there' }], stream: true,
      stream_options: { include_usage: true }, service_tier: 'flex',
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage!.completion_tokens, 16);
    assert.equal(last.usage!.prompt_tokens, Math.ceil('hello there'.length / 4));
    assert.equal(last.usage!.total_tokens, last.usage!.prompt_tokens + 16);
    assert.equal(last.usage!.completion_tokens_details!.reasoning_tokens, 0);
    for (const c of chunks) assert.equal(c.service_tier, 'flex');
    for (const c of chunks.slice(0, -1)) assert.equal(c.usage, null);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text.split(' ').length, 16);
  });

  test('stream without include_usage: no usage field at all, ends with [DONE]', async () => {
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const text = await res.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    assert.ok(!text.includes('"usage"'));
    assert.ok(!text.includes('event:'));
  });

  test('non-stream chat.completion with usage; reasoning_effort counts reasoning tokens only', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high',
    });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.service_tier, 'default');
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    assert.equal(res.usage!.completion_tokens_details!.reasoning_tokens, 32);
    assert.equal(res.usage!.completion_tokens, 32 + 16);
    assert.equal(res.choices[0]!.message.content!.split(' ').length, 16);
    // An effort named like an Object.prototype member is unknown: the default reasoning, with text.
    const odd = await client.chat.completions.create({
      model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'constructor' as any,
    });
    assert.equal(odd.usage!.completion_tokens_details!.reasoning_tokens, 16);
    assert.equal(odd.choices[0]!.message.content!.split(' ').length, 16);
  });

  test('forced tool via directive and via tool_choice; finish_reason tool_calls; length on truncation', async () => {
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER } }];
    const stream = client.chat.completions.stream({
      model: 'gpt-sim', tools, messages: [{ role: 'user', content: `weather ${directive({ tool_call: 'get_weather' })}` }],
    });
    const done = await stream.finalChatCompletion();
    const call = done.choices[0]!.message.tool_calls![0]!;
    assert.equal(done.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(call.type, 'function');
    if (call.type !== 'function') return;
    assertSatisfies(WEATHER, JSON.parse(call.function.arguments));

    const forced = await client.chat.completions.create({
      model: 'gpt-sim', tools, tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [{ role: 'user', content: 'w' }],
    });
    assert.equal(forced.choices[0]!.finish_reason, 'tool_calls');
    const answered = await client.chat.completions.create({
      model: 'gpt-sim', tools, tool_choice: 'required',
      messages: [
        { role: 'user', content: 'w' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    assert.equal(answered.choices[0]!.finish_reason, 'stop');

    const cut = await client.chat.completions.create({ model: 'gpt-sim', messages: [{ role: 'user', content: 'w' }], max_completion_tokens: 3 });
    assert.equal(cut.choices[0]!.finish_reason, 'length');
    assert.equal(cut.usage!.completion_tokens, 3);
  });
});
