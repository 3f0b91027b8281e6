// cloud_b, Claude on Bedrock InvokeModel: SigV4 auth, AWS JSON errors, and the binary
// event-stream decoded with @smithy/eventstream-codec.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import type { Simulator } from '../../lib/simulator/server.ts';
import { decodeEventStream, directive, start } from './helpers.ts';

const MODEL = 'anthropic.claude-sim-v1:0';
const AKID = 'AKIDSIMULATOR';
const SECRET = 'sim-secret-key';

let sim: Simulator;
let verifying: Simulator;
before(async () => {
  sim = await start();
  verifying = await start({ awsSecrets: { [AKID]: SECRET } });
});
after(async () => { await sim.close(); await verifying.close(); });

/** Sign like the AWS SDK does (SigV4, service bedrock) and send. */
async function invoke(target: Simulator, verb: 'invoke' | 'invoke-with-response-stream', body: object, secret = SECRET, akid = AKID) {
  const url = new URL(`${target.url}/model/${encodeURIComponent(MODEL)}/${verb}`);
  const payload = JSON.stringify(body);
  const signer = new SignatureV4({
    service: 'bedrock', region: 'us-east-1', sha256: Sha256,
    credentials: { accessKeyId: akid, secretAccessKey: secret },
  });
  const signed = await signer.sign({
    method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {},
    headers: { host: url.host, 'content-type': 'application/json', accept: 'application/json' }, body: payload,
  });
  return fetch(url, { method: 'POST', headers: signed.headers as Record<string, string>, body: payload });
}

const base = (text: string, extra: object = {}) => ({
  anthropic_version: 'bedrock-2023-05-31', max_tokens: 200, messages: [{ role: 'user', content: text }], ...extra,
});

test('stream: event-stream chunks whose base64 bytes are Anthropic events; message_stop has invocation metrics', async () => {
  const res = await invoke(sim, 'invoke-with-response-stream', base('Hello Bedrock'));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  const messages = decodeEventStream(new Uint8Array(await res.arrayBuffer()));
  const events = messages.map((m) => {
    assert.deepEqual(m.headers, { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' });
    const { bytes } = JSON.parse(m.body) as { bytes: string };
    return JSON.parse(Buffer.from(bytes, 'base64').toString('utf8')) as Record<string, any>;
  });
  assert.equal(events[0]!.type, 'message_start');
  assert.equal(events[0]!.message.model, MODEL);
  assert.equal(events[0]!.message.usage.input_tokens, Math.ceil('Hello Bedrock'.length / 4));
  const text = events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('');
  assert.equal(text.split(' ').length, 16);
  const delta = events.find((e) => e.type === 'message_delta')!;
  assert.equal(delta.delta.stop_reason, 'end_turn');
  assert.equal(delta.usage.output_tokens, 16);
  const stop = events.at(-1)!;
  assert.equal(stop.type, 'message_stop');
  const metrics = stop['amazon-bedrock-invocationMetrics'];
  assert.equal(metrics.inputTokenCount, Math.ceil('Hello Bedrock'.length / 4));
  assert.equal(metrics.outputTokenCount, 16);
  assert.equal(typeof metrics.invocationLatency, 'number');
  assert.equal(typeof metrics.firstByteLatency, 'number');
});

test('non-stream invoke: Anthropic Message JSON; tool_choice any → tool_use', async () => {
  const msg = await (await invoke(sim, 'invoke', base('x', {
    tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] } }],
    tool_choice: { type: 'any' },
  }))).json() as Record<string, any>;
  assert.equal(msg.type, 'message');
  assert.equal(msg.stop_reason, 'tool_use');
  assert.equal(msg.content[0].type, 'tool_use');
  assert.equal(typeof msg.content[0].input.sku, 'string');
});

test('403 UnrecognizedClientException without a signature; SigV4 verified when secrets are configured', async () => {
  const unsigned = await fetch(`${sim.url}/model/${MODEL}/invoke`, { method: 'POST', body: JSON.stringify(base('x')) });
  assert.equal(unsigned.status, 403);
  assert.equal(unsigned.headers.get('x-amzn-errortype'), 'UnrecognizedClientException');
  assert.equal(typeof (await unsigned.json() as { message: string }).message, 'string');

  assert.equal((await invoke(verifying, 'invoke', base('x'))).status, 200);
  const wrong = await invoke(verifying, 'invoke', base('x'), 'not-the-secret');
  assert.equal(wrong.status, 403);
  assert.equal(wrong.headers.get('x-amzn-errortype'), 'UnrecognizedClientException');
  // An access key id named like an Object.prototype member is an unknown key, not a lookup hit.
  for (const akid of ['constructor', 'toString']) {
    const odd = await invoke(verifying, 'invoke', base('x'), String(Object), akid);
    assert.equal(odd.status, 403, akid);
    assert.match((await odd.json() as { message: string }).message, /security token included in the request is invalid/, akid);
  }
});

test('body validation: anthropic_version required, model/stream refused → 400 ValidationException', async () => {
  for (const body of [{ ...base('x'), anthropic_version: undefined }, { ...base('x'), model: MODEL }, { ...base('x'), stream: true }]) {
    const res = await invoke(sim, 'invoke', body);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('x-amzn-errortype'), 'ValidationException');
  }
});

test('injected 429 ThrottlingException with Retry-After; mid-stream failure as an exception message', async () => {
  const throttled = await invoke(sim, 'invoke', base(`x ${directive({ fail: [429], id: 'br-429', retry_after_s: 1 })}`));
  assert.equal(throttled.status, 429);
  assert.equal(throttled.headers.get('x-amzn-errortype'), 'ThrottlingException');
  assert.equal(throttled.headers.get('retry-after'), '1');

  const res = await invoke(sim, 'invoke-with-response-stream', base(`x ${directive({ error_after_tokens: 4 })}`));
  const messages = decodeEventStream(new Uint8Array(await res.arrayBuffer()));
  const last = messages.at(-1)!;
  assert.equal(last.headers[':message-type'], 'exception');
  assert.equal(last.headers[':exception-type'], 'internalServerException');
  const deltas = messages.slice(0, -1).map((m) => JSON.parse(Buffer.from((JSON.parse(m.body) as { bytes: string }).bytes, 'base64').toString()) as { type: string })
    .filter((e) => e.type === 'content_block_delta');
  assert.equal(deltas.length, 4);
});
