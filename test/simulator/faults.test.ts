// The flex queue, timing and injected faults, observed through real sockets and the official SDKs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { Simulator } from '../../lib/simulator/server.ts';
import { directive, eventually, start } from './helpers.ts';

let sim: Simulator;
let client: OpenAI;
before(async () => {
  sim = await start();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
after(() => sim.close());

function chat(content: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) {
  return fetch(`${sim.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: 'Bearer k' }, signal,
    body: JSON.stringify({ model: 'gpt-sim', messages: [{ role: 'user', content }], stream: true, ...extra }),
  });
}

test('flex start delay: headers wait for the tier to start (directive), standard is immediate', async () => {
  let t = Date.now();
  const res = await chat(`x ${directive({ flex_start_ms: 150 })}`, { service_tier: 'flex' });
  assert.ok(Date.now() - t >= 140, 'flex headers arrive after the start delay');
  await res.text();
  // A delay far above any scheduling noise on a loaded machine: standard must not wait for it.
  t = Date.now();
  await (await chat(`x ${directive({ flex_start_ms: 3_000 })}`)).text();
  assert.ok(Date.now() - t < 1_500, 'standard tier ignores flex_start_ms');
  t = Date.now();
  await (await chat(`x ${directive({ standard_start_ms: 80 })}`)).text();
  assert.ok(Date.now() - t >= 70);
});

test('flex options: seeded start delay in [min,max] and refuseRate', async () => {
  const slow = await start({ flex: { startMs: { min: 60, max: 90 } } });
  const refusing = await start({ flex: { refuseRate: 1 } });
  try {
    const c = new OpenAI({ apiKey: 'k', baseURL: `${slow.url}/v1`, maxRetries: 0 });
    const t = Date.now();
    const r = await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], service_tier: 'flex' });
    assert.ok(Date.now() - t >= 55);
    assert.equal(r.service_tier, 'flex');

    const rc = new OpenAI({ apiKey: 'k', baseURL: `${refusing.url}/v1`, maxRetries: 0 });
    await assert.rejects(rc.responses.create({ model: 'm', input: 'x', service_tier: 'flex' }),
      (err: unknown) => err instanceof OpenAI.RateLimitError && err.code === 'resource_unavailable');
    const std = await rc.responses.create({ model: 'm', input: 'x' });
    assert.equal(std.service_tier, 'default');
  } finally {
    await slow.close();
    await refusing.close();
  }
});

test('flex_refuse → vendor_a 429 resource_unavailable in the OpenAI shape, with Retry-After', async () => {
  const res = await chat(`x ${directive({ flex_refuse: true, retry_after_s: 3 })}`, { service_tier: 'flex' });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '3');
  const body = await res.json() as { error: Record<string, unknown> };
  assert.deepEqual(body.error.type, 'resource_unavailable');
  assert.deepEqual(body.error.code, 'resource_unavailable');
  assert.equal(body.error.param, null);
  assert.match(String(body.error.message), /^Resource Unavailable/);
});

test('fail + id: attempts fail in order, then succeed; the SDK retries honouring Retry-After', async () => {
  const d = directive({ fail: [429, 503], id: 'seq-1', retry_after_s: 0.01 });
  const first = await chat(d);
  assert.equal(first.status, 429);
  assert.equal(first.headers.get('retry-after'), '0.01');
  assert.equal((await first.json() as { error: { code: string } }).error.code, 'rate_limit_exceeded');
  const second = await chat(d);
  assert.equal(second.status, 503);
  await second.body?.cancel();
  assert.equal((await chat(d)).status, 200);

  // Counting is per id across routes: attempt 1 on Chat, attempt 2 on Responses, 3 succeeds.
  const before = sim.stats.requests;
  const retrying = new OpenAI({ apiKey: 'k', baseURL: `${sim.url}/v1`, maxRetries: 2 });
  const d2 = directive({ fail: [500, 429], id: 'seq-2', retry_after_s: 0.01 });
  assert.equal((await chat(d2)).status, 500);
  const r = await retrying.responses.create({ model: 'm', input: d2 });
  assert.equal(r.status, 'completed');
  assert.equal(sim.stats.requests - before, 3);
});

test('reset_after_tokens: the connection drops after N tokens (raw fetch and SDK)', async () => {
  const res = await chat(`x ${directive({ reset_after_tokens: 3 })}`);
  assert.equal(res.status, 200);
  let got = '';
  await assert.rejects(async () => { for await (const c of res.body!) got += Buffer.from(c).toString(); });
  assert.equal(got.split('"content":"').length - 1, 1 + 3, 'role chunk + 3 token chunks arrived');
  assert.ok(!got.includes('[DONE]'));

  const stream = await client.responses.create({ model: 'm', input: `x ${directive({ reset_after_tokens: 5 })}`, stream: true });
  let deltas = 0;
  await assert.rejects(async () => { for await (const ev of stream) if (ev.type === 'response.output_text.delta') deltas++; });
  assert.equal(deltas, 5);
  assert.equal(sim.stats.aborted, 0, 'a deliberate reset is not a client abort');
});

test('error_after_tokens: the format\'s own in-stream error, never a clean end', async () => {
  const stream = await client.responses.create({ model: 'm', input: `x ${directive({ error_after_tokens: 2 })}`, stream: true });
  let deltas = 0;
  await assert.rejects(async () => { for await (const ev of stream) if (ev.type === 'response.output_text.delta') deltas++; },
    (err: unknown) => err instanceof OpenAI.APIError);
  assert.equal(deltas, 2);
});

test('aborted counter: client gone during the flex delay, and mid-stream while paced', async () => {
  const base = sim.stats.aborted;
  const ac = new AbortController();
  const pending = chat(`x ${directive({ flex_start_ms: 2000 })}`, { service_tier: 'flex' }, ac.signal).catch(() => 'aborted');
  setTimeout(() => ac.abort(), 30);
  assert.equal(await pending, 'aborted');
  await eventually(() => sim.stats.aborted === base + 1);

  const ac2 = new AbortController();
  const res = await chat(`x ${directive({ tokens_per_s: 100, output_tokens: 200 })}`, {}, ac2.signal);
  const reader = res.body!.getReader();
  await reader.read();
  ac2.abort();
  await eventually(() => sim.stats.aborted === base + 2);
  // A completed request is not counted.
  await (await chat('x')).text();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(sim.stats.aborted, base + 2);
});

test('tokens_per_s paces output; stats count requests per route', async () => {
  const t = Date.now();
  const text = await (await chat(`x ${directive({ tokens_per_s: 200, output_tokens: 20 })}`)).text();
  const elapsed = Date.now() - t;
  assert.ok(elapsed >= 90 && elapsed < 1000, `20 tokens at 200/s took ${elapsed} ms`);
  assert.ok(text.endsWith('data: [DONE]\n\n'));
  assert.ok((sim.stats.byRoute.vendor_a ?? 0) >= 10);
});

test('deterministic from the seed: same seed + prompt → same words; another seed differs', async () => {
  const other = await start({ seed: 7 });
  const same = await start({ seed: 1 });
  try {
    const ask = async (s: Simulator) => {
      const c = new OpenAI({ apiKey: 'k', baseURL: `${s.url}/v1`, maxRetries: 0 });
      return (await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'seeded?' }] })).choices[0]!.message.content;
    };
    const a = await ask(sim);
    assert.equal(await ask(same), a);
    assert.notEqual(await ask(other), a);
  } finally {
    await other.close();
    await same.close();
  }
});

test('bad input never crashes: invalid directive JSON → 400; unknown path → 404', async () => {
  const bad = await chat('x #sim{"fail": [429');
  assert.equal(bad.status, 400);
  const worse = await chat('x #sim{"output_tokens": "many"}');
  assert.equal(worse.status, 400);
  assert.equal((await fetch(`${sim.url}/v2/nothing`, { method: 'POST' })).status, 404);
  assert.equal((await fetch(`${sim.url}/v1/responses`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: '[]' })).status, 400);
});
