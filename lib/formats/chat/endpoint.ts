// POST /v1/chat/completions: the request rules of the Chat Completions format. Chat rides the
// canonical Responses path unless it carries Chat-native parameters, which need vendor A's Chat
// endpoint (its own wire, the body as it is).
import { GatewayError } from '../../errors.ts';
import type { Endpoint } from '../types.ts';
import schema from '../../../schemas/chat.json' with { type: 'json' };

/** Chat-native parameters that need vendor A's Chat endpoint (spec, POST /v1/chat/completions). */
const CHAT_NATIVE = [
  'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'stop', 'prediction', 'audio', 'modalities',
  'web_search_options',
];

export const chatEndpoint: Endpoint = {
  path: '/v1/chat/completions',
  schema,
  check(request) {
    const body = request.body;
    if (body.n !== undefined && body.n > 1) {
      throw new GatewayError('unsupported_value', 'n greater than 1 is not supported.', { param: 'n' });
    }
    delete body.service_tier;
    request.includeUsage = body.stream_options?.include_usage === true;
    const native = CHAT_NATIVE.filter((k) => isRealValue(k, body[k]));
    request.ownWire = false;
    if (native.length === 0) return;
    const param = native[0];
    if (request.model.family !== 'vendor_a') {
      throw new GatewayError('unsupported_parameter', `'${param}' is only supported on vendor A models.`, { param });
    }
    if (request.startWithin.kind === 'duration') {
      throw new GatewayError('unsupported_parameter', `'${param}' cannot be combined with a duration start_within; use "now".`, { param });
    }
    request.ownWire = true;
  },
  maxOutput(body) {
    const value = body.max_completion_tokens ?? body.max_tokens;
    return Number.isInteger(value) ? value : undefined;
  },
  // The gateway always asks vendor A for usage (settlement needs it); this is the chunk it comes in.
  usageOnlyFrame: (data) => Array.isArray(data.choices) && data.choices.length === 0,
};

/** A Chat-native parameter counts when set to a real value (not null/false/empty; text-only modalities do not). */
function isRealValue(key: string, value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (key === 'modalities') return Array.isArray(value) && value.some((m) => m !== 'text');
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value as object).length > 0;
  return true;
}
