// Usage as the OpenAI Responses wire writes it, to and from the IR's normalised shape (the tier
// names, shared with Chat, are in ../openai-shared.ts).
// Responses already counts cache reads inside input_tokens and reasoning inside output_tokens, so
// normalising is a rename; only missing detail objects need defaults.
import type { CostExtras, IRUsage } from '../../ir.ts';
import { addCostExtras } from '../cost-extras.ts';
import { tokenCount } from '../../json-util.ts';

export function usageFromResponses(wire: any): IRUsage {
  return {
    inputTokens: tokenCount(wire?.input_tokens),
    cachedInputTokens: tokenCount(wire?.input_tokens_details?.cached_tokens),
    cacheWriteTokens: tokenCount(wire?.input_tokens_details?.cache_write_tokens),
    outputTokens: tokenCount(wire?.output_tokens),
    reasoningTokens: tokenCount(wire?.output_tokens_details?.reasoning_tokens),
  };
}

export function usageToResponses(usage: IRUsage, extras?: CostExtras): Record<string, unknown> {
  const inputDetails: Record<string, number> = { cached_tokens: usage.cachedInputTokens };
  // Only written when there is something to say: older clients know cached_tokens alone.
  if (usage.cacheWriteTokens) inputDetails.cache_write_tokens = usage.cacheWriteTokens;
  const wire: Record<string, unknown> = {
    input_tokens: usage.inputTokens,
    input_tokens_details: inputDetails,
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
  if (extras) addCostExtras(wire, extras);
  return wire;
}

