// POST /v1/responses: the request rules of the Responses format.
import { GatewayError } from '../../errors.ts';
import type { Endpoint } from '../types.ts';
import schema from '../../../schemas/responses.json' with { type: 'json' };

export const responsesEndpoint: Endpoint = {
  path: '/v1/responses',
  schema,
  state: { fields: ['previous_response_id', 'conversation'], route: 'vendor_a' },
  check(request) {
    delete request.body.service_tier;   // the tier follows from start_within
    // Only OpenAI takes an image detail; another vendor's wire has no slot for it: refused, not dropped.
    const param = request.model.family === 'vendor_a' ? undefined : imageDetailParam(request.body.input);
    if (param) throw new GatewayError('unsupported_parameter', 'An image or file detail is only supported on vendor A models.', { param });
  },
  maxOutput(body) {
    return Number.isInteger(body.max_output_tokens) ? body.max_output_tokens : undefined;
  },
};

/** Where the first input_image or input_file part asks a detail other than "auto", if one does. */
function imageDetailParam(input: unknown): string | undefined {
  if (!Array.isArray(input)) return undefined;
  for (const [i, item] of input.entries()) {
    if (!Array.isArray(item?.content)) continue;
    for (const [j, part] of item.content.entries()) {
      const detail = part?.type === 'input_image' || part?.type === 'input_file' ? part.detail : undefined;
      if (detail !== undefined && detail !== null && detail !== 'auto') return `input[${i}].content[${j}].detail`;
    }
  }
  return undefined;
}
