// cloud_a's service-account key (lib/providers/vertex.ts): its token_uri is where the gateway POSTs
// a signed grant from inside its network, so only Google's token endpoint or one the operator
// allows is accepted, at upload and again at use; what a token server answers is logged, never
// passed to the caller (lib/stream/failure.ts); and the auth clients kept are bounded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { cachedAuthClients, cloudA, parseVertexCredential } from '../../lib/providers/vertex.ts';
import { UnusableCredential } from '../../lib/providers/unusable-credential.ts';
import { connectionFailure } from '../../lib/stream/failure.ts';
import { createLogger } from '../../lib/log.ts';
import { loadConfig } from '../../lib/config.ts';
import type { BuildArgs } from '../../lib/providers/types.ts';

const PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const sa = (over: Record<string, unknown> = {}) => ({ key: { client_email: 'sa@p.iam', private_key: PEM, project_id: 'p', ...over } });
const args = (credential: unknown): BuildArgs =>
  ({ wire: 'vertex', body: { contents: [] }, model: 'gemini-2.5-flash', tier: 'standard', stream: false, credential, translated: false });

/** A token server that records each hit and answers `answer` (an OAuth error by default). */
let hits: string[] = [];
let answer: { status: number; body: unknown } = { status: 403, body: { error: 'INTERNAL-SECRET-DATA', error_description: 'db_password=hunter2' } };
let server: Server;
let tokenUrl: string;
before(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume().on('end', () => { res.writeHead(answer.status, { 'content-type': 'application/json' }); res.end(JSON.stringify(answer.body)); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tokenUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/internal/token?x=1`;
});
after(() => server.close());

test('parseVertexCredential: Google\'s token endpoints and the operator\'s allowed ones; any other token_uri refused', () => {
  const allowed = new Set(['http://127.0.0.1:9/token']);
  for (const uri of [undefined, '', 'https://oauth2.googleapis.com/token', 'https://accounts.google.com/o/oauth2/token',
    'https://www.googleapis.com/oauth2/v4/token', 'http://127.0.0.1:9/token']) {
    assert.equal(parseVertexCredential(sa({ token_uri: uri }), allowed).project, 'p', `${uri} is accepted`);
  }
  assert.equal(parseVertexCredential({ key: JSON.stringify(sa({ token_uri: 'https://oauth2.googleapis.com/token' }).key) }, allowed).project, 'p');
  for (const uri of ['http://169.254.169.254/computeMetadata/v1/', 'https://oauth2.googleapis.com.evil.example/token',
    'https://oauth2.googleapis.com/token#', 'http://127.0.0.1:9/token/', 'http://127.0.0.1:10/token', 42, { href: 'x' }]) {
    assert.throws(() => parseVertexCredential(sa({ token_uri: uri }), allowed), (e: any) => e.code === 'provider_key_missing', String(uri));
    assert.throws(() => parseVertexCredential({ key: JSON.stringify(sa({ token_uri: uri }).key) }, allowed), String(uri));
  }
});

test('a stored key with a foreign token_uri is refused at use: no request there, a fatal failure naming no URL', async () => {
  hits = [];
  const lines: string[] = [];
  const log = createLogger('debug', new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } }));
  const adapter = cloudA('http://127.0.0.1:1', { log });   // no operator token endpoint
  const err = await Promise.resolve(adapter.build(args(sa({ token_uri: tokenUrl })))).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof UnusableCredential, 'refused before any token is asked for');
  assert.equal(err.retryable, false);
  assert.deepEqual(hits, [], 'nothing was sent to the foreign token_uri');
  const failure = connectionFailure(err);
  assert.equal(failure.kind, 'fatal', 'not retried');
  assert.equal(failure.message, 'the provider credential could not be used');
  assert.doesNotMatch(JSON.stringify(failure), /127\.0\.0\.1|internal|token_uri/);
  assert.equal(lines.filter((l) => l.includes('cloud_a credential refused')).length, 1, 'the refusal is logged');
  assert.ok(lines.every((l) => !l.includes('PRIVATE KEY')), 'without the key');
});

test('a token server\'s answer is logged, never answered: a transient failure with a fixed message', async () => {
  hits = [];
  answer = { status: 403, body: { error: 'INTERNAL-SECRET-DATA', error_description: 'db_password=hunter2' } };
  const lines: string[] = [];
  const log = createLogger('debug', new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } }));
  const adapter = cloudA('http://127.0.0.1:1', { allowedTokenUris: [tokenUrl], log });
  const err = await Promise.resolve(adapter.build(args(sa({ token_uri: tokenUrl, client_email: 'answer@p.iam' })))).then(() => undefined, (e: unknown) => e);
  assert.ok(hits.length > 0, 'the allowed endpoint was asked');
  assert.ok(err instanceof UnusableCredential);
  assert.equal(err.retryable, true, 'a token server\'s refusal is retried as a failed connection is');
  const failure = connectionFailure(err);
  assert.deepEqual({ kind: failure.kind, status: failure.status }, { kind: 'transient', status: 502 });
  assert.doesNotMatch(JSON.stringify(failure) + err.message, /INTERNAL-SECRET-DATA|hunter2/);
  const logged = lines.find((l) => l.includes('cloud_a access token not minted'));
  assert.match(logged ?? '', /INTERNAL-SECRET-DATA: db_password=hunter2/, 'the operator can read why');
  assert.match(logged ?? '', /"status":403/);
  assert.ok(lines.every((l) => !l.includes('PRIVATE KEY') && !l.includes('assertion')), 'neither the key nor the signed grant is logged');
});

test('the auth clients kept are bounded: the least recently used go first', async () => {
  answer = { status: 200, body: { access_token: 'tok', expires_in: 3600, token_type: 'Bearer' } };
  const adapter = cloudA('http://127.0.0.1:1', { allowedTokenUris: [tokenUrl] });
  for (let i = 0; i < 300; i++) {
    const req = await adapter.build(args(sa({ token_uri: tokenUrl, client_email: `sa${i}@p.iam` })));
    assert.equal(req.headers.authorization, 'Bearer tok');
  }
  assert.ok(cachedAuthClients() <= 256, `${cachedAuthClients()} clients kept`);
  hits = [];
  await adapter.build(args(sa({ token_uri: tokenUrl, client_email: 'sa299@p.iam' })));
  assert.deepEqual(hits, [], 'a recent client is still cached with its token');
});

test('config: routes.cloud_a.allowed_token_uris is a list of URLs; other routes have no such setting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
  try {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ routes: { cloud_a: { base_url: 'https://vertex.example', allowed_token_uris: ['https://sts.corp.example/token'] } } }));
    assert.deepEqual(loadConfig(file).routes.cloud_a?.allowed_token_uris, ['https://sts.corp.example/token']);
    writeFileSync(file, JSON.stringify({ routes: { cloud_b: { base_url: 'https://b.example', allowed_token_uris: ['x'] } } }));
    assert.throws(() => loadConfig(file), /invalid GATEWAY_CONFIG/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('authRejected: the refused token\'s client is dropped (one new token request); a client still minting its first token stays', async () => {
  let minted = 0;
  let delayMs = 0;
  let received: () => void = () => {};
  const tokens = createServer((req, res) => {
    received();
    req.resume().on('end', () => setTimeout(() => {
      minted++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: `tok${minted}`, expires_in: 3600, token_type: 'Bearer' }));
    }, delayMs));
  });
  await new Promise<void>((resolve) => tokens.listen(0, '127.0.0.1', resolve));
  try {
    const uri = `http://127.0.0.1:${(tokens.address() as { port: number }).port}/token`;
    const adapter = cloudA('http://127.0.0.1:1', { allowedTokenUris: [uri] });
    const cred = sa({ token_uri: uri, client_email: 'rejected@p.iam' });
    const auth = async () => (await adapter.build(args(cred))).headers.authorization;
    assert.equal(await auth(), 'Bearer tok1');
    assert.equal(await auth(), 'Bearer tok1', 'cached');
    adapter.authRejected!(cred);   // Vertex answered 401 to tok1
    delayMs = 200;
    const asked = new Promise<void>((resolve) => { received = resolve; });
    const next = auth();           // a new client, minting
    await Promise.race([asked, next]);
    adapter.authRejected!(cred);   // another request sent with tok1 fails while tok2 is being minted
    assert.equal(await next, 'Bearer tok2');
    assert.equal(await auth(), 'Bearer tok2', 'the new client is kept, with its token');
    assert.equal(minted, 2, 'one token request after the 401');
    adapter.authRejected!({ key: 'not json' });   // a key it cannot read: nothing to forget, no throw
  } finally {
    tokens.close();
  }
});
