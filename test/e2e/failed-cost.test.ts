// A non-streamed answer whose provider stream broke after commit is a 502 provider_error, charged
// like the same stream broken in front of a streaming caller (the input the provider reported, the
// output its bytes so far hold at most), and its error answer says the charge in x-service-cost,
// as every non-streamed answer does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let org: { orgId: string; key: string };
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  t = await startTestGateway();
  org = await t.newOrg({ balance: 10_000_000 });
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

/** Claude on cloud_b (Bedrock, called streamed: its message_start reports the input), reset after 25 of 60 tokens. */
const onCloudB = { model: 'claude-haiku-4-5', start_within: 'now', provider: ['cloud_b'], max_tokens: 1000 };
const BROKEN = `count ${sim({ output_tokens: 60, reset_after_tokens: 25 })}`;

async function records(): Promise<Map<string | null, any>> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  await t.gw.services.usage.flush();
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, { headers: { authorization: `Bearer ${org.key}` } });
  return new Map(((await res.json()) as any).data.map((r: any) => [r.id as string, r]));
}

/** The SDK's 502 provider_error, with the answer's request id and x-service-cost. */
async function failed(call: Promise<unknown>): Promise<{ id: string | null; cost: string | null }> {
  try {
    await call;
  } catch (err: any) {
    assert.equal(err.status, 502, err.message);
    return { id: err.headers.get('x-request-id'), cost: err.headers.get('x-service-cost') };
  }
  throw new Error('the request did not fail');
}

/** A streamed request's id; the stream ends with its format's error event. */
async function streamed(call: Promise<{ response: Response; data: AsyncIterable<unknown> }>): Promise<string | null> {
  const { response, data } = await call;
  await assert.rejects(async () => { for await (const _ of data); });
  return response.headers.get('x-request-id');
}

const charged = (r: any) => [r.status, r.error_code, r.input_tokens, r.output_tokens, r.cost_micro_usd];

test('Messages (assembled from the provider\'s own stream): the 502 carries its cost, charged as the broken stream is', async () => {
  const plain = await failed(anthropic.messages.create({ ...onCloudB, messages: [{ role: 'user', content: BROKEN }] } as any));
  const stream = await streamed(anthropic.messages.create({ ...onCloudB, stream: true, messages: [{ role: 'user', content: BROKEN }] } as any).withResponse() as any);
  const recs = await records();
  const [p, s] = [recs.get(plain.id), recs.get(stream)];
  assert.equal(plain.cost, String(p.cost_micro_usd), 'x-service-cost on the error answer');
  assert.ok(p.output_tokens >= 25, `the 25 generated tokens are charged (recorded ${p.output_tokens})`);
  assert.deepEqual(charged(p), [502, 'provider_error', s.input_tokens, s.output_tokens, s.cost_micro_usd]);
});

test('Chat (translated from Messages): the 502 carries its cost, charged as the broken stream is', async () => {
  const plain = await failed(openai.chat.completions.create({ ...onCloudB, messages: [{ role: 'user', content: BROKEN }] } as any));
  const stream = await streamed(openai.chat.completions.create({ ...onCloudB, stream: true, messages: [{ role: 'user', content: BROKEN }] } as any).withResponse() as any);
  const recs = await records();
  const [p, s] = [recs.get(plain.id), recs.get(stream)];
  assert.equal(plain.cost, String(p.cost_micro_usd), 'x-service-cost on the error answer');
  assert.deepEqual(charged(p), [502, 'provider_error', s.input_tokens, s.output_tokens, s.cost_micro_usd]);
});
