// A model refusal and a provider's content filter are two outcomes every caller's SDK tells apart.
// The simulator replays vendor A's refusal (a Responses `refusal` content part) and cloud A's
// answer cut by finishReason SAFETY; each caller format must receive its own shape of each.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let genai: any;

before(async () => {
  t = await startTestGateway({ config: { simulator: { fixturesDir: OWN_FIXTURES } } });
  const key = (await t.newOrg({ balance: 100_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${key}` } } });
});
after(() => t.close());

const REFUSAL = "I'm sorry, I can't help with that.";
const refusalStream = sim({ replay: 'openai-responses/refusal.chunks.txt' });
const refusalBody = sim({ replay: 'openai-responses/refusal.json' });
const safety = sim({ replay: 'gemini-vertex/safety.chunks.txt' });
const onVendorA = { model: 'gpt-5.4-mini', start_within: 'now', provider: ['vendor_a'] };
const onCloudA = { model: 'gemini-3.5-flash', start_within: 'now', provider: ['cloud_a'] };
const schema = {
  type: 'json_schema',
  json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } },
} as const;
const chat = (content: string) => ({ ...onVendorA, response_format: schema, messages: [{ role: 'user', content }] }) as any;

test('Chat over vendor A: a refusal is message.refusal with finish_reason stop, and the parse helpers return it', async () => {
  const plain = await openai.chat.completions.create(chat(refusalBody));
  assert.deepEqual(plain.choices[0]!.message, { role: 'assistant', content: null, refusal: REFUSAL });
  assert.equal(plain.choices[0]!.finish_reason, 'stop');
  const parsed = await openai.chat.completions.parse(chat(refusalBody));
  assert.equal(parsed.choices[0]!.message.refusal, REFUSAL);
  assert.equal(parsed.choices[0]!.message.parsed, null);
  const runner = openai.chat.completions.stream(chat(refusalStream));
  let deltas = '';
  runner.on('refusal.delta', (e) => { deltas += e.delta; });
  const streamed = await runner.finalChatCompletion();
  assert.equal(streamed.choices[0]!.message.refusal, REFUSAL);
  assert.equal(streamed.choices[0]!.message.content || null, null, 'no refusal text in content');
  assert.equal(streamed.choices[0]!.finish_reason, 'stop');
  assert.equal(deltas, REFUSAL);
});

test('Responses over cloud A: finishReason SAFETY is response.incomplete with incomplete_details content_filter', async () => {
  const stream: any = await openai.responses.create({ ...onCloudA, input: safety, stream: true } as any);
  let last: any;
  let text = '';
  for await (const ev of stream) {
    last = ev;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  assert.equal(last.type, 'response.incomplete');
  assert.equal(last.response.status, 'incomplete');
  assert.deepEqual(last.response.incomplete_details, { reason: 'content_filter' });
  assert.equal(text, 'Here is how to');
  const body: any = await openai.responses.create({ ...onCloudA, input: safety } as any);
  assert.equal(body.status, 'incomplete');
  assert.deepEqual(body.incomplete_details, { reason: 'content_filter' });
});

test('Chat, Messages and Interactions over cloud A: SAFETY is content_filter / stop_reason refusal / status incomplete', async () => {
  const cc = await openai.chat.completions.stream({ ...onCloudA, messages: [{ role: 'user', content: safety }] } as any).finalChatCompletion();
  assert.equal(cc.choices[0]!.finish_reason, 'content_filter');
  assert.equal(cc.choices[0]!.message.refusal ?? null, null, 'a filter is no refusal text');
  const m: any = await anthropic.messages.create({ ...onCloudA, max_tokens: 100, messages: [{ role: 'user', content: safety }] } as any);
  assert.equal(m.stop_reason, 'refusal');
  const i = await genai.interactions.create({ ...onCloudA, input: safety }, { maxRetries: 0 });
  assert.equal(i.status, 'incomplete');
});
