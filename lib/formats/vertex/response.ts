// Non-streamed Vertex bodies. A GenerateContentResponse decodes through the stream decoder (one
// chunk that ends the stream), so both paths read parts the same way.
import { ResponseCollector } from '../collect.ts';
import type { IRPart, IRResponse } from '../../ir.ts';
import type { EncodeContext } from '../types.ts';
import { finishFromStop } from './finish-reason.ts';
import { newResponseId } from './ids.ts';
import { encodeParts } from './parts-encode.ts';
import { VertexStreamDecoder } from './stream-decode.ts';
import { usageToVertex } from './usage.ts';
import { addCostExtras } from '../cost-extras.ts';

export function decodeVertexResponse(body: any): IRResponse {
  const decoder = new VertexStreamDecoder();
  const collector = new ResponseCollector();
  for (const ev of [...decoder.push({ data: JSON.stringify(body ?? {}) }), ...decoder.end()]) collector.push(ev);
  return collector.result();
}

export function encodeVertexResponse(res: IRResponse, ctx: EncodeContext): Record<string, any> {
  const parts: IRPart[] = res.blocks.map((block): IRPart => {
    if (block.kind === 'text') return { type: 'text', text: block.text };
    const signature = block.signature ? { signature: block.signature } : {};
    if (block.kind === 'reasoning') return { type: 'reasoning', ...(block.text ? { text: block.text } : {}), ...signature };
    return { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments, ...signature };
  });
  return {
    candidates: [{
      content: { role: 'model', parts: encodeParts(parts, new Map(), true) }, finishReason: finishFromStop(res.stopReason), index: 0,
    }],
    usageMetadata: vertexUsage(res, ctx),
    modelVersion: ctx.model,
    createTime: new Date(ctx.createdAt * 1000).toISOString(),
    responseId: ctx.id || newResponseId(),
  };
}

/** usageMetadata, with the spec's input_tokens / output_tokens / cost / routing when the caller
 *  asked include_cost (Vertex has no fields of those names of its own). */
export function vertexUsage(res: Pick<IRResponse, 'usage' | 'extras'>, ctx: Pick<EncodeContext, 'tier'>): Record<string, unknown> {
  const usage = usageToVertex(res.usage, ctx.tier);
  if (res.extras) addCostExtras(usage, res.extras, { input: res.usage.inputTokens, output: res.usage.outputTokens });
  return usage;
}
