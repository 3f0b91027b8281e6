// Vertex usageMetadata ⇄ IR usage. Gemini counts thought tokens outside candidatesTokenCount (the
// IR's outputTokens includes them) and cached tokens inside promptTokenCount (as the IR does).
// Tool-use prompt tokens are input the model read, so the IR's inputTokens includes them.
import type { IRUsage, Tier } from '../../ir.ts';

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function usageFromVertex(m: any): IRUsage {
  const thoughts = n(m?.thoughtsTokenCount);
  return {
    inputTokens: n(m?.promptTokenCount) + n(m?.toolUsePromptTokenCount),
    cachedInputTokens: n(m?.cachedContentTokenCount),
    cacheWriteTokens: 0,
    outputTokens: n(m?.candidatesTokenCount) + thoughts,
    reasoningTokens: thoughts,
  };
}

/** True once a usageMetadata carries token counts (Vertex sends only trafficType until the end). */
export const hasCounts = (m: any): boolean =>
  !!m && ['promptTokenCount', 'candidatesTokenCount', 'totalTokenCount'].some((k) => typeof m[k] === 'number');

/** Vertex says which capacity served in trafficType (ON_DEMAND, ON_DEMAND_FLEX, …). */
export const tierFromTraffic = (trafficType: unknown): Tier =>
  typeof trafficType === 'string' && trafficType.includes('FLEX') ? 'flex' : 'standard';

export function usageToVertex(u: IRUsage, tier: Tier): Record<string, unknown> {
  return {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: Math.max(0, u.outputTokens - u.reasoningTokens),
    ...(u.reasoningTokens ? { thoughtsTokenCount: u.reasoningTokens } : {}),
    ...(u.cachedInputTokens ? { cachedContentTokenCount: u.cachedInputTokens } : {}),
    totalTokenCount: u.inputTokens + u.outputTokens,
    trafficType: tier === 'flex' ? 'ON_DEMAND_FLEX' : 'ON_DEMAND',
  };
}
