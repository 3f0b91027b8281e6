// Vendor A end to end: the official openai SDK against the real gateway on a real port, the
// built-in simulator behind it. Responses and Chat, streamed and not; headers; cost; bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;
let client: OpenAI;
let managedClient: OpenAI;

before(async () => {
  t = await startTestGateway({ config: { simulator: { fixturesDir: OWN_FIXTURES } } });
  const byok = await t.newOrg({ ownKeys: ['vendor_a'] });
  client = new OpenAI({ apiKey: byok.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const managed = await t.newOrg({ balance: 10_000_000 });
  managedClient = new OpenAI({ apiKey: managed.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(() => t.close());

const FIX = OWN_FIXTURES;

test('Responses, non-streamed, "now": assembled body, x-service headers, cost header', async () => {
  const { data, response } = await client.responses.create({
    model: 'gpt-5.4-mini', input: `Say hello ${sim({ output_tokens: 5 })}`, start_within: 'now',
  } as any).withResponse();
  assert.equal(data.object, 'response');
  assert.equal(data.status, 'completed');
  assert.ok(data.output_text.length > 0);
  assert.equal(data.usage!.output_tokens, 5);
  const h = response.headers;
  assert.equal(h.get('x-service-served-provider'), 'vendor_a');
  assert.equal(h.get('x-service-routing-reason'), 'native');
  assert.equal(h.get('x-service-flex-applied'), 'false');
  assert.equal(h.get('x-service-flex-reason'), 'standard_requested');
  assert.equal(h.get('x-service-spend-remaining'), 'unlimited');
  assert.equal(h.get('x-service-spend-as-of'), null);
  assert.match(h.get('x-service-cost')!, /^\d+$/);
  assert.equal(h.get('x-service-retries'), null, 'only requests with retry carry x-service-retries');
});

test('Responses, streamed, flex wins the race: SDK events, flex headers, usage.cost and usage.routing', async () => {
  const { data: stream, response } = await client.responses.create({
    model: 'gpt-5.4', input: `Hi ${sim({ flex_start_ms: 0, output_tokens: 8 })}`, start_within: '00h-00m-30s', stream: true, include_cost: true,
  } as any).withResponse();
  assert.equal(response.headers.get('x-service-flex-applied'), 'true');
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_committed');
  assert.equal(response.headers.get('x-service-cost'), null, 'no cost header on a stream');
  let text = '';
  let completed: any;
  for await (const ev of stream as any) {
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') completed = ev.response;
  }
  assert.ok(text.length > 0);
  assert.equal(completed.service_tier, 'flex');
  const u = completed.usage;
  assert.equal(u.output_tokens, 8);
  assert.equal(u.cost.currency, 'USD');
  // gpt-5.4 flex: input 1.25 USD/M, output 7.50 USD/M → ⌈in × 1.25⌉ + ⌈8 × 7.5⌉ micro-USD
  assert.equal(u.cost.total_micro_usd, Math.ceil(u.input_tokens * 1.25) + Math.ceil(8 * 7.5));
  assert.deepEqual(u.routing, { provider: 'vendor_a', requested_provider: 'vendor_a', tier: 'flex', reason: 'flex_committed', fallback_attempts: 0, mode: 'byok' });
});

test('passthrough: with include_cost off the caller gets vendor A\'s bytes exactly', async () => {
  const file = `${FIX}/openai-responses/text.chunks.txt`;
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', input: sim({ replay: 'openai-responses/text.chunks.txt' }), start_within: 'now', stream: true }),
  });
  assert.equal(res.status, 200);
  const expected = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`).join('');
  assert.equal(await res.text(), expected);
});

test('passthrough with include_cost: only the usage frame changes', async () => {
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', input: sim({ replay: 'openai-responses/text.chunks.txt' }), start_within: 'now', stream: true, include_cost: true }),
  });
  const lines = readFileSync(`${FIX}/openai-responses/text.chunks.txt`, 'utf8').split('\n').filter(Boolean);
  const got = (await res.text()).split('\n\n').filter(Boolean).map((f) => f.split('\n')[1]!.slice(6));
  assert.equal(got.length, lines.length);
  for (let i = 0; i < lines.length; i++) {
    const want = JSON.parse(lines[i]!);
    if (want.type !== 'response.completed') { assert.equal(got[i], lines[i]); continue; }
    const have = JSON.parse(got[i]!);
    const { cost, routing, ...usage } = have.response.usage;
    assert.deepEqual(usage, want.response.usage);
    assert.equal(cost.total_micro_usd, Math.ceil(want.response.usage.input_tokens * 0.75) + Math.ceil(want.response.usage.output_tokens * 4.5));
    assert.equal(routing.tier, 'standard');
    have.response.usage = want.response.usage;
    assert.deepEqual(have, want);
  }
});

test('Chat, non-streamed, through the canonical Responses path', async () => {
  const { data, response } = await client.chat.completions.create({
    model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `Hello ${sim({ output_tokens: 6 })}` }], start_within: 'now', include_cost: true,
  } as any).withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.equal(data.choices[0]!.finish_reason, 'stop');
  assert.ok(data.choices[0]!.message.content!.length > 0);
  assert.equal(data.usage!.completion_tokens, 6);
  assert.equal((data.usage as any).cost.total_micro_usd, Number(response.headers.get('x-service-cost')));
  assert.equal((data.usage as any).routing.reason, 'standard_requested');
});

test('Chat over the Responses wire: every Chat field Responses has reaches vendor A in its Responses form', async () => {
  const adapters = t.gw.services.adapters as Record<string, any>;
  const real = adapters.vendor_a;
  const sent: Record<string, any>[] = [];
  adapters.vendor_a = { ...real, build: (args: any) => { sent.push(args); return real.build(args); } };
  try {
    const data = await client.chat.completions.create({
      model: 'gpt-5.4-mini', start_within: 'now',
      messages: [{ role: 'user', content: [{ type: 'text', text: `Hi ${sim({ output_tokens: 3 })}` }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] }],
      reasoning_effort: 'xhigh', parallel_tool_calls: false, metadata: { a: '1' }, prompt_cache_key: 'k', safety_identifier: 's', user: 'u',
      verbosity: 'low', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'f' } }] } },
    } as any);
    assert.equal(data.object, 'chat.completion');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.wire, 'responses');
    const body = sent[0]!.body;
    assert.deepEqual(body.reasoning, { effort: 'xhigh' });
    assert.deepEqual(body.include, ['reasoning.encrypted_content']);
    assert.equal(body.parallel_tool_calls, false);
    assert.equal(body.store, false, 'Chat stores nothing unless asked');
    assert.deepEqual(body.metadata, { a: '1' });
    assert.equal(body.prompt_cache_key, 'k');
    assert.equal(body.safety_identifier, 's');
    assert.equal(body.user, 'u');
    assert.deepEqual(body.text, { verbosity: 'low' });
    assert.deepEqual(body.tool_choice, { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] });
    assert.equal(body.input[0].content[1].detail, 'low');
  } finally {
    adapters.vendor_a = real;
  }
});

test('Chat, streamed with include_usage and include_cost: the usage chunk carries cost', async () => {
  const stream = await client.chat.completions.create({
    model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `Hello ${sim({ output_tokens: 7, flex_start_ms: 0 })}` }],
    stream: true, stream_options: { include_usage: true }, start_within: '00h-00m-20s', include_cost: true,
  } as any);
  let text = '';
  let usage: any;
  let finish: string | null = null;
  for await (const chunk of stream as any) {
    if (chunk.choices[0]?.delta?.content) text += chunk.choices[0].delta.content;
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(text.length > 0);
  assert.equal(finish, 'stop');
  assert.equal(usage.completion_tokens, 7);
  assert.equal(usage.output_tokens, 7);
  assert.equal(usage.routing.tier, 'flex');
  assert.ok(usage.cost.total_micro_usd > 0);
});

test('Chat, streamed without include_usage: no usage chunk reaches the caller', async () => {
  const stream = await client.chat.completions.create({
    model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'Hello' }], stream: true, start_within: 'now',
  } as any);
  let usageChunks = 0;
  for await (const chunk of stream as any) if (chunk.usage) usageChunks++;
  assert.equal(usageChunks, 0);
});

test('Chat-native parameters pass through to vendor A\'s Chat endpoint with "now"', async () => {
  const res = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: sim({ replay: 'openai-chat/text.chunks.txt' }) }], seed: 7, start_within: 'now', stream: true, stream_options: { include_usage: true } }),
  });
  const lines = readFileSync(`${FIX}/openai-chat/text.chunks.txt`, 'utf8').split('\n').filter(Boolean);
  assert.equal(await res.text(), lines.map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n');
});

test('a managed organization gets signed spend headers', async () => {
  const { response } = await managedClient.responses.create({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' } as any).withResponse();
  assert.match(response.headers.get('x-service-spend-remaining')!, /^-?\d+$/);
  assert.match(response.headers.get('x-service-spend-as-of')!, /^\d{13}$/);
});

test('GET /v1/models: the catalog in the OpenAI list shape with the flex flag', async () => {
  const page = await client.models.list();
  const ids = page.data.map((m) => m.id);
  assert.ok(ids.includes('gpt-5.4'));
  const nano = page.data.find((m) => m.id === 'gpt-5.4-nano') as any;
  assert.equal(nano.flex_capable, false);
  assert.equal((page.data.find((m) => m.id === 'gpt-5.4') as any).flex_capable, true);
});

test('a coding agent\'s 200 KB turn: both attempts of a race send the whole body (each goes upstream as a one-shot iterable)', async () => {
  const input: any[] = Array.from({ length: 200 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user', content: `const s = "quoted" \\ path é\n`.repeat(40) + i,
  }));
  input.push({ role: 'user', content: `Go on ${sim({ flex_refuse: true, output_tokens: 3 })}` });
  const { data: stream, response } = await client.responses.create({
    model: 'gpt-5.4', input, start_within: '00h-00m-30s', stream: true,
  } as any).withResponse();
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_unavailable', 'flex refused, then standard: two attempts');
  let completed: any;
  for await (const ev of stream as any) if (ev.type === 'response.completed') completed = ev.response;
  assert.equal(completed.status, 'completed');
  assert.equal(completed.usage.output_tokens, 3);
  assert.ok(completed.usage.input_tokens > 10_000, `the simulator read the whole prompt: ${completed.usage.input_tokens} tokens`);
});
