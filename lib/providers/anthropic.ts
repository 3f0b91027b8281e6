// vendor_c: the Anthropic Messages API. x-api-key + anthropic-version; no flex tier.
import type { RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';
import { jsonBody, upstreamJson } from './json-body.ts';
import { maxTokensFor } from '../formats/messages/thinking.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

function headers(credential: unknown, betas: readonly string[] | undefined): Record<string, string> {
  return {
    'content-type': 'application/json', 'x-api-key': String(credential), 'anthropic-version': ANTHROPIC_VERSION,
    ...(betas?.length ? { 'anthropic-beta': betas.join(',') } : {}),
  };
}

export function vendorC(baseUrl: string, defaultMaxTokens: number): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  return {
    route: 'vendor_c',
    wires: ['messages'],
    flex: false,
    build(args) {
      const { body, model, stream, credential, translated, betas } = args;
      const set: Record<string, unknown> = { model, stream, service_tier: undefined };
      // The API requires max_tokens. A Messages caller's body is forwarded as sent (no default is
      // synthesised for it, spec); a body translated from another format gets the configured cap
      // (above its thinking budget, which must be below max_tokens).
      if (body.max_tokens === undefined && translated) set.max_tokens = maxTokensFor(body, defaultMaxTokens);
      return {
        origin,
        path: `${base}/v1/messages`,
        headers: { ...headers(credential, betas), accept: stream ? 'text/event-stream' : 'application/json' },
        body: jsonBody(args, set),
      };
    },
    countTokens({ body, credential, betas }) {
      return {
        origin,
        path: `${base}/v1/messages/count_tokens`,
        headers: { ...headers(credential, betas), accept: 'application/json' },
        body: upstreamJson(body),
      };
    },
  };
}
