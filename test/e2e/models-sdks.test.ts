// The model catalog through each official SDK: list (auto-pagination ends, the ids are the
// catalog's) and retrieve/get of one model, an unknown id (the SDK's not-found error, in its own
// envelope) and a wrong or missing key (401). One body serves all three readers (lib/http/models.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';

const NO_LIMITS = { organization_requests: null, api_key_requests: null, client_ip_requests: null, failed_authentications: null, publish: false };
const IDS = DEFAULT_MODELS.map((model) => model.id);

let t: TestGateway;
let key: string;
const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${t.url}/v1`, maxRetries: 0 });
const anthropic = (authToken: string) => new Anthropic({ authToken, apiKey: null, baseURL: t.url, maxRetries: 0 });
const genai = (bearer: string) => new GoogleGenAI({
  apiKey: 'unused', httpOptions: { baseUrl: t.url, apiVersion: 'v1', headers: { authorization: `Bearer ${bearer}` } },
});

before(async () => {
  t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  ({ key } = await t.newOrg({ balance: 1_000_000 }));
});
after(() => t.close());

test('openai: models.list pages through the catalog, retrieve answers its entry, an unknown id is NotFoundError', async () => {
  const ids: string[] = [];
  for await (const model of openai(key).models.list()) ids.push(model.id);
  assert.deepEqual(ids, IDS);
  const model = await openai(key).models.retrieve('gpt-5.4') as any;
  assert.deepEqual(
    { id: model.id, object: model.object, created: model.created, owned_by: model.owned_by, family: model.family, routes: model.routes, flex_capable: model.flex_capable },
    { id: 'gpt-5.4', object: 'model', created: 0, owned_by: 'vendor_a', family: 'vendor_a', routes: ['vendor_a'], flex_capable: true },
  );
  const err = await openai(key).models.retrieve('no-such-model').catch((e) => e);
  assert.ok(err instanceof OpenAI.NotFoundError, `not a NotFoundError: ${err}`);
  assert.equal(err.code, 'model_not_found');
});

test('anthropic: models.list ends after one page with ModelInfo fields, retrieve answers its entry, an unknown id is NotFoundError', async () => {
  const client = anthropic(key);
  const page = await client.models.list({ limit: 2 });
  assert.equal(page.hasNextPage(), false, 'has_more false: auto-pagination ends');
  assert.deepEqual([page.first_id, page.last_id], [IDS[0], IDS.at(-1)]);
  const models = [];
  for await (const model of client.models.list({ limit: 2 })) models.push(model);
  assert.deepEqual(models.map((m) => m.id), IDS);
  for (const model of models) {
    assert.equal(model.type, 'model');
    assert.equal(model.display_name, model.id);
    assert.ok(!Number.isNaN(Date.parse(model.created_at)), `created_at ${model.created_at}`);
  }
  const haiku = await client.models.retrieve('claude-haiku-4-5');
  assert.deepEqual([haiku.id, haiku.type, haiku.display_name], ['claude-haiku-4-5', 'model', 'claude-haiku-4-5']);
  const err = await client.models.retrieve('no-such-model').catch((e) => e);
  assert.ok(err instanceof Anthropic.NotFoundError, `not a NotFoundError: ${err}`);
  assert.deepEqual(err.error, { type: 'error', error: { type: 'not_found_error', message: 'The model is not in the catalog.', code: 'model_not_found' } });
  assert.ok(err.requestID, 'the Anthropic SDK reads request-id');
});

test('genai: models.list ends after one page of models/<id> names, get answers a name with or without models/, an unknown id is a 404', async () => {
  const client = genai(key);
  const pager = await client.models.list({ config: { pageSize: 2 } });
  const names: string[] = [];
  for await (const model of pager) names.push(model.name!);
  assert.deepEqual(names, IDS.map((id) => `models/${id}`));
  assert.equal(pager.hasNextPage(), false);
  for (const model of ['gemini-3.5-flash', 'models/gemini-3.5-flash']) {
    const got = await client.models.get({ model });
    assert.deepEqual([got.name, got.displayName], ['models/gemini-3.5-flash', 'gemini-3.5-flash'], model);
  }
  const err = await client.models.get({ model: 'no-such-model' }).catch((e) => e);
  assert.ok(err instanceof ApiError, `not an ApiError: ${err}`);
  assert.equal(err.status, 404);
  assert.deepEqual(JSON.parse(err.message), { error: { code: 'model_not_found', message: 'The model is not in the catalog.', status: 'NOT_FOUND' } });
});

test('a wrong key is 401 on list and retrieve in each SDK; no key is 401 before the id is looked up', async () => {
  const wrong = 'flex_live_wrong';
  for (const call of [() => openai(wrong).models.list(), () => openai(wrong).models.retrieve('gpt-5.4')]) {
    assert.ok(await call().catch((e) => e) instanceof OpenAI.AuthenticationError);
  }
  for (const call of [() => anthropic(wrong).models.list(), () => anthropic(wrong).models.retrieve('claude-haiku-4-5')]) {
    assert.ok(await call().catch((e) => e) instanceof Anthropic.AuthenticationError);
  }
  for (const call of [() => genai(wrong).models.list(), () => genai(wrong).models.get({ model: 'gemini-3.5-flash' })]) {
    assert.equal((await call().catch((e) => e)).status, 401);
  }
  for (const path of ['/v1/models', '/v1/models/gpt-5.4', '/v1/models/no-such-model']) {
    const res = await fetch(t.url + path);
    assert.equal(res.status, 401, path);
    assert.equal((await res.json() as any).error.code, 'missing_api_key', path);
  }
});

test('the OpenAI list shape is kept, each list entry is its retrieve answer, and a non-GET on an entry is 405', async () => {
  const get = (path: string) => fetch(t.url + path, { headers: { authorization: `Bearer ${key}` } });
  const list = await (await get('/v1/models')).json() as any;
  assert.equal(list.object, 'list');
  assert.deepEqual(list.models, list.data);
  for (const entry of list.data) assert.deepEqual(await (await get(`/v1/models/${encodeURIComponent(entry.id)}`)).json(), entry);
  const post = await fetch(`${t.url}/v1/models/gpt-5.4`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
});
