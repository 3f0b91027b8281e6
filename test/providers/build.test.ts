// Request building per route (lib/providers/): the URL (a configured base path kept), the auth
// headers, how the flex tier is asked for, and streaming. Each built request is also sent, as
// built, to the provider simulator, which checks keys, OAuth tokens and SigV4 signatures the way the
// providers do: a request the real provider would refuse is refused here too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { simulatorCredentials } from '../../lib/app.ts';
import { vendorA } from '../../lib/providers/openai.ts';
import { vendorB } from '../../lib/providers/gemini.ts';
import { vendorC, ANTHROPIC_VERSION } from '../../lib/providers/anthropic.ts';
import { cloudA } from '../../lib/providers/vertex.ts';
import { cloudB } from '../../lib/providers/bedrock.ts';
import type { BuildArgs, UpstreamRequest } from '../../lib/providers/types.ts';

let sim: Simulator;
const creds = simulatorCredentials();
const aws = (creds.cloud_b as { key: { access_key_id: string; secret_access_key: string } }).key;
before(async () => {
  sim = await startSimulator({ awsSecrets: { [aws.access_key_id]: aws.secret_access_key } });
  (creds.cloud_a as { key: { token_uri: string } }).key.token_uri = `${sim.url}/token`;
});
after(() => sim.close());

const args = (over: Partial<BuildArgs>): BuildArgs =>
  ({ wire: 'responses', body: {}, model: 'm', tier: 'standard', stream: false, credential: 'k', translated: false, ...over });
const json = (req: UpstreamRequest) => JSON.parse(req.body.toString());
/** Send a built request to where it points. */
const send = (req: UpstreamRequest) => fetch(req.origin + req.path, { method: "POST", headers: req.headers, body: typeof req.body === "string" ? req.body : new Uint8Array(req.body) });

test('vendor A: /v1/responses or /v1/chat/completions under the base path, Bearer key, flex as service_tier', async () => {
  const a = vendorA('http://up.example:8080/proxy/');
  const flex = await a.build(args({ body: { input: 'hi' }, tier: 'flex', stream: true }));
  assert.equal(flex.origin, 'http://up.example:8080');
  assert.equal(flex.path, '/proxy/v1/responses');
  assert.equal(flex.headers.authorization, 'Bearer k');
  assert.equal(flex.headers.accept, 'text/event-stream');
  assert.deepEqual(json(flex), { input: 'hi', model: 'm', stream: true, service_tier: 'flex' });
  const standard = await a.build(args({ body: { input: 'hi', service_tier: 'priority' } }));
  assert.equal('service_tier' in json(standard), false, 'the standard tier sends no service_tier');
  assert.equal(standard.headers.accept, 'application/json');
  const chat = await a.build(args({ wire: 'chat', body: { messages: [], stream_options: { include_obfuscation: false } }, stream: true }));
  assert.equal(chat.path, '/proxy/v1/chat/completions');
  assert.deepEqual(json(chat).stream_options, { include_obfuscation: false, include_usage: true }, 'usage is always asked for');
  assert.equal('stream_options' in json(await a.build(args({ wire: 'chat', body: { messages: [] } }))), false);

  const live = vendorA(sim.url);
  assert.equal((await send(await live.build(args({ body: { input: 'hi' }, tier: 'flex' })))).status, 200);
  assert.equal((await send(await live.build(args({ body: { input: 'hi' }, credential: '' })))).status, 401);
});

test('vendor B: /v1beta/interactions, x-goog-api-key, flex as service_tier, stream in the body', async () => {
  const b = vendorB('http://up.example');
  const req = await b.build(args({ wire: 'interactions', body: { input: 'hi' }, tier: 'flex', stream: true, credential: 'gk' }));
  assert.equal(req.path, '/v1beta/interactions');
  assert.equal(req.headers['x-goog-api-key'], 'gk');
  assert.equal(req.headers.authorization, undefined);
  assert.deepEqual(json(req), { input: 'hi', model: 'm', stream: true, service_tier: 'flex' });
  const res = await send(await vendorB(sim.url).build(args({ wire: 'interactions', body: { input: 'hi' }, credential: 'gk' })));
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { status: string }).status, 'completed');
});

test('vendor C: /v1/messages, x-api-key and anthropic-version, never a service_tier; max_tokens only for a translated body', async () => {
  const c = vendorC('http://up.example', 333);
  const own = await c.build(args({ wire: 'messages', body: { messages: [], service_tier: 'auto' }, tier: 'flex', credential: 'ck' }));
  assert.equal(own.path, '/v1/messages');
  assert.equal(own.headers['x-api-key'], 'ck');
  assert.equal(own.headers['anthropic-version'], ANTHROPIC_VERSION);
  assert.deepEqual(json(own), { messages: [], model: 'm', stream: false }, 'a Messages caller\'s body gets no max_tokens it did not send');
  assert.equal(json(await c.build(args({ wire: 'messages', body: { messages: [] }, translated: true }))).max_tokens, 333);
  assert.equal(json(await c.build(args({ wire: 'messages', body: { messages: [], max_tokens: 9 }, translated: true }))).max_tokens, 9);
  const res = await send(await vendorC(sim.url, 100).build(args({ wire: 'messages', body: { messages: [{ role: 'user', content: 'hi' }] }, translated: true })));
  assert.equal(res.status, 200);
});

test('cloud A: the Vertex model path for project and location, an OAuth token minted at the key\'s token_uri', async () => {
  const a = cloudA(sim.url, { managed: creds.cloud_a });   // the operator's own token_uri (the simulator's)
  const streamed = await a.build(args({ wire: 'vertex', body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, model: 'gemini-3.5-flash', stream: true, credential: creds.cloud_a }));
  assert.equal(streamed.path, '/v1/projects/sim-project/locations/us-central1/publishers/google/models/gemini-3.5-flash:streamGenerateContent?alt=sse');
  assert.match(streamed.headers.authorization!, /^Bearer \S+$/);
  const once = await a.build(args({ wire: 'vertex', body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, model: 'gemini-3.5-flash', credential: creds.cloud_a }));
  assert.match(once.path, /:generateContent$/);
  assert.equal((await send(once)).status, 200, 'the simulator accepts the minted token');
  assert.equal((await send({ ...once, headers: { ...once.headers, authorization: 'Bearer forged' } })).status, 401, 'and refuses another');
});

test('cloud B: the Bedrock invoke path with the route\'s model id, a SigV4 signature, the Bedrock body shape', async () => {
  const b = cloudB(sim.url, 222);
  const body = { model: 'claude', stream: true, service_tier: 'auto', messages: [{ role: 'user', content: 'hi' }] };
  const req = await b.build(args({ wire: 'messages', body, model: 'anthropic.claude-haiku-4-5-v1:0', stream: true, credential: creds.cloud_b }));
  assert.equal(req.path, '/model/anthropic.claude-haiku-4-5-v1%3A0/invoke-with-response-stream');
  assert.match(req.headers.authorization!, new RegExp(`^AWS4-HMAC-SHA256 Credential=${aws.access_key_id}/\\d{8}/us-east-1/bedrock/aws4_request`));
  assert.deepEqual(json(req), { messages: body.messages, anthropic_version: 'bedrock-2023-05-31', max_tokens: 222 });
  const once = await b.build(args({ wire: 'messages', body, model: 'anthropic.claude-haiku-4-5-v1:0', credential: creds.cloud_b }));
  assert.match(once.path, /\/invoke$/);
  assert.equal((await send(once)).status, 200, 'the simulator verifies the signature');
  const auth = once.headers.authorization!;
  const forged = { ...once, headers: { ...once.headers, authorization: auth.slice(0, -4) + (auth.endsWith('0000') ? '1111' : '0000') } };
  assert.equal((await send(forged)).status, 403, 'a wrong signature is refused');
});
