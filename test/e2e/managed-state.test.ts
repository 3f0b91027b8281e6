// Provider-held conversation state on managed routes: every managed org's requests go out on the
// service's one provider account, so the provider cannot tell whose stored response or
// interaction an id names. The gateway remembers who was handed each id and answers any other
// org (or an id it never handed out) as the provider answers an id it does not hold: the same
// 404 as an unknown id, so ids cannot be probed. An org's own key is its own account: no check.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let a: string;         // managed
let b: string;         // managed
let own: string;       // own vendor_a and vendor_b keys

before(async () => {
  t = await startTestGateway();
  a = (await t.newOrg({ balance: 50_000_000 })).key;
  b = (await t.newOrg({ balance: 50_000_000 })).key;
  own = (await t.newOrg({ ownKeys: ['vendor_a', 'vendor_b'] })).key;
});
after(() => t.close());

async function post(path: string, key: string, body: Record<string, unknown>): Promise<{ status: number; text: string; headers: Headers }> {
  const r = await fetch(`${t.url}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

/** The id of a created response or interaction, from its body or its stream. */
function idOf(text: string, prefix: string): string {
  const m = new RegExp(`"id":"(${prefix}[^"]+)"`).exec(text);
  assert.ok(m, `no ${prefix} id in ${text.slice(0, 200)}`);
  return m[1]!;
}

/** Refused as the provider refuses an id it never issued: the same status and body (id aside). */
async function assertRefusedLikeUnknown(path: string, key: string, field: string, id: string, body: Record<string, unknown>): Promise<void> {
  const unknown = `${id.slice(0, id.indexOf('_') + 1)}neverissued${id.length}`;
  const refused = await post(path, key, { ...body, [field]: id });
  const never = await post(path, key, { ...body, [field]: unknown });
  assert.equal(never.status, 404, never.text);
  assert.equal(refused.status, 404, refused.text);
  assert.equal(refused.text.replaceAll(id, 'ID'), never.text.replaceAll(unknown, 'ID'));
}

const RESPONSES = { model: 'gpt-5.4-mini', input: 'And then?' };

for (const [how, create] of [
  ['non-streamed', { start_within: 'now' }],
  ['non-streamed, streamed upstream', { start_within: '00h-00m-30s' }],
  ['streamed', { start_within: 'now', stream: true }],
  ['streamed, include_cost', { start_within: 'now', stream: true, include_cost: true }],
] as const) {
  test(`Responses (${how}): another managed org naming org A's response id gets the unknown-id 404; A continues it`, async () => {
    const first = await post('/v1/responses', a, { model: 'gpt-5.4-mini', input: 'ORG-A private context', ...create });
    assert.equal(first.status, 200, first.text);
    const id = idOf(first.text, 'resp_');
    await assertRefusedLikeUnknown('/v1/responses', b, 'previous_response_id', id, { ...RESPONSES, start_within: 'now' });
    const refused = JSON.parse((await post('/v1/responses', b, { ...RESPONSES, previous_response_id: id, start_within: 'now' })).text).error;
    assert.equal(refused.type, 'not_found_error');
    assert.match(refused.message, new RegExp(`Previous response with id '${id}' not found`));
    for (const stream of [false, true]) {
      const next = await post('/v1/responses', a, { ...RESPONSES, previous_response_id: id, start_within: 'now', stream });
      assert.equal(next.status, 200, next.text);
      assert.equal(next.headers.get('x-service-routing-reason'), 'pinned');
    }
  });
}

test('Interactions: another managed org naming org A\'s interaction id gets the unknown-id 404; A continues it', async () => {
  for (const stream of [false, true]) {
    const first = await post('/v1/interactions', a, { model: 'gemini-3.5-flash', input: 'ORG-A private', start_within: 'now', stream });
    assert.equal(first.status, 200, first.text);
    const id = idOf(first.text, 'v1_');
    const body = { model: 'gemini-3.5-flash', input: 'And then?', start_within: 'now' };
    await assertRefusedLikeUnknown('/v1/interactions', b, 'previous_interaction_id', id, body);
    const next = await post('/v1/interactions', a, { ...body, previous_interaction_id: id });
    assert.equal(next.status, 200, next.text);
  }
});

test('a conversation id cannot be attributed to a managed org: refused on the managed route, passed on an own key', async () => {
  const body = { ...RESPONSES, conversation: 'conv_made_elsewhere', start_within: 'now' };
  const managed = await post('/v1/responses', a, body);
  assert.equal(managed.status, 404, managed.text);
  assert.match(JSON.parse(managed.text).error.message, /Conversation with id 'conv_made_elsewhere' not found/);
  assert.equal((await post('/v1/responses', a, { ...body, conversation: { id: 'conv_made_elsewhere' } })).status, 404);
  const ownKey = await post('/v1/responses', own, body);
  assert.equal(ownKey.status, 200, ownKey.text);   // the simulator keeps no conversations: the provider took it
});

test('an own-key org is unaffected: its ids are its own account\'s, continued unchecked, and mean nothing to a managed org', async () => {
  const first = await post('/v1/responses', own, { model: 'gpt-5.4-mini', input: 'own account', start_within: 'now' });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.headers.get('x-service-spend-remaining'), 'unlimited');
  const id = idOf(first.text, 'resp_');
  const next = await post('/v1/responses', own, { ...RESPONSES, previous_response_id: id, start_within: 'now' });
  assert.equal(next.status, 200, next.text);
  // The simulator has one account for every key; the real provider would not find it on the service's.
  await assertRefusedLikeUnknown('/v1/responses', a, 'previous_response_id', id, { ...RESPONSES, start_within: 'now' });
  // A managed org's id named on an own key goes to the org's own account (which answers for itself).
  const managed = idOf((await post('/v1/responses', a, { model: 'gpt-5.4-mini', input: 'x', start_within: 'now' })).text, 'resp_');
  const onOwn = await post('/v1/responses', own, { ...RESPONSES, previous_response_id: managed, start_within: 'now' });
  assert.equal(onOwn.headers.get('x-service-served-provider'), 'vendor_a');
});
