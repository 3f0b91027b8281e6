// Every request field of the pinned official SDKs' request types is known to the gateway's schema
// of that caller format. The samples below are typed `Every<SDK params>`: a new SDK release that
// adds a field fails the type check (`make test` runs tsc first) until a sample — and the schema
// entry the test then needs — is added. Each field is sent alone on a minimal request; only the
// refusals the spec asks for are allowed (listed per field).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions/completions';
import type { MessageCreateParamsBase } from '@anthropic-ai/sdk/resources/messages/messages';
import type { Interactions } from '@google/genai';
import { checkRequest, type CallerFormat } from '../../lib/routing/validate.ts';
import { Catalog, DEFAULT_MODELS } from '../../lib/catalog/catalog.ts';
import { GatewayError } from '../../lib/errors.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Every<T> = { [K in keyof Required<T>]: unknown };

const responses: Every<ResponseCreateParamsBase> = {
  access_programs: [], background: false, context_management: [{ type: 'compaction' }], conversation: 'conv_1', image: null,
  include: ['reasoning.encrypted_content'], input: 'hi', instructions: 'be brief', max_output_tokens: 64, max_tool_calls: 2,
  metadata: { a: 'b' }, model: 'gpt-5.4', moderation: null, parallel_tool_calls: true, previous_response_id: 'resp_1',
  prompt: { id: 'pmpt_1' }, prompt_cache_key: 'k', prompt_cache_options: null, prompt_cache_retention: '24h',
  reasoning: { effort: 'low' }, safety_identifier: 'u1', service_tier: 'flex', store: false, stream: false,
  stream_options: { include_obfuscation: false }, temperature: 0.5, text: { verbosity: 'low' }, tool_choice: 'auto',
  tools: [], top_logprobs: 0, top_p: 1, truncation: 'auto', user: 'u1',
};

const chat: Every<ChatCompletionCreateParamsBase> = {
  messages: [{ role: 'user', content: 'hi' }], model: 'gpt-5.4', audio: { voice: 'alloy', format: 'mp3' }, frequency_penalty: 0.1,
  function_call: 'auto', functions: [{ name: 'f', parameters: { type: 'object' } }], logit_bias: { '1': 1 }, logprobs: true,
  max_completion_tokens: 64, max_tokens: 64, metadata: { a: 'b' }, modalities: ['text'], moderation: null, n: 1,
  parallel_tool_calls: true, prediction: { type: 'content', content: 'x' }, presence_penalty: 0.1, prompt_cache_key: 'k',
  prompt_cache_options: null, prompt_cache_retention: '24h', reasoning_effort: 'low', response_format: { type: 'text' },
  safety_identifier: 'u1', seed: 1, service_tier: 'flex', stop: ['x'], store: false, stream: false,
  stream_options: { include_usage: true }, temperature: 0.5, tool_choice: 'auto', tools: [], top_logprobs: 1, top_p: 1,
  user: 'u1', verbosity: 'low', web_search_options: {},
};

const messages: Every<MessageCreateParamsBase> = {
  max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], model: 'claude-haiku-4-5', cache_control: { type: 'ephemeral' },
  container: 'cntr_1', diagnostics: null, inference_geo: 'us', metadata: { user_id: 'u1' },
  output_config: { effort: 'low' }, service_tier: 'auto', speed: 'standard', stop_sequences: ['x'], stream: false,
  system: 'be brief', thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'auto' }, tools: [],
  user_profile_id: 'up_1', workspace_id: 'wrkspc_1',
};

const interactions: Every<Interactions.CreateModelInteractionParamsNonStreaming> = {
  background: false, cached_content: 'cachedContents/1', continuation_token: 'tok', environment: 'env_1',
  generation_config: { max_output_tokens: 64 }, input: 'hi', labels: { a: 'b' }, model: 'gemini-3.5-flash',
  previous_interaction_id: 'v1_1', response_format: { type: 'text' }, response_mime_type: 'text/plain',
  response_modalities: ['text'], safety_settings: [], service_tier: 'flex', store: false, stream: false,
  system_instruction: 'be brief', tools: [], webhook_config: { uris: ['https://example.com'] },
};

/** Fields the spec refuses on that caller format, with the code it names. */
const REFUSED: Partial<Record<CallerFormat, Record<string, string>>> = {
  messages: { service_tier: 'service_tier_not_allowed', container: 'beta_not_supported' },
  interactions: { service_tier: 'service_tier_not_allowed', webhook_config: 'unsupported_parameter' },
};

const REQUIRED: Record<CallerFormat, string[]> = {
  responses: ['model', 'input'], chat: ['model', 'messages'], messages: ['model', 'messages', 'max_tokens'], interactions: ['model', 'input'],
};

const catalog = new Catalog(DEFAULT_MODELS);

function cases(format: CallerFormat, samples: Record<string, unknown>): void {
  test(`${format}: every field of the pinned SDK's request type is accepted (${Object.keys(samples).length} fields)`, () => {
    const base = Object.fromEntries(REQUIRED[format].map((k) => [k, samples[k]]));
    const outcomes: Record<string, string> = {};
    for (const [field, value] of Object.entries(samples)) {
      try {
        // "now": Chat-native parameters cannot be combined with a duration (spec).
        checkRequest(format, { ...base, [field]: value, start_within: 'now' }, catalog, null);
        outcomes[field] = 'accepted';
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        outcomes[field] = `${err.code}: ${err.message}`;
      }
    }
    const expected = Object.fromEntries(Object.keys(samples).map((f) => [f, REFUSED[format]?.[f] ?? 'accepted']));
    const got = Object.fromEntries(Object.entries(outcomes).map(([f, o]) => [f, o.split(':')[0]]));
    assert.deepEqual(got, expected, JSON.stringify(outcomes, null, 1));
  });
}

cases('responses', responses);
cases('chat', chat);
cases('messages', messages);
cases('interactions', interactions);

test('responses: Codex\'s client_metadata (not in the SDK type) is accepted', () => {
  const c = checkRequest('responses', { model: 'gpt-5.4', input: 'hi', start_within: 'now', client_metadata: { 'x-codex-turn': '1' } }, catalog, null);
  assert.deepEqual(c.body.client_metadata, { 'x-codex-turn': '1' });
});

test('an unknown field is still refused, named', () => {
  assert.throws(() => checkRequest('responses', { model: 'gpt-5.4', input: 'hi', start_within: 'now', no_such_field: 1 }, catalog, null),
    (e: any) => e.code === 'unsupported_parameter' && e.param === 'no_such_field');
});

// ---- through the gateway: one request carrying every field at once, on every route of the family
// and on another family (forwarded where the route's own API takes it, dropped where it means
// nothing). Left out: what the spec refuses on that format, conversation state (pinned to its
// issuing route, test/e2e/conversation-state.test.ts), and streaming (tested everywhere else).

let t: TestGateway;
before(async () => { t = await startTestGateway(); key = (await t.newOrg({ balance: 100_000_000 })).key; });
after(() => t.close());
let key: string;

const OMIT: Record<CallerFormat, string[]> = {
  responses: ['previous_response_id', 'conversation', 'stream', 'service_tier'],
  chat: ['stream', 'service_tier'],
  messages: ['stream', 'service_tier', 'container'],
  interactions: ['previous_interaction_id', 'continuation_token', 'stream', 'service_tier', 'webhook_config'],
};
const PATHS: Record<CallerFormat, string> = { responses: '/v1/responses', chat: '/v1/chat/completions', messages: '/v1/messages', interactions: '/v1/interactions' };
/** [model, route, fields the spec refuses on that model (vendor C's own fields elsewhere)] */
const TARGETS: Record<CallerFormat, Array<[string, string, string[]?]>> = {
  responses: [['gpt-5.4', 'vendor_a'], ['gemini-3.5-flash', 'vendor_b'], ['claude-haiku-4-5', 'vendor_c']],
  chat: [['gpt-5.4', 'vendor_a'], ['gemini-3.5-flash', 'cloud_a', ['audio', 'prediction', 'web_search_options', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'stop', 'presence_penalty', 'frequency_penalty']]],
  messages: [['claude-haiku-4-5', 'vendor_c'], ['claude-haiku-4-5', 'cloud_b'], ['gpt-5.4', 'vendor_a', ['stop_sequences', 'cache_control', 'inference_geo', 'output_config']]],
  interactions: [['gemini-3.5-flash', 'vendor_b'], ['gemini-3.5-flash', 'cloud_a', ['cached_content', 'environment']], ['gpt-5.4', 'vendor_a', ['cached_content', 'environment']]],
};

for (const [format, samples] of [['responses', responses], ['chat', chat], ['messages', messages], ['interactions', interactions]] as const) {
  test(`${format}: one request with every other SDK field is served on each route`, async () => {
    const body = Object.fromEntries(Object.entries(samples).filter(([k]) => !OMIT[format].includes(k)));
    for (const [model, route, refused = []] of TARGETS[format]) {
      const sent = Object.fromEntries(Object.entries(body).filter(([k]) => !refused.includes(k)));
      const r = await fetch(`${t.url}${PATHS[format]}`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...sent, model, provider: [route], start_within: 'now' }),
      });
      const text = await r.text();
      assert.equal(r.status, 200, `${format} → ${route}: ${text}`);
      assert.equal(r.headers.get('x-service-served-provider'), route);
    }
  });
}
