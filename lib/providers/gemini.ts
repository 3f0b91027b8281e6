// vendor_b: the Gemini Interactions API. x-goog-api-key; flex = body service_tier "flex";
// streaming = body stream:true.
import type { RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';

export function vendorB(baseUrl: string): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  return {
    route: 'vendor_b',
    wires: ['interactions'],
    flex: true,
    build({ body, model, tier, stream, credential }) {
      const out: Record<string, any> = { ...body, model, stream };
      if (tier === 'flex') out.service_tier = 'flex'; else delete out.service_tier;
      return {
        origin,
        path: `${base}/v1beta/interactions`,
        headers: { 'content-type': 'application/json', 'x-goog-api-key': String(credential), accept: stream ? 'text/event-stream' : 'application/json' },
        body: JSON.stringify(out),
      };
    },
  };
}
