// Vertex usageMetadata ⇄ IR usage. Gemini counts thought tokens outside candidatesTokenCount (the
// IR's outputTokens includes them) and cached tokens inside promptTokenCount (as the IR does).
// Tool-use prompt tokens are input the model read, so the IR's inputTokens includes them; Gemini
// counts them outside promptTokenCount, so they are kept apart too (toolUseTokens) to be written back.
import type { IRUsage } from '../../ir.ts';
import type { Tier } from '../../routes.ts';
import { tokenCount } from '../../json-util.ts';

export function usageFromVertex(metadata: any): IRUsage {
  const thoughts = tokenCount(metadata?.thoughtsTokenCount);
  const toolUse = tokenCount(metadata?.toolUsePromptTokenCount);
  return {
    inputTokens: tokenCount(metadata?.promptTokenCount) + toolUse,
    cachedInputTokens: tokenCount(metadata?.cachedContentTokenCount),
    cacheWriteTokens: 0,
    ...(toolUse ? { toolUseTokens: toolUse } : {}),
    outputTokens: tokenCount(metadata?.candidatesTokenCount) + thoughts,
    reasoningTokens: thoughts,
  };
}

/** True once a usageMetadata carries token counts (Vertex sends only trafficType until the end). */
export const hasCounts = (metadata: any): boolean =>
  !!metadata && ['promptTokenCount', 'candidatesTokenCount', 'totalTokenCount'].some((k) => typeof metadata[k] === 'number');

/** Vertex says which capacity served in trafficType (ON_DEMAND, ON_DEMAND_FLEX, …); a body without
 *  one says nothing (undefined: the committed tier stands). */
export const tierFromTraffic = (trafficType: unknown): Tier | undefined =>
  typeof trafficType === 'string' && trafficType ? (trafficType.includes('FLEX') ? 'flex' : 'standard') : undefined;

export function usageToVertex(usage: IRUsage, tier: Tier): Record<string, unknown> {
  const toolUse = usage.toolUseTokens ?? 0;
  return {
    promptTokenCount: usage.inputTokens - toolUse,
    candidatesTokenCount: Math.max(0, usage.outputTokens - usage.reasoningTokens),
    ...(usage.reasoningTokens ? { thoughtsTokenCount: usage.reasoningTokens } : {}),
    ...(usage.cachedInputTokens ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    ...(toolUse ? { toolUsePromptTokenCount: toolUse } : {}),
    totalTokenCount: usage.inputTokens + usage.outputTokens,
    trafficType: tier === 'flex' ? 'ON_DEMAND_FLEX' : 'ON_DEMAND',
  };
}
