// POST /v1/interactions: the request rules of the Gemini Interactions format.
import { GatewayError } from '../../errors.ts';
import type { Endpoint } from '../types.ts';
import schema from '../../../schemas/interactions.json' with { type: 'json' };

/** generation_config keys the Interactions format maps for every model. */
const MAPPED_GENERATION_CONFIG = new Set([
  'max_output_tokens', 'thinking_level', 'temperature', 'top_p', 'stop_sequences', 'tool_choice', 'thinking_summaries',
]);

export const interactionsEndpoint: Endpoint = {
  path: '/v1/interactions',
  schema,
  state: { fields: ['previous_interaction_id', 'continuation_token'], route: 'vendor_b' },
  check(request) {
    const body = request.body;
    if (body.service_tier !== undefined) throw new GatewayError('service_tier_not_allowed', undefined, { param: 'service_tier' });
    if (request.model.family === 'vendor_b' || !body.generation_config) return;
    const extra = Object.keys(body.generation_config).find((k) => !MAPPED_GENERATION_CONFIG.has(k));
    if (extra) {
      const param = `generation_config.${extra}`;
      throw new GatewayError('unsupported_generation_config', `${param} is only supported on vendor B models.`, { param });
    }
  },
  maxOutput(body) {
    const value = body.generation_config?.max_output_tokens;
    return Number.isInteger(value) ? value : undefined;
  },
};
