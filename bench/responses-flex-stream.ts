// Responses, streamed, with a duration `start_within`: the gateway races flex, and the simulator's
// flex tier starts at once, so flex commits long before the standard hedge would launch
// (`flex_committed`). Baselines send the flex request itself (`service_tier: "flex"`), which is
// what the gateway sends upstream.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { checkResponsesStream, MODEL, PROMPT, type Scenario } from './scenario.ts';

const body = { model: MODEL, input: PROMPT, stream: true };

export const responsesFlexStream: Scenario = {
  name: 'responses-flex-stream',
  title: 'Responses, stream:true, start_within "00h-00m-30s" (flex race, flex starts at once)',
  gateway: { path: '/v1/responses', body: { ...body, start_within: '00h-00m-30s' } },
  upstream: { path: '/v1/responses', body: { ...body, service_tier: 'flex' } },
  checkBody(text) {
    return checkResponsesStream(text) ?? (text.includes('"service_tier":"flex"') ? undefined : 'not served by the flex tier');
  },
  flexReason: 'flex_committed',
  target: 0.5,
};

if (isMain(import.meta.url)) runMain([responsesFlexStream]);
