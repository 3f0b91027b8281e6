// The upstream refusal classifier, on the providers' real error bodies (reference/wire-formats.md,
// "Errors"): what is retried, what moves flex to standard, and what ends the request at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classify } from '../../lib/stream/failure.ts';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const openai = (type: string, code: string | null) => JSON.stringify({ error: { message: 'You exceeded your current quota, please check your plan and billing details.', type, param: null, code } });

test('OpenAI billing 429s are never retried, whichever name carries the billing word', () => {
  for (const code of ['insufficient_quota', 'credit_balance_exhausted', 'organization_spend_limit_exceeded', 'project_spend_limit_exceeded', null]) {
    for (const tier of ['standard', 'flex'] as const) {
      const f = classify(429, {}, openai('insufficient_quota', code), tier, NOW);
      assert.equal(f.kind, 'fatal', `${code} on ${tier}`);
      assert.equal(f.billing, true);
    }
  }
});

test("Anthropic's spend-cap 429 (details.error_code) is not retried; its ordinary rate limit is", () => {
  const cap = classify(429, {}, JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'You have reached your specified workspace API usage limits.', details: { error_code: 'enforced_spend_limit_reached' } } }), 'standard', NOW);
  assert.deepEqual([cap.kind, cap.billing], ['fatal', true]);
  const limited = classify(429, { 'retry-after': '7' }, JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } }), 'standard', NOW);
  assert.deepEqual([limited.kind, limited.billing, limited.retryAfterMs], ['transient', undefined, 7_000]);
});

test('rate limits, overloads and flex capacity refusals stay retryable', () => {
  assert.equal(classify(429, {}, openai('requests', 'rate_limit_exceeded'), 'standard', NOW).kind, 'transient');
  assert.equal(classify(429, {}, openai('requests', 'rate_limit_exceeded'), 'flex', NOW).kind, 'capacity');
  assert.equal(classify(529, {}, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), 'standard', NOW).kind, 'transient');
  const google = classify(429, {}, JSON.stringify({ error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34.4s' }] } }), 'standard', NOW);
  assert.deepEqual([google.kind, google.retryAfterMs, google.billing], ['transient', 34_400, undefined]);
  assert.equal(classify(400, {}, openai('invalid_request_error', 'context_length_exceeded'), 'standard', NOW).kind, 'fatal');
});
