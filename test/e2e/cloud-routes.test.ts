// The cloud routes as a caller sees them through the official SDKs, with cloud_a and cloud_b
// pointed at fake providers (as broken-ends.test.ts does) that answer the way Vertex AI and Bedrock
// may: a streamed tool call whose argument paths name __proto__, a Bedrock exception as a 200
// stream's first message, an event-stream prelude that announces 4 GiB, and an organization key
// for another region than the configured endpoint's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { cloudA } from '../../lib/providers/vertex.ts';
import { cloudB } from '../../lib/providers/bedrock.ts';
import { checkSigV4 } from '../../lib/simulator/sigv4.ts';
import type { RouteAdapter } from '../../lib/providers/types.ts';

let t: TestGateway;
let org: { key: string; orgId: string };
let openai: OpenAI;
let anthropic: Anthropic;

/** A fake provider: each request is answered by the handler the running test set. */
interface Fake { url: string; server: Server; calls: number; handler: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void }
let bedrock: Fake;
let vertex: Fake;

async function fake(): Promise<Fake> {
  const f = { calls: 0, handler: () => {} } as unknown as Fake;
  f.server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => { f.calls++; f.handler(req, Buffer.concat(parts), res); });
  });
  await new Promise<void>((r) => f.server.listen(0, '127.0.0.1', r));
  f.url = `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`;
  return f;
}

before(async () => {
  t = await startTestGateway();
  org = await t.newOrg({ balance: 100_000_000 });
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  [bedrock, vertex] = await Promise.all([fake(), fake()]);
});
after(async () => {
  await t.close();
  bedrock.server.closeAllConnections();
  vertex.server.closeAllConnections();
  await Promise.all([bedrock, vertex].map((f) => new Promise((r) => f.server.close(r))));
});

/** Runs `fn` with the gateway's adapter for `route` replaced. */
async function withAdapter<T>(route: 'cloud_a' | 'cloud_b', adapter: RouteAdapter, fn: () => Promise<T>): Promise<T> {
  const adapters = t.gw.services.adapters as Record<string, RouteAdapter>;
  const real = adapters[route]!;
  adapters[route] = adapter;
  try { return await fn(); } finally { adapters[route] = real; }
}

// Bedrock's event stream (wire-formats.md 6.1).
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });
function chunk(event: object): Buffer {
  const payload = JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') });
  return Buffer.from(codec.encode({ headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') }, body: fromUtf8(payload) }));
}
function exception(name: string, message: string): Buffer {
  return Buffer.from(codec.encode({ headers: { ':exception-type': str(name), ':content-type': str('application/json'), ':message-type': str('exception') }, body: fromUtf8(JSON.stringify({ message })) }));
}
const messageStart = () => chunk({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } });
const answer = (text: string) => Buffer.concat([
  messageStart(),
  chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
  chunk({ type: 'content_block_stop', index: 0 }),
  chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }),
  chunk({ type: 'message_stop' }),
]);
const EVENT_STREAM = { 'content-type': 'application/vnd.amazon.eventstream' };

/** Bedrock answers 200 and streams the `bodies` in turn, one per call (the last one for any after). */
function bedrockAnswers(...bodies: Buffer[]): void {
  bedrock.calls = 0;
  bedrock.handler = (_req, _body, res) => {
    res.writeHead(200, EVENT_STREAM);
    res.end(bodies[Math.min(bedrock.calls, bodies.length) - 1]);
  };
}

const onBedrock = <T>(fn: () => Promise<T>): Promise<T> => withAdapter('cloud_b', cloudB(bedrock.url, 4096), fn);
const messagesBody = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }],
  start_within: 'now', provider: ['cloud_b'], retry: { count: 2, jitter: false }, ...extra,
});

test('cloud_a: a streamed call whose argument paths name __proto__ and constructor reaches the caller as the model sent it, and the process is unchanged', async () => {
  const args = { query: 'weather', __proto__: { start_within: 'now', isAdmin: true }, constructor: 'Point', list: [{ prototype: 1 }] };
  const sse = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  vertex.handler = (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'lookup', willContinue: true } }] } }] }));
    res.write(sse({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { partialArgs: [
      { jsonPath: '$.query', stringValue: 'wea', willContinue: true }, { jsonPath: '$.query', stringValue: 'ther' },
      { jsonPath: '$.__proto__.start_within', stringValue: 'now' }, { jsonPath: "$['__proto__'].isAdmin", boolValue: true },
      { jsonPath: '$.constructor', stringValue: 'Point' }, { jsonPath: '$.list[0].prototype', numberValue: 1 },
    ], willContinue: true } }] } }] }));
    res.end(sse({ candidates: [{ content: { role: 'model', parts: [{ functionCall: {} }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 } }));
  };
  const expected = JSON.stringify(JSON.parse('{"query":"weather","__proto__":{"start_within":"now","isAdmin":true},"constructor":"Point","list":[{"prototype":1}]}'));
  try {
    await withAdapter('cloud_a', cloudA(vertex.url, { managed: t.gw.services.config.managed.cloud_a }), async () => {
      const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];
      const stream = await openai.chat.completions.create({
        model: 'gemini-3.5-flash', stream: true, messages: [{ role: 'user', content: 'call lookup' }], tools, start_within: 'now', provider: ['cloud_a'],
      } as any) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
      let chatArgs = '';
      for await (const c of stream) chatArgs += c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      assert.equal(chatArgs, expected, 'a Chat caller gets the arguments as sent');

      const messages = anthropic.messages.stream({
        model: 'gemini-3.5-flash', max_tokens: 50, messages: [{ role: 'user', content: 'call lookup' }],
        tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { query: { type: 'string' } } } }], start_within: 'now', provider: ['cloud_a'],
      } as any);
      const final = await messages.finalMessage();
      const use = final.content.find((b) => b.type === 'tool_use');
      assert.equal(JSON.stringify(use && 'input' in use ? use.input : undefined), expected, 'a Messages caller gets the same input');
    });
    assert.equal(({} as any).start_within, undefined, 'Object.prototype was not written');
    assert.equal(({} as any).isAdmin, undefined);
    // The next request still runs as the spec says: one without start_within is refused for it.
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json() as any).error.code, 'missing_start_within');
  } finally {
    delete (Object.prototype as any).start_within;
    delete (Object.prototype as any).isAdmin;
  }
});

test('cloud_b: a throttlingException as the first message is retried, streamed or not, in Messages and Chat', async () => {
  await onBedrock(async () => {
    bedrockAnswers(exception('throttlingException', 'Too many requests, please wait before trying again.'), answer('hello'));
    const { data: stream, response } = await anthropic.messages.create(messagesBody({ stream: true }) as any).withResponse();
    let text = '';
    for await (const ev of stream as unknown as AsyncIterable<Anthropic.RawMessageStreamEvent>) {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    assert.equal(text, 'hello');
    assert.equal(response.headers.get('x-service-retries'), '1');
    assert.equal(bedrock.calls, 2);

    bedrockAnswers(exception('throttlingException', 'Too many requests.'), answer('again'));
    const { data: message, response: once } = await anthropic.messages.create(messagesBody() as any).withResponse();
    assert.deepEqual((message as Anthropic.Message).content, [{ type: 'text', text: 'again' }]);
    assert.equal(once.headers.get('x-service-retries'), '1');

    bedrockAnswers(exception('modelStreamErrorException', 'The stream broke.'), answer('chat'));
    const chat = await openai.chat.completions.create({
      model: 'claude-haiku-4-5', stream: true, messages: [{ role: 'user', content: 'hi' }], start_within: 'now', provider: ['cloud_b'], retry: { count: 2, jitter: false },
    } as any) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    let chatText = '';
    for await (const c of chat) chatText += c.choices[0]?.delta.content ?? '';
    assert.equal(chatText, 'chat');
    assert.equal(bedrock.calls, 2);
  });
});

test('cloud_b: a serviceUnavailableException as the first message falls back to the next route', async () => {
  await onBedrock(async () => {
    bedrockAnswers(exception('serviceUnavailableException', 'Bedrock is unable to process your request.'));
    const { data: stream, response } = await anthropic.messages.create(messagesBody({ stream: true, provider: ['cloud_b', 'vendor_c'], retry: undefined }) as any).withResponse();
    let text = '';
    for await (const ev of stream as unknown as AsyncIterable<Anthropic.RawMessageStreamEvent>) {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    assert.ok(text.length > 0, 'the simulator behind vendor_c answered');
    assert.equal(response.headers.get('x-service-served-provider'), 'vendor_c');
    assert.equal(response.headers.get('x-service-routing-reason'), 'fallback');
    assert.equal(bedrock.calls, 1);
  });
});

test('cloud_b: a validationException as the first message is the provider\'s refusal (400, not retried); one that repeats past the retries is a 5xx', async () => {
  await onBedrock(async () => {
    bedrockAnswers(exception('validationException', 'messages: text content blocks must be non-empty'));
    await assert.rejects(anthropic.messages.create(messagesBody({ stream: true }) as any), (err: any) => {
      assert.equal(err.status, 400);
      assert.match(String(err.message), /validationException/);
      return true;
    });
    assert.equal(bedrock.calls, 1, 'a request the provider refused is not sent again');

    bedrockAnswers(exception('throttlingException', 'Too many requests.'));
    await assert.rejects(anthropic.messages.create(messagesBody({ stream: true, retry: { count: 1, jitter: false } }) as any), (err: any) => {
      assert.ok(err.status >= 500, `status ${err.status}`);
      assert.equal(err.headers?.get?.('x-service-retries') ?? err.headers?.['x-service-retries'], '1');
      return true;
    });
    assert.equal(bedrock.calls, 2);
  });
});

test('cloud_b: an exception after the first event is still the stream\'s error event (nothing retried once committed)', async () => {
  await onBedrock(async () => {
    bedrockAnswers(Buffer.concat([messageStart(), exception('internalServerException', 'oops')]));
    const stream = await anthropic.messages.create(messagesBody({ stream: true }) as any) as unknown as AsyncIterable<Anthropic.RawMessageStreamEvent>;
    const seen: string[] = [];
    await assert.rejects((async () => { for await (const ev of stream) seen.push(ev.type); })(), /internalServerException/);
    assert.deepEqual(seen, ['message_start']);
    assert.equal(bedrock.calls, 1);
  });
});

/** An event-stream prelude that announces `total` bytes, then nothing of them. */
function prelude(total: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt32BE(total, 0);
  return b;
}

/** Bedrock streams `head`, a prelude announcing 4 GiB, then 1 MiB writes until `maxMb` or the
 *  gateway hangs up (without ending the body: the gateway alone can stop it). */
function bedrockAnnouncesHuge(head: Buffer, maxMb: number, state: { sentMb: number; aborted: boolean }, then?: Buffer): void {
  bedrock.calls = 0;
  bedrock.handler = (_req, _body, res) => {
    res.writeHead(200, EVENT_STREAM);
    if (then && bedrock.calls > 1) { res.end(then); return; }
    res.on('close', () => { if (!res.writableFinished) state.aborted = true; });
    const mb = Buffer.alloc(1024 * 1024, 0x41);
    const pump = (): void => {
      while (!state.aborted && state.sentMb < maxMb) { state.sentMb++; if (!res.write(mb)) { res.once('drain', pump); return; } }
    };
    // The head (the first event) alone first, so that the gateway commits on it.
    if (head.length) res.write(head);
    setTimeout(() => { res.write(prelude(0xFFFFFFF0)); pump(); }, head.length ? 100 : 0);
  };
}

test('cloud_b: a first message announcing more than 32 MiB fails the attempt at once (upstream aborted) and the retry answers', { timeout: 20_000 }, async () => {
  await onBedrock(async () => {
    const state = { sentMb: 0, aborted: false };
    bedrockAnnouncesHuge(Buffer.alloc(0), 64, state, answer('recovered'));
    const started = Date.now();
    const { data: message, response } = await anthropic.messages.create(messagesBody() as any).withResponse();
    assert.deepEqual((message as Anthropic.Message).content, [{ type: 'text', text: 'recovered' }]);
    assert.equal(response.headers.get('x-service-retries'), '1');
    assert.ok(Date.now() - started < 5_000, 'not held until an idle timeout');
    await waitUntil(() => state.aborted, 'the first upstream aborted');
    assert.ok(state.sentMb < 32, `${state.sentMb} MiB read before the gateway hung up`);
  });
});

test('cloud_b: after commit, a message announcing 4 GiB ends the caller\'s stream with an error and aborts the upstream (it was buffered without bound)', { timeout: 30_000 }, async () => {
  await onBedrock(async () => {
    const state = { sentMb: 0, aborted: false };
    bedrockAnnouncesHuge(messageStart(), 96, state);
    const stream = await anthropic.messages.create(messagesBody({ stream: true }) as any) as unknown as AsyncIterable<Anthropic.RawMessageStreamEvent>;
    const seen: string[] = [];
    await assert.rejects((async () => { for await (const ev of stream) seen.push(ev.type); })(), /announced 4294967280 bytes/);
    assert.deepEqual(seen, ['message_start']);
    await waitUntil(() => state.aborted, 'the upstream aborted');
    assert.ok(state.sentMb < 32, `${state.sentMb} MiB read before the gateway hung up`);
  });
});

async function waitUntil(cond: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs `fn` with every upstream connection of the gateway going to `target` instead of the origin
 *  a request names (which are public cloud hosts here): the origins asked for are returned. */
async function redirectingPools(target: string, asked: string[], fn: () => Promise<void>): Promise<void> {
  const pools = t.gw.services.pools as unknown as { get: (route: string, origin: string) => unknown };
  const get = pools.get;
  pools.get = function (route: string, origin: string) { asked.push(origin); return get.call(this, route, target); };
  try { await fn(); } finally { pools.get = get; }
}

test('cloud_b on the public endpoint: an organization key for eu-central-1 is sent to that region\'s host, which accepts its signature', async () => {
  const keyOrg = await t.newOrg({ balance: 10_000_000 });
  const key = { access_key_id: 'AKIDORGEU0001', secret_access_key: 'orgSecretKeyForTheEuRegion0123456789abcd' };
  t.secrets.add(key.secret_access_key);
  assert.equal((await t.admin('PUT', `/admin/v1/orgs/${keyOrg.orgId}/provider-keys/cloud_b`, { key, region: 'eu-central-1' })).status < 300, true);
  const seen: Array<{ host?: string; scope?: string; refused?: string }> = [];
  bedrock.calls = 0;
  bedrock.handler = async (req, body, res) => {
    // As AWS: the signature must verify, and be scoped to the region of the host it was sent to.
    const host = req.headers.host ?? '';
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String(req.headers.authorization))?.[1];
    const refused = await checkSigV4({ method: req.method!, path: req.url!.split('?')[0]!, query: new URLSearchParams(), headers: req.headers, body }, { [key.access_key_id]: key.secret_access_key })
      ?? (host === `bedrock-runtime.${scope}.amazonaws.com` ? undefined : `Credential should be scoped to a valid region, not '${scope}'.`);
    seen.push({ host, scope, refused });
    if (refused) {
      res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException' });
      res.end(JSON.stringify({ message: refused }));
      return;
    }
    res.writeHead(200, EVENT_STREAM);
    res.end(answer('from eu-central-1'));
  };
  const client = new Anthropic({ authToken: keyOrg.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  const asked: string[] = [];
  await redirectingPools(bedrock.url, asked, () => withAdapter('cloud_b', cloudB('https://bedrock-runtime.us-east-1.amazonaws.com', 4096), async () => {
    const message = await client.messages.create(messagesBody({ retry: undefined }) as any) as Anthropic.Message;
    assert.deepEqual(message.content, [{ type: 'text', text: 'from eu-central-1' }]);
  }));
  assert.deepEqual(asked, ['https://bedrock-runtime.eu-central-1.amazonaws.com']);
  assert.deepEqual(seen, [{ host: 'bedrock-runtime.eu-central-1.amazonaws.com', scope: 'eu-central-1', refused: undefined }]);
});

test('cloud_a on the public endpoint: an organization key for europe-west4 is sent to that location\'s host', async () => {
  const keyOrg = await t.newOrg({ balance: 10_000_000 });
  const managed = t.gw.services.config.managed.cloud_a as { key: unknown };
  assert.ok((await t.admin('PUT', `/admin/v1/orgs/${keyOrg.orgId}/provider-keys/cloud_a`, { key: managed.key, location: 'europe-west4' })).status < 300);
  const seen: Array<{ origin?: string; path?: string }> = [];
  const asked: string[] = [];
  vertex.handler = (req, _body, res) => {
    // The origin the gateway connected for (its Host, had the connection not been redirected here).
    const origin = asked.at(-1);
    seen.push({ origin, path: req.url });
    // A regional endpoint serves its own location only.
    const location = /\/locations\/([^/]+)\//.exec(req.url ?? '')?.[1];
    if (origin !== `https://${location}-aiplatform.googleapis.com`) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 400, message: `Location ${location} is not served at ${origin}.`, status: 'INVALID_ARGUMENT' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'from europe-west4' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 } })}\r\n\r\n`);
  };
  const client = new OpenAI({ apiKey: keyOrg.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const adapter = cloudA('https://us-central1-aiplatform.googleapis.com', { managed: t.gw.services.config.managed.cloud_a });
  await redirectingPools(vertex.url, asked, () => withAdapter('cloud_a', adapter, async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini-3.5-flash', stream: true, messages: [{ role: 'user', content: 'hi' }], start_within: 'now', provider: ['cloud_a'],
    } as any) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    assert.equal(text, 'from europe-west4');
  }));
  // The access token is minted at the simulator's token endpoint, outside the pools.
  assert.deepEqual(asked, ['https://europe-west4-aiplatform.googleapis.com']);
  assert.equal(seen.length, 1);
  assert.match(seen[0]!.path!, /^\/v1\/projects\/sim-project\/locations\/europe-west4\/publishers\/google\/models\/[^/]+:streamGenerateContent\?alt=sse$/);
});
