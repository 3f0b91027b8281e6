// A provider answer that completes without its usage (a Gemini stream whose finishReason chunk has
// no usageMetadata, an OpenAI-compatible Chat server that ignores stream_options.include_usage, a
// body without `usage`) is charged the estimate a broken stream is charged (the input estimate plus
// the output its bytes hold at most), not zero: it stays a complete 200 answer, its record says
// usage_estimated, and every figure of what it cost (x-service-cost, usage.cost, the ledger's
// settlement, the record) is that one charge. Usage reported, even as zeros, is charged as reported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { onlyRecord, settledOf } from '../helpers/records.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';
import { costOf } from '../../lib/catalog/catalog.ts';
import { zeroUsage, type IRUsage } from '../../lib/ir.ts';

let t: TestGateway;
let fixtures: string;

const GEMINI = 'gemini-3.5-flash';
const vertexChunk = (o: object): string => JSON.stringify({ modelVersion: GEMINI, responseId: 'vx_1', ...o });
const vertexText = (text: string, extra: object = {}): object => ({ content: { role: 'model', parts: [{ text }] }, ...extra });
const chatChunk = (o: object): string =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5.4-mini', ...o });

before(async () => {
  fixtures = mkdtempSync(join(tmpdir(), 'gw-unreported-'));
  mkdirSync(join(fixtures, 'gemini-vertex'));
  mkdirSync(join(fixtures, 'openai-chat'));
  // The stream a Gemini route sends when its finishReason chunk carries no usageMetadata at all.
  writeFileSync(join(fixtures, 'gemini-vertex/no-usage.chunks.txt'), [
    vertexChunk({ candidates: [vertexText('Hello from')] }),
    vertexChunk({ candidates: [vertexText(' the fixture.', { finishReason: 'STOP' })] }),
  ].join('\n'));
  writeFileSync(join(fixtures, 'gemini-vertex/no-usage.json'), vertexChunk({ candidates: [vertexText('Hello from the fixture.', { finishReason: 'STOP' })] }));
  // Usage reported as zeros is reported: charged as such.
  writeFileSync(join(fixtures, 'gemini-vertex/zero-usage.json'), vertexChunk({
    candidates: [vertexText('Hello from the fixture.', { finishReason: 'STOP' })],
    usageMetadata: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
  }));
  writeFileSync(join(fixtures, 'gemini-vertex/text.chunks.txt'), readFileSync(join(OWN_FIXTURES, 'gemini-vertex/text.chunks.txt')));
  // A Chat server that ignored include_usage: the finish_reason chunk, then (the route's) [DONE].
  writeFileSync(join(fixtures, 'openai-chat/no-usage.chunks.txt'), [
    chatChunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello from' }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: { content: ' the fixture.' }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
  ].join('\n'));
  // The same from a server that writes JSON with a space after each colon (Python's json.dumps):
  // without the usage chunk, and with it.
  const spaced = (json: string): string => json.replace(/":/g, '": ');
  const spacedChunks = [
    chatChunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello from' }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: { content: ' the fixture.' }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
  ].map(spaced);
  writeFileSync(join(fixtures, 'openai-chat/spaced-no-usage.chunks.txt'), spacedChunks.join('\n'));
  writeFileSync(join(fixtures, 'openai-chat/spaced-usage.chunks.txt'), [...spacedChunks,
    spaced(chatChunk({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } }))].join('\n'));
  writeFileSync(join(fixtures, 'openai-chat/no-usage.json'), JSON.stringify({
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-5.4-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fixture.' }, finish_reason: 'stop' }],
  }));
  // The fixtures' Responses and Messages streams without their final usage: response.completed's
  // usage null, message_delta's without its output count.
  mkdirSync(join(fixtures, 'openai-responses'));
  mkdirSync(join(fixtures, 'anthropic-messages'));
  const own = (file: string): string => readFileSync(join(OWN_FIXTURES, file), 'utf8');
  writeFileSync(join(fixtures, 'openai-responses/no-usage.chunks.txt'), own('openai-responses/text.chunks.txt').replace(/"usage":\{"input_tokens":14.*?"total_tokens":20\}/, '"usage":null'));
  writeFileSync(join(fixtures, 'anthropic-messages/no-output-count.chunks.txt'), own('anthropic-messages/text.chunks.txt').replace('"usage":{"output_tokens":6}', '"usage":{}'));
  t = await startTestGateway({ config: { simulator: { fixturesDir: fixtures } } as any });
});
after(async () => { await t.close(); rmSync(fixtures, { recursive: true, force: true }); });

const standardCost = (model: string, usage: Partial<IRUsage>): number =>
  costOf(t.gw.services.catalog.priceOf(t.gw.services.catalog.get(model)!, 'standard', Date.now()), { ...zeroUsage(), ...usage });

/** A Google GenAI client of a fresh managed organization; `headers` holds the last answer's. */
async function genaiOrg(): Promise<{ org: { orgId: string; key: string }; ai: any; headers: () => Headers | undefined }> {
  const org = await t.newOrg({ balance: 10_000_000 });
  let last: Headers | undefined;
  const recording = async (input: any, init?: any): Promise<Response> => { const r = await fetch(input, init); last = r.headers; return r; };
  const ai = new GoogleGenAI({
    apiKey: 'unused', apiVersion: 'v1',
    httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${org.key}` }, retryOptions: { attempts: 1 }, fetch: recording } as any,
  });
  return { org, ai, headers: () => last };
}

const onCloudA = (replay: string): Record<string, unknown> =>
  ({ model: GEMINI, provider: ['cloud_a'], start_within: 'now', include_cost: true, input: `hello ${sim({ replay })}` });

/** An Interactions stream's text and its interaction.completed. */
async function streamed(ai: any, body: Record<string, unknown>): Promise<{ text: string; completed: any }> {
  const s = await ai.interactions.create({ ...body, stream: true }, { maxRetries: 0 });
  let text = '';
  let completed: any;
  for await (const ev of s) {
    if (ev.event_type === 'step.delta' && ev.delta.type === 'text') text += ev.delta.text;
    if (ev.event_type === 'interaction.completed') completed = ev.interaction;
  }
  return { text, completed };
}

test('a Gemini stream whose finishReason chunk has no usageMetadata is charged the estimate, the same on every surface', async () => {
  const { org, ai } = await genaiOrg();
  const { text, completed } = await streamed(ai, onCloudA('gemini-vertex/no-usage.chunks.txt'));
  assert.equal(text, 'Hello from the fixture.');
  assert.equal(completed.status, 'completed');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.ok(charged > 0, `charged ${charged}`);
  assert.deepEqual([record.status, record.error_code, record.usage_estimated, record.cost_micro_usd], [200, null, true, charged]);
  assert.ok(record.input_tokens > 0 && record.output_tokens > 0, `${record.input_tokens} in / ${record.output_tokens} out`);
  assert.equal(completed.usage.cost.total_micro_usd, charged, 'include_cost: the usage frame says the charge');
  // A translated answer's usage is the gateway's to write: it says the estimate charged.
  assert.deepEqual([completed.usage.total_input_tokens, completed.usage.total_output_tokens], [record.input_tokens, record.output_tokens]);
  assert.equal(charged, standardCost(GEMINI, { inputTokens: record.input_tokens, outputTokens: record.output_tokens }));
});

test('the same Gemini stream with its usageMetadata is charged exactly what it reported', async () => {
  const { org, ai } = await genaiOrg();
  const { completed } = await streamed(ai, onCloudA('gemini-vertex/text.chunks.txt'));
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.equal(charged, standardCost(GEMINI, { inputTokens: 14, outputTokens: 6 }));
  assert.deepEqual([record.input_tokens, record.output_tokens, record.usage_estimated, record.cost_micro_usd], [14, 6, false, charged]);
  assert.equal(completed.usage.cost.total_micro_usd, charged);
});

test('a non-streamed Gemini body without usageMetadata: x-service-cost, usage.cost, the ledger and the record agree on the estimate', async () => {
  const { org, ai, headers } = await genaiOrg();
  const r = await ai.interactions.create(onCloudA('gemini-vertex/no-usage.json'), { maxRetries: 0 });
  assert.equal(r.status, 'completed');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.ok(charged > 0, `charged ${charged}`);
  assert.equal(Number(headers()!.get('x-service-cost')), charged);
  assert.equal(r.usage.cost.total_micro_usd, charged);
  assert.deepEqual([record.status, record.usage_estimated, record.cost_micro_usd], [200, true, charged]);
  // "Hello from the fixture." is 23 bytes: at most 23 output tokens.
  assert.deepEqual([r.usage.total_output_tokens, record.output_tokens], [23, 23]);
});

test('a Gemini body that reports zero tokens is charged zero, not an estimate', async () => {
  const { org, ai } = await genaiOrg();
  await ai.interactions.create(onCloudA('gemini-vertex/zero-usage.json'), { maxRetries: 0 });
  const record = await onlyRecord(t, org.key);
  assert.deepEqual([record.input_tokens, record.output_tokens, record.usage_estimated, record.cost_micro_usd], [0, 0, false, 0]);
  assert.equal(await settledOf(t, org.orgId), 0);
});

/** An OpenAI client of a fresh managed organization; `headers` holds the last answer's. */
async function openaiOrg(): Promise<{ org: { orgId: string; key: string }; client: OpenAI }> {
  const org = await t.newOrg({ balance: 10_000_000 });
  return { org, client: new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 }) };
}

// `seed` is Chat-native: the request rides vendor A's Chat endpoint (passthrough).
const chatBody = (replay: string): any =>
  ({ model: 'gpt-5.4-mini', seed: 1, start_within: 'now', messages: [{ role: 'user', content: `hello ${sim({ replay })}` }] });

test('a Chat stream whose server never sends the usage chunk completes and is charged the estimate, not zero', async () => {
  const { org, client } = await openaiOrg();
  const s = client.chat.completions.stream({ ...chatBody('openai-chat/no-usage.chunks.txt'), stream_options: { include_usage: true } });
  const done = await s.finalChatCompletion();
  assert.equal(done.choices[0]!.message.content, 'Hello from the fixture.');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.ok(charged > 0, `charged ${charged}`);
  assert.deepEqual([record.status, record.error_code, record.usage_estimated, record.cost_micro_usd], [200, null, true, charged]);
  assert.ok(record.output_tokens > 0);
});

test('a Chat stream without the usage chunk has no gateway error event after its [DONE]', async () => {
  const { org } = await openaiOrg();
  const res = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...chatBody('openai-chat/no-usage.chunks.txt'), stream: true }),
  });
  const text = await res.text();
  assert.ok(text.endsWith('data: [DONE]\n\n'), text.slice(-200));
  assert.ok(!text.includes('provider_error'), text.slice(-300));
});

test('a Chat server writing spaced JSON: its usage chunk is read and charged as reported; without it, no error after [DONE]', async () => {
  const { org, client } = await openaiOrg();
  const s = client.chat.completions.stream({ ...chatBody('openai-chat/spaced-usage.chunks.txt'), stream_options: { include_usage: true } });
  const done = await s.finalChatCompletion();
  assert.deepEqual([done.usage?.prompt_tokens, done.usage?.completion_tokens], [9, 5]);
  const record = await onlyRecord(t, org.key);
  assert.deepEqual([record.status, record.error_code, record.usage_estimated, record.input_tokens, record.output_tokens], [200, null, false, 9, 5]);
  const other = await openaiOrg();
  const res = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${other.org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...chatBody('openai-chat/spaced-no-usage.chunks.txt'), stream: true }),
  });
  const text = await res.text();
  assert.ok(text.endsWith('data: [DONE]\n\n') && !text.includes('provider_error'), text.slice(-300));
  const estimated = await onlyRecord(t, other.org.key);
  assert.deepEqual([estimated.error_code, estimated.usage_estimated], [null, true]);
});

test('a non-streamed Chat body without usage is charged the estimate: x-service-cost, usage.cost, the ledger and the record agree', async () => {
  const { org, client } = await openaiOrg();
  const { data, response } = await client.chat.completions.create(chatBody('openai-chat/no-usage.json')).withResponse();
  assert.equal(data.choices[0]!.message.content, 'Hello from the fixture.');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.ok(charged > 0, `charged ${charged}`);
  assert.equal(Number(response.headers.get('x-service-cost')), charged);
  assert.equal((data.usage as any).cost.total_micro_usd, charged);
  assert.deepEqual([record.status, record.usage_estimated, record.cost_micro_usd, record.output_tokens], [200, true, charged, 23]);
});

test('the same non-streamed Chat answer streamed by the provider (assembled) without usage is charged the estimate', async () => {
  const { org, client } = await openaiOrg();
  const { data, response } = await client.chat.completions.create(chatBody('openai-chat/no-usage.chunks.txt')).withResponse();
  assert.equal(data.choices[0]!.message.content, 'Hello from the fixture.');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.ok(charged > 0, `charged ${charged}`);
  assert.equal(Number(response.headers.get('x-service-cost')), charged);
  assert.deepEqual([record.status, record.usage_estimated, record.cost_micro_usd], [200, true, charged]);
});

test('a Responses passthrough whose response.completed has no usage: complete, its include_cost usage.cost is the estimate charged', async () => {
  const { org, client } = await openaiOrg();
  const s = client.responses.stream({ model: 'gpt-5.4-mini', start_within: 'now', include_cost: true, input: `hello ${sim({ replay: 'openai-responses/no-usage.chunks.txt' })}` } as any);
  const done: any = await s.finalResponse();
  assert.equal(done.output_text, 'Hello from the fixture.');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.ok(charged > 0, `charged ${charged}`);
  assert.deepEqual([record.status, record.error_code, record.usage_estimated, record.cost_micro_usd], [200, null, true, charged]);
  assert.equal(done.usage.cost.total_micro_usd, charged);
});

test('a Messages passthrough whose message_delta has no output count: charged the estimate on message_start\'s input, include_cost says it', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  const s = anthropic.messages.stream({
    model: 'claude-haiku-4-5', max_tokens: 100, start_within: 'now', include_cost: true,
    messages: [{ role: 'user', content: `hello ${sim({ replay: 'anthropic-messages/no-output-count.chunks.txt' })}` }],
  } as any);
  let cost: number | undefined;
  s.on('streamEvent', (ev: any) => { if (ev.type === 'message_delta') cost = ev.usage.cost?.total_micro_usd; });
  const done = await s.finalMessage();
  assert.equal((done.content[0] as any).text, 'Hello from the fixture.');
  const charged = await settledOf(t, org.orgId);
  const record = await onlyRecord(t, org.key);
  assert.deepEqual([record.status, record.error_code, record.usage_estimated, record.input_tokens, record.cost_micro_usd], [200, null, true, 14, charged]);
  assert.ok(record.output_tokens > 1, `${record.output_tokens} output tokens, not message_start's 1`);
  assert.equal(cost, charged);
});

test('what an answer without usage is charged does not depend on include_cost, and its text is output (the whole stream in one chunk)', async () => {
  const charge = async (includeCost: boolean): Promise<any> => {
    const { org, client } = await openaiOrg();
    const s = client.responses.stream({ model: 'gpt-5.4-mini', start_within: 'now', include_cost: includeCost, input: `hello ${sim({ replay: 'openai-responses/no-usage.chunks.txt' })}` } as any);
    await s.finalResponse();
    const record = await onlyRecord(t, org.key);
    assert.equal(record.cost_micro_usd, await settledOf(t, org.orgId));
    return record;
  };
  const [plain, withCost] = [await charge(false), await charge(true)];
  assert.ok(withCost.output_tokens > 0, `${withCost.output_tokens} output tokens for "Hello from the fixture."`);
  assert.deepEqual([withCost.input_tokens, withCost.output_tokens, withCost.cost_micro_usd], [plain.input_tokens, plain.output_tokens, plain.cost_micro_usd]);
  const messages = async (includeCost: boolean): Promise<any> => {
    const org = await t.newOrg({ balance: 10_000_000 });
    const anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
    await anthropic.messages.stream({
      model: 'claude-haiku-4-5', max_tokens: 100, start_within: 'now', include_cost: includeCost,
      messages: [{ role: 'user', content: `hello ${sim({ replay: 'anthropic-messages/no-output-count.chunks.txt' })}` }],
    } as any).finalMessage();
    return onlyRecord(t, org.key);
  };
  const [m1, m2] = [await messages(false), await messages(true)];
  assert.deepEqual([m2.output_tokens, m2.cost_micro_usd], [m1.output_tokens, m1.cost_micro_usd]);
});
