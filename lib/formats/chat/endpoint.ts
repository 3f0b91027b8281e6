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
  check(c) {
    const b = c.body;
    if (b.n !== undefined && b.n > 1) throw new GatewayError('unsupported_value', 'n greater than 1 is not supported.', { param: 'n' });
    delete b.service_tier;
    c.includeUsage = b.stream_options?.include_usage === true;
    const native = CHAT_NATIVE.filter((k) => isRealValue(k, b[k]));
    c.ownWire = false;
    if (native.length === 0) return;
    const param = native[0];
    if (c.model.family !== 'vendor_a') {
      throw new GatewayError('unsupported_parameter', `'${param}' is only supported on vendor A models.`, { param });
    }
    if (c.startWithin.kind === 'duration') {
      throw new GatewayError('unsupported_parameter', `'${param}' cannot be combined with a duration start_within; use "now".`, { param });
    }
    c.ownWire = true;
  },
  maxOutput(body) {
    const v = body.max_completion_tokens ?? body.max_tokens;
    return Number.isInteger(v) ? v : undefined;
  },
  // The gateway always asks vendor A for usage (settlement needs it); this is the chunk it comes in.
  usageOnlyFrame: (data) => Array.isArray(data.choices) && data.choices.length === 0,
};

/** A Chat-native parameter counts when set to a real value (not null/false/empty; text-only modalities do not). */
function isRealValue(key: string, v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (key === 'modalities') return Array.isArray(v) && v.some((m) => m !== 'text');
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}
