// Responses, one JSON body: `start_within: "now"`, `stream: false`. The gateway's fast path —
// standard tier at once, no race, upstream called non-streamed, the body passed through.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { checkResponsesBody, MODEL, PROMPT, type Scenario } from './scenario.ts';

const body = { model: MODEL, input: PROMPT, stream: false };

export const responsesNonstream: Scenario = {
  name: 'responses-nonstream',
  title: 'Responses, stream:false, start_within "now" (passthrough, one JSON body)',
  gateway: { path: '/v1/responses', body: { ...body, start_within: 'now' } },
  upstream: { path: '/v1/responses', body },
  checkBody: checkResponsesBody,
  flexReason: 'standard_requested',
  target: 0.6,
};

if (isMain(import.meta.url)) runMain([responsesNonstream]);
