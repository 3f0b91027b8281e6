// One tier per request. A flex race whose provider served the flex call at its standard tier (the
// replayed OpenAI stream's response.completed says `service_tier: "default"`, the Interactions one
// `"standard"`) is charged at the standard price, and every surface says standard served: the
// non-streamed answer's headers and body, and a stream's frames from its end on (its head went out
// at commit, naming flex). The routing reason is flex_unavailable: flex did not serve.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  t = await startTestGateway({ config: { simulator: { fixturesDir: OWN_FIXTURES } } });
  key = (await t.newOrg({ balance: 10_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

/** A flex race on vendor A that commits at once, answered by the recorded stream served at default. */
const onVendorA = { model: 'gpt-5.4-mini', start_within: '00h-00m-30s', provider: ['vendor_a'], include_cost: true };
const SERVED_DEFAULT = `hi ${sim({ replay: 'openai-responses/text.chunks.txt', flex_start_ms: 0 })}`;

async function recordOf(id: string | null): Promise<any> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  await t.gw.services.usage.flush();
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as any).data.find((r: any) => r.id === id);
}

test('non-streamed: the headers, the body and the record all say standard served, at the standard price', async () => {
  const { data, response } = await openai.responses.create({ ...onVendorA, input: SERVED_DEFAULT } as any).withResponse();
  const body = data as any;
  assert.equal(response.headers.get('x-service-flex-applied'), 'false', 'flex did not serve the response');
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_unavailable');
  assert.equal(body.service_tier, 'default');
  assert.deepEqual([body.usage.routing.tier, body.usage.routing.reason], ['standard', 'flex_unavailable']);
  const record = await recordOf(response.headers.get('x-request-id'));
  assert.deepEqual([record.tier, record.reason], ['standard', 'flex_unavailable']);
  assert.equal(record.cost_micro_usd, record.standard_cost_micro_usd, 'charged at the standard price');
  assert.equal(response.headers.get('x-service-cost'), String(record.cost_micro_usd));
});

test('a translated Chat stream: the chunks from the finish on carry the served tier', async () => {
  const stream = await openai.chat.completions.create({
    ...onVendorA, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: SERVED_DEFAULT }],
  } as any);
  const chunks: any[] = [];
  for await (const chunk of stream as any) chunks.push(chunk);
  assert.equal(chunks[0].service_tier, 'flex', 'the first chunk names the committed tier');
  const finish = chunks.find((c) => c.choices[0]?.finish_reason);
  const usage = chunks.at(-1);
  assert.equal(finish.service_tier, 'default');
  assert.equal(usage.service_tier, 'default');
  assert.deepEqual([usage.usage.routing.tier, usage.usage.routing.reason], ['standard', 'flex_unavailable']);
});

test('a translated Messages stream: message_delta names the served tier', async () => {
  const stream = anthropic.messages.stream({
    ...onVendorA, max_tokens: 100, messages: [{ role: 'user', content: SERVED_DEFAULT }],
  } as any);
  const events: any[] = [];
  for await (const ev of stream) events.push(ev);
  assert.equal(events.find((e) => e.type === 'message_start').message.usage.service_tier, 'flex');
  const usage = events.find((e) => e.type === 'message_delta').usage;
  assert.equal(usage.service_tier, 'standard');
  assert.deepEqual([usage.routing.tier, usage.routing.reason], ['standard', 'flex_unavailable']);
});

test('a translated Responses stream: response.completed names the served tier', async () => {
  const stream = await openai.responses.create({
    model: 'gemini-3.5-flash', start_within: '00h-00m-30s', provider: ['vendor_b'], include_cost: true, stream: true,
    input: `hi ${sim({ replay: 'gemini-interactions/text.chunks.txt', flex_start_ms: 0 })}`,
  } as any);
  const events: any[] = [];
  for await (const ev of stream as any) events.push(ev);
  assert.equal(events.find((e) => e.type === 'response.created').response.service_tier, 'flex');
  const completed = events.find((e) => e.type === 'response.completed').response;
  assert.equal(completed.service_tier, 'default');
  assert.deepEqual([completed.usage.routing.tier, completed.usage.routing.reason], ['standard', 'flex_unavailable']);
});

test('a translated Interactions stream: interaction.completed names the served tier', async () => {
  const res = await fetch(`${t.url}/v1/interactions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...onVendorA, stream: true, input: SERVED_DEFAULT }),
  });
  const text = await res.text();
  assert.equal(res.headers.get('x-service-flex-applied'), 'true', 'the head went out at commit');
  const completed = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))
    .find((e) => e.event_type === 'interaction.completed')!.interaction;
  assert.equal(completed.service_tier, 'standard');
  assert.deepEqual([completed.usage.routing.tier, completed.usage.routing.reason], ['standard', 'flex_unavailable']);
});
