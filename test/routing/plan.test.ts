// planRequest (lib/routing/plan.ts): per route of the chain, the key mode (own key first, then the
// managed key, else provider_key_missing naming the route), the wire it is spoken in, the model id
// the route expects, and the upstream body (the caller's own on a passthrough, translated otherwise,
// once per wire). Real adapters and codecs; only the key lookups are plain functions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRequest, requestedMaxOutput, type PlanDeps } from '../../lib/routing/plan.ts';
import { checkRequest, type CallerFormat } from '../../lib/routing/validate.ts';
import { Catalog, DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';
import { CODECS } from '../../lib/formats/index.ts';
import { vendorA } from '../../lib/providers/openai.ts';
import { vendorB } from '../../lib/providers/gemini.ts';
import { vendorC } from '../../lib/providers/anthropic.ts';
import { cloudA } from '../../lib/providers/vertex.ts';
import { cloudB } from '../../lib/providers/bedrock.ts';
import { GatewayError } from '../../lib/errors.ts';
import type { RouteName } from '../../lib/routes.ts';

const catalog = new Catalog(DEFAULT_MODELS);
const adapters = {
  vendor_a: vendorA('http://a'), vendor_b: vendorB('http://b'), vendor_c: vendorC('http://c', 4096),
  cloud_a: cloudA('http://ca'), cloud_b: cloudB('http://cb', 4096),
};
function deps(own: Partial<Record<RouteName, unknown>>, managed: Partial<Record<RouteName, unknown>>): PlanDeps {
  return { adapters, codecs: CODECS, ownKey: (r) => own[r], managedKey: (r) => managed[r] };
}
const checked = (format: CallerFormat, body: Record<string, any>) => checkRequest(format, { start_within: 'now', ...body }, catalog, null);

test('key modes: the own key wins, the managed key fills in, anyManaged says whether one was used', () => {
  const c = checked('interactions', { model: 'gemini-3.5-flash', input: 'hi', provider: ['vendor_b', 'cloud_a'] });
  const both = planRequest(c, deps({ vendor_b: 'own-b' }, { vendor_b: 'managed-b', cloud_a: 'managed-ca' }));
  assert.deepEqual(both.routes.map((r) => [r.route, r.mode, r.credential]), [['vendor_b', 'byok', 'own-b'], ['cloud_a', 'managed', 'managed-ca']]);
  assert.equal(both.anyManaged, true);
  const ownOnly = planRequest(c, deps({ vendor_b: 'own-b', cloud_a: 'own-ca' }, { vendor_b: 'managed-b' }));
  assert.deepEqual(ownOnly.routes.map((r) => r.mode), ['byok', 'byok']);
  assert.equal(ownOnly.anyManaged, false);
});

test('a route with neither key is a 400 provider_key_missing naming that route, before anything is sent', () => {
  const c = checked('interactions', { model: 'gemini-3.5-flash', input: 'hi', provider: ['vendor_b', 'cloud_a'] });
  assert.throws(() => planRequest(c, deps({ vendor_b: 'own-b' }, {})), (e: unknown) => {
    assert.ok(e instanceof GatewayError);
    assert.equal(e.code, 'provider_key_missing');
    assert.equal(e.status, 400);
    assert.equal(e.param, 'provider');
    assert.match(e.message, /'cloud_a'/);
    return true;
  });
});

test('wires: the caller\'s format where the route speaks it (passthrough), else the route\'s canonical wire', () => {
  const keys = deps({}, { vendor_a: 'k', vendor_b: 'k', vendor_c: 'k', cloud_a: 'k', cloud_b: 'k' });
  const wire = (format: CallerFormat, body: Record<string, any>) => planRequest(checked(format, body), keys).routes.map((r) => [r.route, r.wire, r.passthrough]);
  assert.deepEqual(wire('responses', { model: 'gpt-5.4-mini', input: 'hi' }), [['vendor_a', 'responses', true]]);
  assert.deepEqual(wire('messages', { model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], provider: ['vendor_c', 'cloud_b'] }),
    [['vendor_c', 'messages', true], ['cloud_b', 'messages', true]]);
  assert.deepEqual(wire('messages', { model: 'gpt-5.4-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }), [['vendor_a', 'responses', false]]);
  assert.deepEqual(wire('interactions', { model: 'gemini-3.5-flash', input: 'hi', provider: ['vendor_b', 'cloud_a'] }),
    [['vendor_b', 'interactions', true], ['cloud_a', 'vertex', false]]);
  // Chat goes through the canonical Responses path unless it carries Chat-native parameters.
  assert.deepEqual(wire('chat', { model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }] }), [['vendor_a', 'responses', false]]);
  assert.deepEqual(wire('chat', { model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], seed: 1 }), [['vendor_a', 'chat', true]]);
});

test('model ids: a route\'s own id where the catalog names one (Bedrock), else the catalog id', () => {
  const c = checked('messages', { model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], provider: ['vendor_c', 'cloud_b'] });
  const plan = planRequest(c, deps({}, { vendor_c: 'k', cloud_b: 'k' }));
  assert.deepEqual(plan.routes.map((r) => r.modelId), ['claude-haiku-4-5', 'anthropic.claude-haiku-4-5-v1:0']);
});

test('upstream bodies: the caller\'s body on a passthrough; a translation otherwise, made once per wire', () => {
  const c = checked('interactions', { model: 'gemini-3.5-flash', input: 'hello there', provider: ['vendor_b', 'cloud_a'] });
  const plan = planRequest(c, deps({}, { vendor_b: 'k', cloud_a: 'k' }));
  const [b, ca] = plan.routes;
  assert.equal(plan.upstreamBody(b!), c.body, 'the same object, not a copy');
  const vertex = plan.upstreamBody(ca!);
  assert.equal(plan.upstreamBody(ca!), vertex, 'translated once');
  assert.equal(vertex.contents[0].role, 'user');
  assert.equal(vertex.contents[0].parts[0].text, 'hello there');
  assert.equal('input' in vertex, false);
});

test('releaseBodies: after commit the plan holds neither the caller\'s body nor its translations', async () => {
  const { gc } = await import('../helpers/gc.ts');
  // Made in a function of its own, so this test's scope holds only the plan and weak references.
  const made = () => {
    const c = checked('interactions', { model: 'gemini-3.5-flash', input: 'x'.repeat(10_000), provider: ['vendor_b', 'cloud_a'] });
    const plan = planRequest(c, deps({}, { vendor_b: 'k', cloud_a: 'k' }));
    return { plan, caller: new WeakRef(plan.upstreamBody(plan.routes[0]!)), translated: new WeakRef(plan.upstreamBody(plan.routes[1]!)) };
  };
  const { plan, caller, translated } = made();
  await new Promise((r) => setImmediate(r));
  gc();
  assert.notEqual(caller.deref(), undefined, 'held until commit: a fallback may still need it');
  assert.notEqual(translated.deref(), undefined);
  plan.releaseBodies();
  await new Promise((r) => setImmediate(r));
  gc();
  assert.equal(caller.deref(), undefined);
  assert.equal(translated.deref(), undefined);
  assert.deepEqual(plan.checked.body, {});
  assert.equal(plan.checked.model.id, 'gemini-3.5-flash', 'what finish() reads stays');
});

test('requestedMaxOutput reads the cap field of the caller\'s own format (its codec\'s endpoint), integers only', () => {
  const cap = (format: CallerFormat, body: Record<string, any>) => requestedMaxOutput({ format, body });
  assert.equal(cap('responses', { max_output_tokens: 10 }), 10);
  assert.equal(cap('chat', { max_completion_tokens: 11 }), 11);
  assert.equal(cap('chat', { max_tokens: 14 }), 14);
  assert.equal(cap('chat', { max_completion_tokens: 11, max_tokens: 14 }), 11, 'max_completion_tokens first');
  assert.equal(cap('messages', { max_tokens: 12 }), 12);
  assert.equal(cap('interactions', { generation_config: { max_output_tokens: 13 } }), 13);
  assert.equal(cap('responses', { max_tokens: 12 }), undefined, "another format's field is not read");
  assert.equal(cap('messages', {}), undefined);
  assert.equal(cap('messages', { max_tokens: 1.5 }), undefined);
  assert.equal(cap('messages', { max_tokens: '12' }), undefined);
});
