// vendor_c: the Anthropic Messages API. x-api-key + anthropic-version; no flex tier.
import type { RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export function vendorC(baseUrl: string, defaultMaxTokens: number): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  return {
    route: 'vendor_c',
    wires: ['messages'],
    flex: false,
    build({ body, model, stream, credential, translated }) {
      const out: Record<string, any> = { ...body, model, stream };
      delete out.service_tier;
      // The API requires max_tokens. A Messages caller's body is forwarded as sent (no default is
      // synthesised for it, spec); a body translated from another format gets the configured cap.
      if (out.max_tokens === undefined && translated) out.max_tokens = defaultMaxTokens;
      return {
        origin,
        path: `${base}/v1/messages`,
        headers: { 'content-type': 'application/json', 'x-api-key': String(credential), 'anthropic-version': ANTHROPIC_VERSION, accept: stream ? 'text/event-stream' : 'application/json' },
        body: JSON.stringify(out),
      };
    },
  };
}
