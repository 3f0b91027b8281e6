// Usage tap for a Vertex passthrough: chunks are data-only; every one may carry usageMetadata
// (only trafficType until the end), and the chunk with finishReason is the final usage frame.
import type { CostExtras } from '../../ir.ts';
import type { SSEFrame, TapState, UsageTap } from '../types.ts';
import { hasCounts, tierFromTraffic, usageFromVertex } from './usage.ts';
import { addCostExtras } from '../cost-extras.ts';

const hasFinish = (data: any): boolean =>
  Array.isArray(data?.candidates) && data.candidates.some((candidate: any) => candidate?.finishReason);

export const vertexTap: UsageTap = {
  markers: ['"finishReason"', '"usageMetadata"'],

  carriesUsage(frame: SSEFrame) {
    return frame.data.includes('"finishReason"') || (frame.data.includes('"usageMetadata"') && frame.data.includes('TokenCount"'));
  },

  read(data, acc: TapState) {
    const meta = data?.usageMetadata;
    if (!meta) return;
    if (meta.trafficType) acc.tier = tierFromTraffic(meta.trafficType);
    if (hasCounts(meta)) {
      acc.usage = usageFromVertex(meta);
      acc.sawUsage = true;
    }
  },

  /** Adds the spec's input_tokens / output_tokens (IR convention: thoughts count as output),
   *  cost and routing to usageMetadata; everything else stays as the provider sent it. */
  inject(data, extras: CostExtras) {
    const ir = usageFromVertex(data.usageMetadata);
    const usageMetadata = addCostExtras({ ...data.usageMetadata }, extras, { input: ir.inputTokens, output: ir.outputTokens });
    return JSON.stringify({ ...data, usageMetadata });
  },

  isFinal(_frame, data) {
    return hasFinish(data);
  },
};
