// Non-streamed Chat Completions bodies: vendor A's body → IRResponse, IRResponse → the caller's body.
import type { IRBlock, IRResponse, IRStopReason } from '../../ir.ts';
import { newId, serviceTierOf } from '../openai-shared.ts';
import type { EncodeContext } from '../types.ts';
import { tierOfChunk, usageFromChat, usageToChat } from './usage.ts';
import { isPlainObject } from '../../json-util.ts';

export const stopFromFinish = (finish: unknown): IRStopReason =>
  finish === 'length' ? 'max_tokens'
    : finish === 'tool_calls' || finish === 'function_call' ? 'tool_use'
    : finish === 'content_filter' ? 'content_filter'
    : 'end';

/** A model refusal ends with "stop", as on OpenAI's own Chat API: its words are in `refusal`, and
 *  content_filter would make the SDK's parse helpers throw ContentFilterFinishReasonError. */
export const finishFromStop = (stop: IRStopReason): string =>
  stop === 'max_tokens' ? 'length'
    : stop === 'tool_use' ? 'tool_calls'
    : stop === 'content_filter' ? 'content_filter'
    : 'stop';

export const chatId = (id: string): string =>
  !id ? newId('chatcmpl-') : id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`;

export function decodeChatResponse(body: any): IRResponse {
  const choice = Array.isArray(body?.choices) ? body.choices[0] : undefined;
  const msg = choice?.message ?? {};
  const blocks: IRBlock[] = [];
  // Compatible servers put reasoning in reasoning_content; OpenAI itself never returns it here.
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning) blocks.push({ kind: 'reasoning', text: reasoning });
  if (typeof msg.content === 'string' && msg.content) blocks.push({ kind: 'text', text: msg.content });
  const refused = typeof msg.refusal === 'string' && msg.refusal !== '';
  if (refused) blocks.push({ kind: 'text', text: msg.refusal, refusal: true });
  for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    blocks.push({
      kind: 'tool_call', id: String(call?.id ?? ''), name: String(call?.function?.name ?? ''),
      arguments: String(call?.function?.arguments ?? ''),
    });
  }
  let stopReason = stopFromFinish(choice?.finish_reason);
  if (refused && stopReason === 'end') stopReason = 'refusal';
  const res: IRResponse = {
    id: String(body?.id ?? ''),
    model: String(body?.model ?? ''),
    blocks,
    stopReason,
    usage: usageFromChat(body?.usage),
    tier: tierOfChunk(body?.service_tier),
  };
  if (!isPlainObject(body?.usage)) res.unreported = true;
  if (body?.error) {
    res.stopReason = 'error';
    res.error = {
      code: String(body.error.code ?? body.error.type ?? 'server_error'), message: String(body.error.message ?? 'Upstream error.'),
    };
  }
  return res;
}

export function encodeChatResponse(res: IRResponse, ctx: EncodeContext): Record<string, any> {
  let text = '';
  let refusal = '';
  const toolCalls: Record<string, unknown>[] = [];
  for (const block of res.blocks) {
    if (block.kind === 'text' && block.refusal) refusal += block.text;
    else if (block.kind === 'text') text += block.text;
    else if (block.kind === 'tool_call') toolCalls.push({
      id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments },
    });
    // reasoning: Chat Completions has no field for it
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text || null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  message.refusal = refusal || null;
  return {
    id: chatId(ctx.id),
    object: 'chat.completion',
    created: ctx.createdAt,
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishFromStop(res.stopReason), logprobs: null }],
    usage: usageToChat(res.usage, res.extras),
    service_tier: serviceTierOf(ctx.tier),
    system_fingerprint: null,
  };
}
