// Chat Completions caller, streamed, on vendor A's canonical Responses wire: the translation path.
// The gateway decodes the Chat body to the IR and encodes Responses, then decodes every upstream
// event and encodes Chat chunks. Baselines send the translated Responses body — built here with
// the gateway's own codecs and adapter, so the upstream does the same work for all three.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { CODECS } from '../lib/formats/index.ts';
import { vendorA } from '../lib/providers/openai.ts';
import { checkChatStream, checkResponsesStream, MODEL, PROMPT, type Scenario } from './scenario.ts';

const caller = { model: MODEL, messages: [{ role: 'user', content: PROMPT }], stream: true };

/** The Responses request the gateway sends for a Chat caller body. */
export async function translatedUpstream(body: Record<string, unknown>, stream: boolean): Promise<{ path: string; body: Record<string, unknown> }> {
  const req = await vendorA('http://upstream').build({
    wire: 'responses', body: CODECS.responses.encodeRequest(CODECS.chat.decodeRequest(body)),
    model: MODEL, tier: 'standard', stream, credential: 'unused', translated: true,
  });
  return { path: req.path, body: JSON.parse(req.body.toString()) };
}

export const chatTranslatedStream: Scenario = {
  name: 'chat-translated-stream',
  title: 'Chat caller → Responses upstream, stream:true, start_within "now" (translated SSE)',
  gateway: { path: '/v1/chat/completions', body: { ...caller, start_within: 'now' } },
  upstream: await translatedUpstream(caller, true),
  checkBody: (text, target) => (target === 'gateway' ? checkChatStream(text) : checkResponsesStream(text)),
  flexReason: 'standard_requested',
  target: 0.5,
};

if (isMain(import.meta.url)) runMain([chatTranslatedStream]);
