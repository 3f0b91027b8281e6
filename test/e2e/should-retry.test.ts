// A refusal whose Retry-After no request should sleep through (the daily ceiling, until UTC
// midnight) says x-should-retry: false, which the OpenAI and Anthropic SDKs obey: the Anthropic SDK
// would otherwise sleep the whole Retry-After, hours, before each of its retries. A short wait
// (the concurrency limit's second) stays the SDKs' to retry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(() => t.close());

const ask = (key: string) => fetch(`${t.url}/v1/messages`, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 20, start_within: 'now', messages: [{ role: 'user', content: 'hi' }] }),
});

test('a daily-ceiling refusal says x-should-retry: false, and the Anthropic SDK raises at once instead of sleeping until midnight', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 0 });
  const raw = await ask(org.key);
  assert.equal(raw.status, 429);
  assert.ok(Number(raw.headers.get('retry-after')) > 60, 'the wait is until midnight');
  assert.equal(raw.headers.get('x-should-retry'), 'false');
  await raw.body?.cancel();

  let sent = 0;
  const client = new Anthropic({
    authToken: org.key, apiKey: null, baseURL: t.url,
    fetch: (url, init) => { sent++; return fetch(url, init); },
  });
  await assert.rejects(
    client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 20, start_within: 'now', messages: [{ role: 'user', content: 'hi' }] } as any),
    (err: any) => err.status === 429 && err.error?.error?.code === 'spend_velocity_exceeded',
  );
  assert.equal(sent, 1, 'not retried');
});

test('a short wait (the concurrency limit) keeps Retry-After for the SDK to retry on', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { concurrency: 0 });
  const raw = await ask(org.key);
  assert.equal(raw.status, 429);
  assert.equal(raw.headers.get('retry-after'), '1');
  assert.equal(raw.headers.get('x-should-retry'), null);
  await raw.body?.cancel();
});
