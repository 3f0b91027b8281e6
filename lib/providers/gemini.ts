// vendor_b: the Gemini Interactions API. x-goog-api-key; flex = body service_tier "flex";
// streaming = body stream:true.
import type { RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';
import { jsonBody } from './json-body.ts';

export function vendorB(baseUrl: string): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  return {
    route: 'vendor_b',
    wires: ['interactions'],
    flex: true,
    build(args) {
      const { model, tier, stream, credential } = args;
      const set = { model, stream, service_tier: tier === 'flex' ? 'flex' : undefined };
      return {
        origin,
        path: `${base}/v1beta/interactions`,
        headers: {
          'content-type': 'application/json',
          'x-goog-api-key': String(credential),
          accept: stream ? 'text/event-stream' : 'application/json',
        },
        body: jsonBody(args, set),
      };
    },
  };
}
