// Responses, streamed: `start_within: "now"`, `stream: true`, read to the end. The gateway
// commits on the first event and passes the provider's bytes through, parsing only the frame
// that carries usage.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { checkResponsesStream, MODEL, PROMPT, type Scenario } from './scenario.ts';

const body = { model: MODEL, input: PROMPT, stream: true };

export const responsesStream: Scenario = {
  name: 'responses-stream',
  title: 'Responses, stream:true, start_within "now" (passthrough SSE)',
  gateway: { path: '/v1/responses', body: { ...body, start_within: 'now' } },
  upstream: { path: '/v1/responses', body },
  checkBody: checkResponsesStream,
  flexReason: 'standard_requested',
  target: 0.7,
};

if (isMain(import.meta.url)) runMain([responsesStream]);
