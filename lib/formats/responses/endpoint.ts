// POST /v1/responses: the request rules of the Responses format.
import type { Endpoint } from '../types.ts';
import schema from '../../../schemas/responses.json' with { type: 'json' };

export const responsesEndpoint: Endpoint = {
  path: '/v1/responses',
  schema,
  state: { fields: ['previous_response_id', 'conversation'], route: 'vendor_a' },
  check(request) {
    delete request.body.service_tier;   // the tier follows from start_within
  },
  maxOutput(body) {
    return Number.isInteger(body.max_output_tokens) ? body.max_output_tokens : undefined;
  },
};
