// vendor_a: the OpenAI-style API. Responses is canonical; Chat Completions serves the
// Chat-native parameters that have no Responses equivalent. Flex = body service_tier "flex".
import type { RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';
import { jsonBody } from './json-body.ts';

export function vendorA(baseUrl: string): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  return {
    route: 'vendor_a',
    wires: ['responses', 'chat'],
    flex: true,
    build(args) {
      const { wire, body, model, tier, stream, credential } = args;
      const set: Record<string, unknown> = { model, stream, service_tier: tier === 'flex' ? 'flex' : undefined };
      // Settlement needs usage: always ask for it; the responder drops the usage chunk for a caller that did not.
      if (stream && wire === 'chat') set.stream_options = { ...body.stream_options, include_usage: true };
      return {
        origin,
        path: `${base}/v1/${wire === 'chat' ? 'chat/completions' : 'responses'}`,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${String(credential)}`,
          accept: stream ? 'text/event-stream' : 'application/json',
        },
        body: jsonBody(args, set),
      };
    },
  };
}
