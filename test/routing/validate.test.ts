// checkRequest (lib/routing/validate.ts): the order of the checks, each rule's code and param, and
// what the checked request carries forward (routes, flags, the body without the gateway's fields).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRequest, keyDefaults, type CallerFormat } from '../../lib/routing/validate.ts';
import { Catalog, DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';
import { GatewayError } from '../../lib/errors.ts';

const catalog = new Catalog(DEFAULT_MODELS);
const check = (format: CallerFormat, body: Record<string, any>, opts: { default?: string | null; beta?: string | string[]; provider?: string } = {}) =>
  checkRequest(format, body, catalog, opts.default === undefined ? null : opts.default, { 'anthropic-beta': opts.beta }, opts.provider ?? null);

const responses = (extra: Record<string, any> = {}) => ({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now', ...extra });
const chat = (extra: Record<string, any> = {}) => ({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now', ...extra });
const messages = (extra: Record<string, any> = {}) => ({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], start_within: 'now', ...extra });
const interactions = (extra: Record<string, any> = {}) => ({ model: 'gemini-3.5-flash', input: 'hi', start_within: 'now', ...extra });

function refused(fn: () => unknown, code: string, param?: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.code, code);
    if (param !== undefined) assert.equal(e.param, param);
    return true;
  });
}

test('start_within: required unless the key has a default; the default applies only when absent', () => {
  const { start_within: _, ...noStart } = responses();
  refused(() => check('responses', noStart), 'missing_start_within', 'start_within');
  assert.deepEqual(check('responses', noStart, { default: '00h-01m-00s' }).startWithin, { kind: 'duration', ms: 60_000 });
  assert.deepEqual(check('responses', responses(), { default: '00h-01m-00s' }).startWithin, { kind: 'now' });
  refused(() => check('responses', responses({ start_within: '1 minute' })), 'invalid_start_within', 'start_within');
});

test('start_within that is not a string (null, a number, a boolean, an object, an array) is invalid_start_within in every caller format, with or without a key default', () => {
  const bodies = { responses, chat, messages, interactions } as const;
  for (const [format, body] of Object.entries(bodies) as Array<[CallerFormat, (extra?: Record<string, any>) => Record<string, any>]>) {
    for (const value of [null, 30, 0, true, {}, ['now']]) {
      for (const fallback of [null, 'now']) {
        // An explicit null is a value, not an absent field: the key's default does not stand in for it.
        refused(() => check(format, body({ start_within: value }), { default: fallback }), 'invalid_start_within', 'start_within');
      }
    }
    const { start_within: _, ...absent } = body();
    refused(() => check(format, absent), 'missing_start_within', 'start_within');
    assert.deepEqual(check(format, absent, { default: 'now' }).startWithin, { kind: 'now' }, `${format}: absent takes the default`);
  }
  // Another field's schema failure keeps its own code.
  refused(() => check('responses', responses({ stream: 'yes' })), 'invalid_request', 'stream');
});

test('the gateway\'s fields leave the body; the rest stays; flags are read from it', () => {
  const c = check('chat', chat({ include_cost: true, provider: ['vendor_a'], retry: { count: 2 }, stream: true, stream_options: { include_usage: true }, temperature: 0.5 }));
  assert.deepEqual(Object.keys(c.body).sort(), ['messages', 'model', 'stream', 'stream_options', 'temperature']);
  assert.equal(c.includeCost, true);
  assert.equal(c.stream, true);
  assert.equal(c.includeUsage, true);
  assert.equal(c.explicitProvider, true);
  assert.deepEqual(c.retry, { count: 2, backoff: 'exponential', jitter: true });
  const plain = check('responses', responses());
  assert.equal(plain.includeCost, false);
  assert.equal(plain.stream, false);
  assert.equal(plain.explicitProvider, false);
  assert.deepEqual(plain.routes, ['vendor_a'], 'without provider: the model\'s native route');
});

test('model and provider chain', () => {
  refused(() => check('responses', responses({ model: 'no-such-model' })), 'model_not_found', 'model');
  for (const provider of [[], ['vendor_x'], ['vendor_b', 'vendor_b'], 'vendor_b', [1]]) {
    refused(() => check('interactions', interactions({ provider })), 'invalid_provider_chain', 'provider');
  }
  refused(() => check('interactions', interactions({ provider: ['vendor_b', 'vendor_a'] })), 'provider_model_mismatch', 'provider');
  assert.deepEqual(check('interactions', interactions({ provider: ['cloud_a', 'vendor_b'] })).routes, ['cloud_a', 'vendor_b']);
});

test('an agent key\'s default_provider: the chain of a request that names none, checked as if the body named it', () => {
  const { start_within: _, ...noStart } = messages();
  const viaKey = check('messages', noStart, { default: 'now', provider: 'cloud_b vendor_c' });
  assert.deepEqual(viaKey.routes, ['cloud_b', 'vendor_c']);
  assert.equal(viaKey.explicitProvider, true, 'requested (by the key), not the model\'s native route');
  assert.deepEqual(check('messages', messages({ provider: ['vendor_c'] }), { provider: 'cloud_b' }).routes, ['vendor_c'], 'the body\'s chain wins');
  assert.throws(() => check('responses', responses(), { provider: 'cloud_b' }), (e: any) => {
    assert.equal(e.code, 'provider_model_mismatch');
    assert.match(e.message, /'cloud_b' \(the API key's default_provider\) cannot serve 'gpt-5.4-mini'/);
    return true;
  });
  refused(() => check('messages', messages({ start_within: '00h-00m-30s' }), { provider: 'cloud_b' }), 'flex_unsupported_on_cloud', 'start_within');
});

test('conversation state with a key\'s chain: a chain holding the issuing route gives way to it; one without it is refused naming the key\'s chain', () => {
  const next = { previous_interaction_id: 'v1_ChdvYmplY3Q', start_within: 'now' };
  assert.deepEqual(check('interactions', interactions(next), { provider: 'cloud_a vendor_b' }).routes, ['vendor_b']);
  assert.throws(() => check('interactions', interactions(next), { provider: 'cloud_a' }), (e: any) => {
    assert.equal(e.code, 'conversation_state_unroutable');
    assert.match(e.message, /default_provider \(cloud_a\) does not include/);
    return true;
  });
  // A body's own chain keeps the body's rule: the issuing route first.
  refused(() => check('interactions', interactions({ ...next, provider: ['cloud_a', 'vendor_b'] })), 'conversation_state_unroutable');
});

test('keyDefaults: a key\'s defaults are checked by the rules of the fields they stand for', () => {
  assert.deepEqual(keyDefaults('now', ['cloud_b', 'vendor_c']), { startWithin: 'now', provider: ['cloud_b', 'vendor_c'] });
  assert.deepEqual(keyDefaults(null, null), { startWithin: null, provider: null });
  refused(() => keyDefaults('11m', null), 'invalid_start_within');
  for (const provider of [[], ['vendor_x'], ['cloud_b', 'cloud_b'], 'cloud_b']) refused(() => keyDefaults(null, provider), 'invalid_provider_chain', 'default_provider');
  assert.throws(() => keyDefaults(null, ['vendor_x']), { message: /^default_provider must be a non-empty array/ });
  // A key every request of which would be refused (a race on a cloud route) is refused at creation.
  refused(() => keyDefaults('00h-01m-00s', ['cloud_a', 'vendor_b']), 'flex_unsupported_on_cloud', 'default_provider');
  assert.deepEqual(keyDefaults('00h-01m-00s', ['vendor_b', 'cloud_a']).provider, ['vendor_b', 'cloud_a']);
  assert.deepEqual(keyDefaults('now', ['cloud_a']).provider, ['cloud_a']);
});

test('retry: count 1..5, backoff exponential|linear, jitter boolean, nothing else', () => {
  assert.deepEqual(check('responses', responses({ retry: { count: 5, backoff: 'linear', jitter: false } })).retry, { count: 5, backoff: 'linear', jitter: false });
  for (const retry of [{ count: 0 }, { count: 6 }, { count: 1.5 }, { count: 2, backoff: 'random' }, { count: 2, jitter: 'yes' }, { count: 2, extra: 1 }, [], 3, null]) {
    refused(() => check('responses', responses({ retry })), 'invalid_retry', 'retry');
  }
});

test('a duration start_within: not on a cloud route first, not for vendor C, not for a model without flex', () => {
  const d = '00h-00m-30s';
  assert.deepEqual(check('interactions', interactions({ start_within: d, provider: ['vendor_b', 'cloud_a'] })).routes, ['vendor_b', 'cloud_a']);
  refused(() => check('interactions', interactions({ start_within: d, provider: ['cloud_a'] })), 'flex_unsupported_on_cloud', 'start_within');
  refused(() => check('messages', messages({ start_within: d })), 'flex_unsupported_for_vendor_c', 'start_within');
  refused(() => check('responses', responses({ start_within: d, model: 'gpt-5.4-nano' })), 'flex_model_not_capable', 'start_within');
  assert.doesNotThrow(() => check('messages', messages({ start_within: 'now' })));
});

test('schema: unknown parameters by name; a missing model names model', () => {
  refused(() => check('responses', responses({ nonsense: 1 })), 'unsupported_parameter', 'nonsense');
  refused(() => check('responses', { input: 'hi', start_within: 'now' }), 'invalid_request', 'model');
});

test('Responses and Chat: service_tier is dropped (the tier follows from start_within); Chat n > 1 refused', () => {
  assert.equal(check('responses', responses({ service_tier: 'priority' })).body.service_tier, undefined);
  assert.equal(check('chat', chat({ service_tier: 'flex' })).body.service_tier, undefined);
  refused(() => check('chat', chat({ n: 2 })), 'unsupported_value', 'n');
  assert.doesNotThrow(() => check('chat', chat({ n: 1 })));
});

test('Chat-native parameters: real values switch to the Chat passthrough (its own wire) on vendor A with "now" only', () => {
  assert.equal(check('chat', chat()).ownWire, false);
  assert.equal(check('chat', chat({ seed: 7 })).ownWire, true);
  for (const empty of [{ seed: null }, { logprobs: false }, { stop: [] }, { logit_bias: {} }, { modalities: ['text'] }]) {
    assert.equal(check('chat', chat(empty)).ownWire, false, JSON.stringify(empty));
  }
  assert.equal(check('chat', chat({ modalities: ['text', 'audio'] })).ownWire, true);
  refused(() => check('chat', chat({ seed: 7, model: 'gemini-3.5-flash' })), 'unsupported_parameter', 'seed');
  refused(() => check('chat', chat({ seed: 7, start_within: '00h-00m-30s' })), 'unsupported_parameter', 'seed');
});

test('Messages: service_tier refused; unknown beta header values and beta fields refused; vendor C-only fields on other models refused', () => {
  refused(() => check('messages', messages({ service_tier: 'auto' })), 'service_tier_not_allowed', 'service_tier');
  refused(() => check('messages', messages(), { beta: 'some-experiment-2099-01-01' }), 'beta_not_supported');
  refused(() => check('messages', messages(), { beta: ['interleaved-thinking-2025-05-14', 'some-experiment-2099-01-01'] }), 'beta_not_supported');
  assert.deepEqual(check('messages', messages(), { beta: 'interleaved-thinking-2025-05-14, effort-2025-11-24' }).betas,
    ['interleaved-thinking-2025-05-14', 'effort-2025-11-24'], 'understood values are kept for the route adapters');
  assert.deepEqual(check('messages', messages()).betas, []);
  refused(() => check('messages', messages({ mcp_servers: [] })), 'beta_not_supported', 'mcp_servers');
  assert.doesNotThrow(() => check('messages', messages({ top_k: 3 })), 'native on vendor C');
  const onA = (extra: Record<string, any>) => check('messages', messages({ model: 'gpt-5.4-mini', ...extra }));
  refused(() => onA({ top_k: 3 }), 'unsupported_parameter', 'top_k');
  refused(() => onA({ system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }] }), 'unsupported_parameter', 'cache_control');
  refused(() => onA({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }] }] }), 'unsupported_parameter', 'document');
  // A PDF by URL is fetched by the provider: OpenAI's input_file takes one (docs/decisions.md).
  assert.doesNotThrow(() => onA({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }] }] }));
  assert.doesNotThrow(() => onA({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERg==' } }] }] }));
});

test('Interactions: service_tier refused; generation_config keys beyond the mapped ones only on vendor B models', () => {
  refused(() => check('interactions', interactions({ service_tier: 'flex' })), 'service_tier_not_allowed', 'service_tier');
  assert.doesNotThrow(() => check('interactions', interactions({ generation_config: { seed: 7 } })));
  const onA = (generation_config: Record<string, any>) => check('interactions', interactions({ model: 'gpt-5.4-mini', generation_config }));
  refused(() => onA({ seed: 7 }), 'unsupported_generation_config', 'generation_config.seed');
  assert.doesNotThrow(() => onA({ max_output_tokens: 100, temperature: 0.2, thinking_level: 'low' }));
});
