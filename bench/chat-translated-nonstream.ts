// Chat Completions caller, one JSON body, on vendor A's canonical Responses wire: the gateway
// translates the Chat body to Responses, calls upstream non-streamed ("now", nothing to race),
// decodes the Responses body to the IR and encodes one chat.completion. Baselines send the
// translated Responses body, non-streamed.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { translatedUpstream } from './chat-translated-stream.ts';
import { checkResponsesBody, MODEL, PROMPT, type Scenario } from './scenario.ts';

const caller = { model: MODEL, messages: [{ role: 'user', content: PROMPT }], stream: false };

function checkChatBody(text: string): string | undefined {
  let body: any;
  try { body = JSON.parse(text); } catch { return 'body is not JSON'; }
  if (body.object !== 'chat.completion') return `object = ${body.object}`;
  if (!body.choices?.[0]?.message?.content) return 'no message content';
  if (!body.usage?.completion_tokens) return 'no usage';
  return undefined;
}

export const chatTranslatedNonstream: Scenario = {
  name: 'chat-translated-nonstream',
  title: 'Chat caller → Responses upstream, stream:false, start_within "now" (translated JSON)',
  gateway: { path: '/v1/chat/completions', body: { ...caller, start_within: 'now' } },
  upstream: await translatedUpstream(caller, false),
  checkBody: (text, target) => (target === 'gateway' ? checkChatBody(text) : checkResponsesBody(text)),
  flexReason: 'standard_requested',
  target: 0.45,
};

if (isMain(import.meta.url)) runMain([chatTranslatedNonstream]);
