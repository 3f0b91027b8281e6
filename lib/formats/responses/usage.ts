// Usage as the OpenAI Responses wire writes it, to and from the IR's normalised shape (the tier
// names, shared with Chat, are in ../openai-shared.ts).
// Responses already counts cache reads inside input_tokens and reasoning inside output_tokens, so
// normalising is a rename; only missing detail objects need defaults.
import type { CostExtras, IRUsage } from '../../ir.ts';
import { addCostExtras } from '../cost-extras.ts';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function usageFromResponses(u: any): IRUsage {
  return {
    inputTokens: num(u?.input_tokens),
    cachedInputTokens: num(u?.input_tokens_details?.cached_tokens),
    cacheWriteTokens: num(u?.input_tokens_details?.cache_write_tokens),
    outputTokens: num(u?.output_tokens),
    reasoningTokens: num(u?.output_tokens_details?.reasoning_tokens),
  };
}

export function usageToResponses(u: IRUsage, extras?: CostExtras): Record<string, unknown> {
  const inputDetails: Record<string, number> = { cached_tokens: u.cachedInputTokens };
  // Only written when there is something to say: older clients know cached_tokens alone.
  if (u.cacheWriteTokens) inputDetails.cache_write_tokens = u.cacheWriteTokens;
  const usage: Record<string, unknown> = {
    input_tokens: u.inputTokens,
    input_tokens_details: inputDetails,
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
  if (extras) addCostExtras(usage, extras);
  return usage;
}

