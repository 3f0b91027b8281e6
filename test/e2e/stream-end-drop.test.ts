// A provider whose connection drops after its stream's final event (the one carrying the usage)
// and before the HTTP end of its body (undici: "other side closed"): nothing of the answer was cut.
// The caller's stream ends as the provider would have ended it (no error event; Chat's
// `data: [DONE]`), and the request is charged the usage the provider reported, not the estimate
// of a broken stream. A stream that drops before its final event is still broken.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { onlyRecord, settledOf } from '../helpers/records.ts';
import { vendorA } from '../../lib/providers/openai.ts';
import { vendorC } from '../../lib/providers/anthropic.ts';
import { costOf } from '../../lib/catalog/catalog.ts';
import { zeroUsage, type IRUsage } from '../../lib/ir.ts';

let t: TestGateway;
let upstream: Server;
/** What the fake provider sends (whole), before it destroys the socket; and the paths it was asked. */
let body = '';
const paths: string[] = [];

before(async () => {
  t = await startTestGateway();
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      paths.push(req.url!);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Once the bytes are on the wire the socket goes away: no chunked terminator follows.
      res.write(body, () => res.socket!.destroy());
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const adapters = t.gw.services.adapters as Record<string, unknown>;
  adapters.vendor_a = vendorA(base);
  adapters.vendor_c = vendorC(base, 4096);
});
after(async () => { upstream.closeAllConnections(); upstream.close(); await t.close(); });

const post = (key: string, path: string, payload: unknown): Promise<Response> => fetch(t.url + path, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(payload),
});

const standardCost = (model: string, usage: Partial<IRUsage>): number =>
  costOf(t.gw.services.catalog.priceOf(t.gw.services.catalog.get(model)!, 'standard', Date.now()), { ...zeroUsage(), ...usage });

// A coding agent's instructions, echoed by the terminal event as the real API does: ≈ 48 KB, which
// as the bytes of a broken stream would be estimated at hundreds of output tokens.
const instructions = 'You are a coding agent. '.repeat(2_000);
const responsesStream = (): string => {
  const usage = '"usage":{"input_tokens":12000,"output_tokens":12,"total_tokens":12012,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}';
  const response = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5.4-mini","instructions":${JSON.stringify(instructions)},`
    + `"output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}],${usage}}`;
  return 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5.4-mini","output":[]}}\n\n'
    + 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"ok"}\n\n'
    + `event: response.completed\ndata: {"type":"response.completed","sequence_number":2,"response":${response}}\n\n`;
};

const chunk = (o: object): string => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5.4-mini', ...o })}\n\n`;
const chatStream = chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hello' }, finish_reason: null }] })
  + chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })
  + chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } });
// Chat-native parameters (seed) keep a Chat caller on vendor A's Chat wire: a passthrough.
const chatRequest = { model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, seed: 1, start_within: 'now' };

test('managed Responses passthrough dropped after response.completed: the SDK stream ends cleanly, charged the reported usage', async () => {
  body = responsesStream();
  const org = await t.newOrg({ balance: 50_000_000 });
  const client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const stream = await client.responses.create({ model: 'gpt-5.4-mini', input: 'hi', instructions, stream: true, start_within: 'now' } as never) as any;
  const types: string[] = [];
  for await (const ev of stream) types.push(ev.type);
  assert.deepEqual(types, ['response.created', 'response.output_text.delta', 'response.completed']);
  const record = await onlyRecord(t, org.key);
  const reported = standardCost('gpt-5.4-mini', { inputTokens: 12_000, outputTokens: 12 });
  assert.deepEqual(
    [record.status, record.error_code, record.input_tokens, record.output_tokens, record.usage_estimated, record.cost_micro_usd],
    [200, null, 12_000, 12, false, reported],
  );
  assert.equal(await settledOf(t, org.orgId), reported);
});

test('Chat passthrough dropped after the usage chunk, before [DONE]: the caller still gets its [DONE], no error, the reported usage', async () => {
  body = chatStream;
  const org = await t.newOrg({ balance: 50_000_000 });
  const client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  paths.length = 0;
  const stream = await client.chat.completions.create({ ...chatRequest, stream_options: { include_usage: true } } as never) as any;
  let text = '';
  let usage: any;
  for await (const c of stream) { text += c.choices[0]?.delta?.content ?? ''; usage ??= c.usage ?? undefined; }
  assert.deepEqual(paths, ['/v1/chat/completions'], 'a passthrough on the Chat wire');
  assert.equal(text, 'hello');
  assert.equal(usage.completion_tokens, 3);
  const record = await onlyRecord(t, org.key);
  assert.deepEqual([record.status, record.error_code, record.output_tokens, record.usage_estimated], [200, null, 3, false]);
  assert.equal(record.cost_micro_usd, standardCost('gpt-5.4-mini', { inputTokens: 5, outputTokens: 3 }));
  assert.equal(await settledOf(t, org.orgId), record.cost_micro_usd);

  // As bytes: the stream ends with one [DONE], whether the usage chunk went out (include_usage) or
  // was dropped for a caller that did not ask for it, and none is added after the provider's own.
  for (const [sent, includeUsage] of [[chatStream, true], [chatStream, false], [`${chatStream}data: [DONE]\n\n`, false]] as const) {
    body = sent;
    const own = await t.newOrg({ ownKeys: ['vendor_a'] });
    const out = await (await post(own.key, '/v1/chat/completions', { ...chatRequest, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) })).text();
    assert.ok(out.endsWith('}\n\ndata: [DONE]\n\n'), `ends with [DONE]: ${JSON.stringify(out.slice(-80))}`);
    assert.equal(out.split('[DONE]').length, 2, 'one [DONE]');
    assert.equal(out.includes('"usage":{'), includeUsage);
    assert.ok(!out.includes('error'), out);
  }
});

test('translated answers dropped after their final event are complete: no provider_error, the reported usage', async () => {
  // Vendor A's Responses stream to a Messages caller: the terminal event was decoded.
  body = responsesStream();
  let org = await t.newOrg({ balance: 50_000_000 });
  const anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  const message = await anthropic.messages.stream({ model: 'gpt-5.4-mini', max_tokens: 50, start_within: 'now', messages: [{ role: 'user', content: 'hi' }] } as never).finalMessage();
  assert.equal((message.content[0] as any).text, 'ok');
  let record = await onlyRecord(t, org.key);
  assert.deepEqual([record.status, record.error_code, record.output_tokens, record.usage_estimated], [200, null, 12, false]);

  // Vendor C's Messages stream to a Chat caller, dropped after message_delta, before message_stop:
  // its decoder knows how the answer ended, so the caller gets its finish, usage and [DONE].
  body = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":7,"output_tokens":1}}}\n\n'
    + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}\n\n'
    + 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}\n\n';
  org = await t.newOrg({ balance: 50_000_000 });
  const client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, start_within: 'now' } as never) as any;
  let finish: string | undefined;
  let usage: any;
  for await (const c of stream) { finish ??= c.choices[0]?.finish_reason ?? undefined; usage ??= c.usage ?? undefined; }
  assert.equal(finish, 'stop');
  assert.equal(usage.completion_tokens, 4);
  record = await onlyRecord(t, org.key);
  assert.deepEqual([record.status, record.error_code, record.input_tokens, record.output_tokens, record.usage_estimated], [200, null, 7, 4, false]);
  assert.equal(record.cost_micro_usd, standardCost('claude-haiku-4-5', { inputTokens: 7, outputTokens: 4 }));
});

test('a stream dropped before its final event is still broken: the error event, the estimate, provider_error', async () => {
  const full = responsesStream();
  body = full.slice(0, full.indexOf('event: response.completed'));
  const org = await t.newOrg({ balance: 50_000_000 });
  const client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const stream = await client.responses.create({ model: 'gpt-5.4-mini', input: 'hi', stream: true, start_within: 'now' } as never) as any;
  await assert.rejects(async () => { for await (const _ of stream); }, /The provider stream failed/);
  const record = await onlyRecord(t, org.key);
  assert.deepEqual([record.error_code, record.usage_estimated], ['provider_error', true]);
});
