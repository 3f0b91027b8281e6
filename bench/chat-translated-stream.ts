// Chat Completions caller, streamed, on vendor A's canonical Responses wire: the translation path.
// The gateway decodes the Chat body to the IR and encodes Responses, then decodes every upstream
// event and encodes Chat chunks. Baselines send the translated Responses body — built here with
// the gateway's own codecs and adapter, so the simulator does the same work for all three.
import { isMain } from './processes.ts';
import { runMain } from './harness.ts';
import { CODECS } from '../lib/formats/index.ts';
import { vendorA } from '../lib/providers/openai-style.ts';
import { checkResponsesStream, MODEL, PROMPT, type Scenario } from './scenario.ts';

const caller = { model: MODEL, messages: [{ role: 'user', content: PROMPT }], stream: true };

const upstreamRequest = await vendorA('http://upstream').build({
  wire: 'responses', body: CODECS.responses.encodeRequest(CODECS.chat.decodeRequest(caller)),
  model: MODEL, tier: 'standard', stream: true, credential: 'unused', translated: true,
});

export const chatTranslatedStream: Scenario = {
  name: 'chat-translated-stream',
  title: 'Chat caller → Responses upstream, stream:true, start_within "now" (translated SSE)',
  gateway: { path: '/v1/chat/completions', body: { ...caller, start_within: 'now' } },
  upstream: { path: upstreamRequest.path, body: JSON.parse(upstreamRequest.body) },
  checkBody(text, target) {
    if (target !== 'gateway') return checkResponsesStream(text);
    if (!text.includes('"chat.completion.chunk"')) return 'no chat.completion.chunk';
    if (!/"content":"[^"]/.test(text)) return 'no content delta';
    if (!text.trimEnd().endsWith('data: [DONE]')) return 'stream did not end with [DONE]';
    if (text.includes('"error"')) return 'stream carries an error';
    return undefined;
  },
  flexReason: 'standard_requested',
};

if (isMain(import.meta.url)) runMain([chatTranslatedStream]);
