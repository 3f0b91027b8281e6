// A provider answer that names no tier says nothing about which one served: the committed tier
// stands. A flex race on vendor A commits on flex and replays the project's OpenAI text stream with
// every service_tier removed (Azure and OpenAI-compatible servers send none; so do some
// recordings). The passthrough tap charged flex while every decoder read the missing tier as
// standard: the same provider stream was charged flex passed through, and standard with
// flex_unavailable translated or non-streamed. Every surface now says flex, at the flex price.
// (An explicit "default" still means standard served: test/e2e/served-tier.test.ts.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;
const fixtures = mkdtempSync(join(tmpdir(), 'unnamed-tier-'));

before(async () => {
  const text = readFileSync(join(OWN_FIXTURES, 'openai-responses/text.chunks.txt'), 'utf8');
  const untiered = text.replace(/,"service_tier":"[^"]*"/g, '');
  assert.ok(text.includes('"service_tier":"default"') && !untiered.includes('service_tier'), 'every service_tier removed');
  mkdirSync(join(fixtures, 'openai-responses'));
  writeFileSync(join(fixtures, 'openai-responses/untiered.chunks.txt'), untiered);
  t = await startTestGateway({ config: { simulator: { fixturesDir: fixtures } } });
  key = (await t.newOrg({ balance: 10_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(async () => { await t.close(); rmSync(fixtures, { recursive: true, force: true }); });

const onVendorA = { model: 'gpt-5.4-mini', start_within: '00h-00m-30s', provider: ['vendor_a'], include_cost: true };
const UNTIERED = `hi ${sim({ replay: 'openai-responses/untiered.chunks.txt', flex_start_ms: 0 })}`;

async function recordOf(id: string | null): Promise<any> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  await t.gw.services.usage.flush();
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as any).data.find((r: any) => r.id === id);
}

/** The record says flex served, charged below the standard price; the headers agree. */
async function assertFlex(headers: Headers, what: string): Promise<number> {
  assert.equal(headers.get('x-service-flex-applied'), 'true', `${what}: flex applied`);
  assert.equal(headers.get('x-service-flex-reason'), 'flex_committed', `${what}: reason`);
  const record = await recordOf(headers.get('x-request-id'));
  assert.deepEqual([record.tier, record.reason], ['flex', 'flex_committed'], `${what}: record`);
  assert.ok(record.cost_micro_usd < record.standard_cost_micro_usd, `${what}: charged ${record.cost_micro_usd}, the standard price is ${record.standard_cost_micro_usd}`);
  return record.cost_micro_usd;
}

const routingOf = (usage: any): [string, string] => [usage.routing.tier, usage.routing.reason];

let passthroughCost: number;

test('the Responses passthrough stream: the committed flex tier is charged', async () => {
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...onVendorA, stream: true, input: UNTIERED }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  passthroughCost = await assertFlex(res.headers, 'responses stream');
});

test('non-streamed Responses: flex, as the same stream passed through', async () => {
  const { data, response } = await openai.responses.create({ ...onVendorA, input: UNTIERED } as any).withResponse();
  const body = data as any;
  assert.equal(await assertFlex(response.headers, 'responses'), passthroughCost, 'the passthrough price');
  assert.equal(body.service_tier, 'flex');
  assert.deepEqual(routingOf(body.usage), ['flex', 'flex_committed']);
});

test('a translated Chat stream: flex from the first chunk to the usage chunk', async () => {
  const { data: stream, response } = await openai.chat.completions.create({
    ...onVendorA, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: UNTIERED }],
  } as any).withResponse();
  const chunks: any[] = [];
  for await (const chunk of stream as any) chunks.push(chunk);
  assert.deepEqual([...new Set(chunks.map((c) => c.service_tier))], ['flex']);
  assert.deepEqual(routingOf(chunks.at(-1).usage), ['flex', 'flex_committed']);
  assert.equal(await assertFlex(response.headers, 'chat stream'), passthroughCost, 'the passthrough price');
});

test('non-streamed Chat: flex', async () => {
  const { data, response } = await openai.chat.completions.create({
    ...onVendorA, messages: [{ role: 'user', content: UNTIERED }],
  } as any).withResponse();
  const body = data as any;
  assert.equal(body.service_tier, 'flex');
  assert.deepEqual(routingOf(body.usage), ['flex', 'flex_committed']);
  assert.equal(await assertFlex(response.headers, 'chat'), passthroughCost, 'the passthrough price');
});

test('a translated Messages stream: message_start and message_delta say flex', async () => {
  const stream = anthropic.messages.stream({
    ...onVendorA, max_tokens: 100, messages: [{ role: 'user', content: UNTIERED }],
  } as any);
  const events: any[] = [];
  for await (const ev of stream) events.push(ev);
  const response = await stream.withResponse().then((r) => r.response);
  assert.equal(events.find((e) => e.type === 'message_start').message.usage.service_tier, 'flex');
  const usage = events.find((e) => e.type === 'message_delta').usage;
  assert.notEqual(usage.service_tier, 'standard');
  assert.deepEqual(routingOf(usage), ['flex', 'flex_committed']);
  assert.equal(await assertFlex(response.headers, 'messages stream'), passthroughCost, 'the passthrough price');
});
