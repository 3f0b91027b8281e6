// An organization's own cloud_a key may not point the gateway's token request anywhere: a token_uri
// that is neither Google's nor the operator's is refused at upload (management and admin APIs), and
// a key stored before that check is refused at use, with no request to it and nothing echoed. The
// operator's own credential (here the simulator's, uploaded as an org's key) keeps working.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let internal: Server;
let internalUrl: string;
const hits: string[] = [];
const PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

before(async () => {
  internal = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume().on('end', () => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'INTERNAL-SECRET-DATA', error_description: 'db_password=hunter2' }));
    });
  });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  internalUrl = `http://127.0.0.1:${(internal.address() as { port: number }).port}/internal/admin?do=thing`;
  t = await startTestGateway();
});
after(async () => { await t.close(); internal.close(); });

const foreignKey = () => ({ key: { client_email: 'x@y.iam', private_key: PEM, project_id: 'p', token_uri: internalUrl } });
const infer = (key: string) => fetch(`${t.url}/v1/interactions`, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gemini-2.5-flash', input: 'hi', start_within: 'now', provider: ['cloud_a'] }),
});

test('a foreign token_uri is refused at upload (400 invalid_request, management and admin API); the operator\'s own is accepted', async () => {
  hits.length = 0;
  const org = await t.newOrg();
  const manage = (await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key as string;
  const put = await fetch(`${t.url}/v1/organization/provider-keys/cloud_a`, {
    method: 'PUT', headers: { authorization: `Bearer ${manage}`, 'content-type': 'application/json' }, body: JSON.stringify(foreignKey()),
  });
  assert.equal(put.status, 400);
  assert.equal(((await put.json()) as any).error.code, 'invalid_request');
  const text = { key: JSON.stringify(foreignKey().key) };   // the service-account JSON as text
  const viaAdmin = await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/cloud_a`, text);
  assert.equal(viaAdmin.status, 400);
  assert.equal(viaAdmin.json.error.code, 'invalid_request');
  assert.deepEqual(await t.gw.services.orgs.listProviderKeys(org.orgId), [], 'nothing stored');
  assert.deepEqual(hits, []);

  // The operator's own credential (the simulator's token_uri), uploaded as the org's key, works.
  const own = await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/cloud_a`, t.gw.services.config.managed.cloud_a);
  assert.equal(own.status, 200);
  const res = await infer(org.key);
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(((await res.json()) as any).status, 'completed');
});

test('a key stored before the check fails at use: one fatal attempt, no request to its token_uri, nothing echoed', async () => {
  hits.length = 0;
  const org = await t.newOrg();
  await t.gw.services.orgs.setProviderKey(org.orgId, 'cloud_a', foreignKey(), Date.now());   // as an older gateway stored it
  const before = t.logLines.filter((l) => l.includes('cloud_a credential refused')).length;
  const res = await infer(org.key);
  const body = await res.text();
  assert.equal(res.status, 400, body);
  assert.equal(JSON.parse(body).error.code, 'provider_rejected');
  assert.match(body, /the provider credential could not be used/);
  assert.doesNotMatch(body, /127\.0\.0\.1|internal|INTERNAL-SECRET-DATA|hunter2|token_uri/);
  assert.deepEqual(hits, [], 'no request to the stored token_uri');
  assert.equal(t.logLines.filter((l) => l.includes('cloud_a credential refused')).length - before, 1, 'not retried');
});
