// Where a cloud route's request goes for an organization's key: on the provider's public endpoint
// the host follows the key's region (cloud_b) or location (cloud_a), the way the signature and the
// model path already did (AWS refuses a signature for another region than its endpoint's; a
// Vertex location is served at its own host); a configured proxy, private endpoint or the
// simulator keeps every request. The configured endpoint's own region is the default of a key
// that names none. A region or location is part of a host name, so only a region's name is one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { simulatorCredentials } from '../../lib/app.ts';
import { bedrockEndpoint, cloudB, parseBedrockCredential } from '../../lib/providers/bedrock.ts';
import { cloudA, parseVertexCredential, vertexEndpoint, vertexHost } from '../../lib/providers/vertex.ts';
import type { BuildArgs } from '../../lib/providers/types.ts';

let sim: Simulator;
const creds = simulatorCredentials();
before(async () => {
  sim = await startSimulator({});
  (creds.cloud_a as { key: { token_uri: string } }).key.token_uri = `${sim.url}/token`;
});
after(() => sim.close());

const aws = { access_key_id: 'AKIDEXAMPLE', secret_access_key: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const bedrockArgs = (credential: unknown): BuildArgs => ({
  wire: 'messages', body: { messages: [{ role: 'user', content: 'hi' }] }, model: 'anthropic.claude-sonnet-4-6-v1:0',
  tier: 'standard', stream: true, credential, translated: false,
});
const scope = (authorization: string) => /Credential=[^/]+\/\d{8}\/([^/]+)\/bedrock\/aws4_request/.exec(authorization)?.[1];

test('cloud_b on the public endpoint: the key\'s region picks the host the request is signed for', async () => {
  const b = cloudB('https://bedrock-runtime.us-east-1.amazonaws.com', 4096);
  const eu = await b.build(bedrockArgs({ key: aws, region: 'eu-central-1' }));
  assert.equal(eu.origin, 'https://bedrock-runtime.eu-central-1.amazonaws.com');
  assert.equal(eu.path, '/model/anthropic.claude-sonnet-4-6-v1%3A0/invoke-with-response-stream');
  assert.equal(eu.headers.host, 'bedrock-runtime.eu-central-1.amazonaws.com');
  assert.equal(scope(eu.headers.authorization!), 'eu-central-1');
  const none = await b.build(bedrockArgs({ key: aws }));
  assert.equal(none.origin, 'https://bedrock-runtime.us-east-1.amazonaws.com');
  assert.equal(scope(none.headers.authorization!), 'us-east-1');

  // The configured region is the default of a key without one (it was always us-east-1).
  const west = cloudB('https://bedrock-runtime.eu-west-3.amazonaws.com/', 4096);
  const defaulted = await west.build(bedrockArgs({ key: aws }));
  assert.equal(defaulted.headers.host, 'bedrock-runtime.eu-west-3.amazonaws.com');
  assert.equal(scope(defaulted.headers.authorization!), 'eu-west-3');
  assert.equal((await west.build(bedrockArgs({ key: aws, region: 'ap-southeast-2' }))).headers.host, 'bedrock-runtime.ap-southeast-2.amazonaws.com');

  // FIPS and China endpoints keep their own names.
  assert.equal(bedrockEndpoint('https://bedrock-runtime-fips.us-east-1.amazonaws.com').at('us-west-2').origin, 'https://bedrock-runtime-fips.us-west-2.amazonaws.com');
  assert.equal(bedrockEndpoint('https://bedrock-runtime.cn-north-1.amazonaws.com.cn').at('cn-northwest-1').origin, 'https://bedrock-runtime.cn-northwest-1.amazonaws.com.cn');
});

test('cloud_b on a configured proxy, VPC endpoint or the simulator: every request goes there, signed for the key\'s region', async () => {
  for (const base of [
    'https://vpce-0abc-def.bedrock-runtime.us-east-1.vpce.amazonaws.com',
    'https://bedrock-proxy.internal.example/aws',
    'http://bedrock-runtime.us-east-1.amazonaws.com',
    'https://bedrock-runtime.us-east-1.amazonaws.com:8443',
    'https://bedrock-runtime.us-east-1.amazonaws.com/prefix',
    sim.url,
  ]) {
    const b = cloudB(base, 4096);
    const req = await b.build(bedrockArgs({ key: aws, region: 'eu-central-1' }));
    const url = new URL(base);
    assert.equal(req.origin, url.origin, base);
    assert.equal(req.headers.host, url.host, base);
    assert.equal(scope(req.headers.authorization!), 'eu-central-1', base);
    assert.equal(scope((await b.build(bedrockArgs({ key: aws }))).headers.authorization!), 'us-east-1', `${base}: the default region as before`);
  }
});

test('a region or location that is not a region\'s name is refused as the key\'s fault, never made a host', async () => {
  const b = cloudB('https://bedrock-runtime.us-east-1.amazonaws.com', 4096);
  for (const region of ['evil.example#', 'us-east-1.evil.example', 'us-east-1/x', 'US-EAST-1', '', 42, 'a'.repeat(65)]) {
    await assert.rejects(async () => b.build(bedrockArgs({ key: aws, region })), (e: any) => e.code === 'provider_key_missing', String(region));
    assert.throws(() => parseBedrockCredential({ key: aws, region }), (e: any) => e.code === 'provider_key_missing', `upload of ${String(region)}`);
  }
  const sa = (creds.cloud_a as { key: object }).key;
  for (const location of ['evil.example#', 'us-central1.evil.example', 'x/y', '', 7]) {
    assert.throws(() => parseVertexCredential({ key: sa, location }, new Set([`${sim.url}/token`])), (e: any) => e.code === 'provider_key_missing', String(location));
  }
});

test('cloud_a on the public endpoint: the key\'s location picks the host ({location}-aiplatform, global, us/eu multi-region)', async () => {
  assert.equal(vertexHost('europe-west4'), 'europe-west4-aiplatform.googleapis.com');
  assert.equal(vertexHost('global'), 'aiplatform.googleapis.com');
  assert.equal(vertexHost('us'), 'aiplatform.us.rep.googleapis.com');
  assert.equal(vertexHost('eu'), 'aiplatform.eu.rep.googleapis.com');
  for (const [base, location] of [
    ['https://us-central1-aiplatform.googleapis.com', 'us-central1'], ['https://aiplatform.googleapis.com/', 'global'],
    ['https://aiplatform.eu.rep.googleapis.com', 'eu'], ['https://europe-west4-aiplatform.googleapis.com', 'europe-west4'],
  ] as const) {
    const endpoint = vertexEndpoint(base);
    assert.equal(endpoint.defaultLocation, location, base);
    assert.equal(endpoint.originFor('asia-northeast1'), 'https://asia-northeast1-aiplatform.googleapis.com', base);
    assert.equal(endpoint.originFor('global'), 'https://aiplatform.googleapis.com', base);
  }

  const a = cloudA('https://us-central1-aiplatform.googleapis.com', { managed: creds.cloud_a });
  const build = (credential: unknown) => a.build({
    wire: 'vertex', body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, model: 'gemini-2.5-flash', tier: 'standard',
    stream: true, credential, translated: false,
  });
  const eu = await build({ ...(creds.cloud_a as object), location: 'europe-west4' });
  assert.equal(eu.origin, 'https://europe-west4-aiplatform.googleapis.com');
  assert.equal(eu.path, '/v1/projects/sim-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  const global = await build({ ...(creds.cloud_a as object), location: 'global' });
  assert.equal(global.origin, 'https://aiplatform.googleapis.com');
  assert.match(global.path, /\/locations\/global\//);
  const { location: _l, ...noLocation } = creds.cloud_a as { location?: string };
  const defaulted = await build(noLocation);
  assert.equal(defaulted.origin, 'https://us-central1-aiplatform.googleapis.com');
  assert.match(defaulted.path, /\/locations\/us-central1\//);

  const onGlobal = cloudA('https://aiplatform.googleapis.com', { managed: creds.cloud_a });
  const globalDefault = await onGlobal.build({ wire: 'vertex', body: {}, model: 'g', tier: 'standard', stream: false, credential: noLocation, translated: false });
  assert.equal(globalDefault.origin, 'https://aiplatform.googleapis.com');
  assert.match(globalDefault.path, /\/locations\/global\//, 'the configured endpoint\'s location is the default of a key that names none');
});

test('cloud_a on a configured proxy, private endpoint or the simulator: every request goes there, the location in its path', async () => {
  for (const base of [sim.url, 'https://vertex-proxy.internal.example/v', 'https://us-central1-aiplatform-psc.p.googleapis.com', 'https://aiplatform.googleapis.com:444']) {
    const a = cloudA(base, { managed: creds.cloud_a });
    const req = await a.build({
      wire: 'vertex', body: {}, model: 'g', tier: 'standard', stream: false, translated: false,
      credential: { ...(creds.cloud_a as object), location: 'europe-west4' },
    });
    assert.equal(req.origin, new URL(base).origin, base);
    assert.match(req.path, /\/locations\/europe-west4\//, base);
  }
});
