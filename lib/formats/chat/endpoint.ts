// POST /v1/chat/completions: the request rules of the Chat Completions format. Chat rides the
// canonical Responses path unless it carries Chat-native parameters, which need vendor A's Chat
// endpoint (its own wire, the body as it is).
import { GatewayError } from '../../errors.ts';
import type { Endpoint } from '../types.ts';
import { CHAT_NATIVE, isRealChatNative } from '../openai-shared.ts';
import schema from '../../../schemas/chat.json' with { type: 'json' };

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
    const native = CHAT_NATIVE.filter((k) => isRealChatNative(k, body[k]));
    request.ownWire = false;
    if (request.model.family !== 'vendor_a') {
      if (native.length) throw onlyVendorA(`'${native[0]}'`, native[0]!);
      // Only OpenAI takes an image detail; another vendor's wire has no slot for it.
      const detail = imageDetailParam(body.messages);
      if (detail) throw onlyVendorA('An image detail', detail);
      return;
    }
    if (native.length === 0) return;
    const param = native[0];
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

const onlyVendorA = (what: string, param: string): GatewayError =>
  new GatewayError('unsupported_parameter', `${what} is only supported on vendor A models.`, { param });

/** Where the first image part asks a detail other than "auto", if one does. */
function imageDetailParam(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (const [i, message] of messages.entries()) {
    if (message?.role !== 'user' || !Array.isArray(message.content)) continue;
    for (const [j, part] of message.content.entries()) {
      const detail = part?.type === 'image_url' ? part.image_url?.detail : undefined;
      if (detail !== undefined && detail !== null && detail !== 'auto') return `messages[${i}].content[${j}].image_url.detail`;
    }
  }
  return undefined;
}
