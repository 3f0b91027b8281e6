// Non-streamed Interactions bodies: an Interaction (steps[]) → IR, and IR → the Interaction a
// caller sees.
import type { IRBlock, IRResponse } from '../../ir.ts';
import type { EncodeContext } from '../types.ts';
import { newUnstoredInteractionId } from './ids.ts';
import { argumentsObject } from '../tool-args.ts';
import { statusFromStop, stopFromStatus } from './status.ts';
import { isoSeconds, tierFromInteractions, usageFromInteractions, usageToInteractions } from './usage.ts';
import { isPlainObject } from '../../json-util.ts';
import { addCostExtras } from '../cost-extras.ts';
import { ANTHROPIC_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG } from '../reasoning-tags.ts';

const textOf = (items: unknown): string =>
  Array.isArray(items) ? items.filter((part: any) => part?.type === 'text').map((part: any) => String(part.text ?? '')).join('') : '';

export function decodeInteractionsResponse(body: any): IRResponse {
  const blocks: IRBlock[] = [];
  for (const step of Array.isArray(body?.steps) ? body.steps : []) {
    switch (step?.type) {
      case 'thought':
        blocks.push({ kind: 'reasoning', text: textOf(step.summary), ...(step.signature ? { signature: step.signature } : {}) });
        break;
      case 'model_output': {
        const text = textOf(step.content);
        if (text) blocks.push({ kind: 'text', text });
        break;
      }
      case 'function_call':
        blocks.push({
          kind: 'tool_call', id: String(step.id ?? ''), name: String(step.name ?? ''), arguments: JSON.stringify(step.arguments ?? {}),
          ...(step.signature ? { signature: step.signature } : {}),
        });
        break;
      default: break; // user_input / function_result (GET replays them), hosted tool steps
    }
  }
  const res: IRResponse = {
    id: String(body?.id ?? ''),
    model: String(body?.model ?? ''),
    blocks,
    stopReason: stopFromStatus(body?.status, blocks.some((block) => block.kind === 'tool_call')),
    usage: usageFromInteractions(body?.usage),
    tier: tierFromInteractions(body?.service_tier),
  };
  if (!isPlainObject(body?.usage)) res.unreported = true;
  if (res.stopReason === 'error') {
    const err = Array.isArray(body?.errors) ? body.errors[0] : undefined;
    res.error = {
      code: String(err?.code ?? body?.status ?? 'failed'),
      message: String(err?.message ?? `The interaction ended with status ${body?.status}.`),
    };
  }
  return res;
}

export function encodeInteractionsResponse(res: IRResponse, ctx: EncodeContext): Record<string, any> {
  const steps: Record<string, unknown>[] = [];
  let output: Record<string, unknown>[] | undefined; // the model_output step text blocks join
  for (const block of res.blocks) {
    if (block.kind === 'text') {
      if (!output) steps.push({ type: 'model_output', content: (output = []) });
      output.push({ type: 'text', text: block.text });
      continue;
    }
    output = undefined;
    if (block.kind === 'reasoning') {
      if (block.signature || block.encrypted || block.text) {
        // Claude's signature and OpenAI's encrypted reasoning ride tagged, so the caller's next turn
        // gives each back to its own vendor only (reasoning-tags.ts); Gemini's is the format's own.
        const signature = block.encrypted ? OPENAI_ENCRYPTED_TAG + block.encrypted
          : block.signature && block.anthropic ? ANTHROPIC_SIGNATURE_TAG + block.signature : block.signature;
        steps.push({
          type: 'thought', ...(signature ? { signature } : {}),
          ...(block.text ? { summary: [{ type: 'text', text: block.text }] } : {}),
        });
      }
    } else {
      steps.push({
        type: 'function_call', id: block.id, name: block.name, arguments: argumentsObject(block.arguments) ?? {},
        ...(block.signature ? { signature: block.signature } : {}),
      });
    }
  }
  const at = isoSeconds(ctx.createdAt);
  const body: Record<string, any> = {
    // ctx.id is the provider's own (vendor B, assembled from its stream); any other answer was
    // stored by no provider, and its id says so (ids.ts).
    id: ctx.id || newUnstoredInteractionId(),
    object: 'interaction',
    model: ctx.model,
    status: statusFromStop(res.stopReason, res.blocks.some((block) => block.kind === 'tool_call')),
    created: at,
    updated: at,
    service_tier: ctx.tier,
    steps,
    usage: interactionUsage(res),
  };
  if (res.error) body.errors = [{ code: res.error.code, message: res.error.message }];
  return body;
}

/** The usage object, with the spec's input_tokens / output_tokens / cost / routing when the
 *  caller asked include_cost (Interactions has no fields of those names of its own). */
export function interactionUsage(res: Pick<IRResponse, 'usage' | 'extras'>): Record<string, unknown> {
  const usage: Record<string, unknown> = usageToInteractions(res.usage);
  if (res.extras) addCostExtras(usage, res.extras, { input: res.usage.inputTokens, output: res.usage.outputTokens });
  return usage;
}
