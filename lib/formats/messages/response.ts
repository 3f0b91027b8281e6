// Non-streamed Messages bodies: an Anthropic Message → IR, and IR → the Message a caller sees.
import type { IRBlock, IRResponse } from '../../ir.ts';
import type { EncodeContext } from '../types.ts';
import { newMessageId } from './ids.ts';
import { argumentsObject } from '../tool-args.ts';
import { stopFromAnthropic, stopToAnthropic } from './stop-reason.ts';
import { anthropicUsage, countersToIR, mergeAnthropicUsage, tierFromAnthropic, zeroCounters } from './usage.ts';
import { addCostExtras } from '../cost-extras.ts';
import { GEMINI_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG } from '../reasoning-tags.ts';

export function decodeMessagesResponse(body: any): IRResponse {
  const blocks: IRBlock[] = [];
  for (const block of Array.isArray(body?.content) ? body.content : []) {
    switch (block?.type) {
      case 'text': blocks.push({ kind: 'text', text: String(block.text ?? '') }); break;
      case 'thinking': blocks.push({
        kind: 'reasoning', text: String(block.thinking ?? ''), ...(block.signature ? { signature: block.signature, anthropic: true } : {}),
      }); break;
      case 'redacted_thinking': blocks.push({ kind: 'reasoning', text: '', signature: String(block.data ?? ''), anthropic: true }); break;
      case 'tool_use': blocks.push({
        kind: 'tool_call', id: String(block.id), name: String(block.name), arguments: JSON.stringify(block.input ?? {}),
      }); break;
      default: break; // server tool blocks have no IR shape
    }
  }
  const counters = zeroCounters();
  mergeAnthropicUsage(counters, body?.usage);
  return {
    id: String(body?.id ?? ''),
    model: String(body?.model ?? ''),
    blocks,
    stopReason: stopFromAnthropic(body?.stop_reason),
    usage: countersToIR(counters),
    tier: tierFromAnthropic(body?.usage?.service_tier),
    // Without its output count the body says nothing of what was generated.
    ...(typeof body?.usage?.output_tokens === 'number' ? {} : { unreported: true as const }),
  };
}

export function encodeMessagesResponse(res: IRResponse, ctx: EncodeContext): Record<string, any> {
  const content: Record<string, unknown>[] = [];
  for (const block of res.blocks) {
    if (block.kind === 'text') content.push({ type: 'text', text: block.text });
    else if (block.kind === 'reasoning') {
      // Anthropic's signature rides as it is; OpenAI's encrypted reasoning and Gemini's thought
      // signature (the unmarked one) tagged (reasoning-tags.ts).
      const signature = block.encrypted ? OPENAI_ENCRYPTED_TAG + block.encrypted
        : block.signature && !block.anthropic ? GEMINI_SIGNATURE_TAG + block.signature : block.signature;
      if (block.text || signature) content.push({ type: 'thinking', thinking: block.text, signature: signature ?? '' });
    } else {
      // A Gemini thought signature on a function call has no tool_use field; it rides, tagged, in
      // a thinking block just before the call, which the Gemini encoders put back on the call.
      if (block.signature) content.push({ type: 'thinking', thinking: '', signature: GEMINI_SIGNATURE_TAG + block.signature });
      content.push({ type: 'tool_use', id: block.id, name: block.name, input: argumentsObject(block.arguments) ?? {} });
    }
  }
  const usage: Record<string, unknown> = { ...anthropicUsage(res.usage), service_tier: ctx.tier };
  if (res.extras) addCostExtras(usage, res.extras);
  return {
    id: ctx.id || newMessageId(),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: stopToAnthropic(res.stopReason),
    stop_sequence: null,
    usage,
  };
}
