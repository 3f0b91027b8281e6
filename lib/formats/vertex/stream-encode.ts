// IR events → Vertex streamGenerateContent chunks (data-only SSE), a best effort: Vertex is
// rarely a caller format. Text and thoughts stream as they come; a function call goes out whole
// when its block stops; the last chunk has finishReason and the token counts.
import { formatFrame } from '../../sse.ts';
import type { IREvent } from '../../ir.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { finishFromStop } from './finish-reason.ts';
import { newResponseId } from './ids.ts';
import type { VertexPart } from './parts-encode.ts';
import { vertexUsage } from './response.ts';

interface OpenBlock { kind: 'text' | 'reasoning' | 'tool_call'; name?: string; args?: string; signature?: string; thoughtText?: boolean }

export class VertexStreamEncoder implements StreamEncoder {
  private done = false;
  private responseId = '';
  private readonly blocks = new Map<number, OpenBlock>();

  constructor(private readonly ctx: EncodeContext) {}

  push(ev: IREvent): string {
    if (this.done) return '';
    if (!this.responseId) this.responseId = this.ctx.id || (ev.type === 'start' && ev.id) || newResponseId();
    switch (ev.type) {
      case 'block_start':
        this.blocks.set(
          ev.index, ev.block.kind === 'tool_call' ? { kind: 'tool_call', name: ev.block.name, args: '' } : { kind: ev.block.kind },
        );
        return '';
      case 'text_delta': return ev.text ? this.chunk([{ text: ev.text }]) : '';
      case 'reasoning_delta': {
        const block = this.blocks.get(ev.index);
        if (block) block.thoughtText = true;
        return ev.text ? this.chunk([{ text: ev.text, thought: true }]) : '';
      }
      case 'signature': {
        if (ev.encrypted || !ev.signature) return '';
        const block = this.blocks.get(ev.index);
        if (block?.kind === 'tool_call') { block.signature = ev.signature; return ''; }
        return this.chunk([block?.thoughtText
          ? { text: '', thought: true, thoughtSignature: ev.signature }
          : { text: '', thoughtSignature: ev.signature }]);
      }
      case 'args_delta': {
        const block = this.blocks.get(ev.index);
        if (block?.kind === 'tool_call') block.args += ev.json;
        return '';
      }
      case 'block_stop': return this.close(ev.index);
      case 'finish': {
        let out = '';
        for (const index of [...this.blocks.keys()]) out += this.close(index);
        this.done = true;
        return out + this.chunk([{ text: '' }], { finishReason: finishFromStop(ev.reason), usageMetadata: vertexUsage(ev, this.ctx) });
      }
      case 'error':
        this.done = true;
        return formatFrame(JSON.stringify({ error: googleError(ev.code, ev.message) }));
      default: // start, usage
        return '';
    }
  }

  private close(index: number): string {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (block?.kind !== 'tool_call') return '';
    let args: unknown = {};
    try { if (block.args!.trim()) args = JSON.parse(block.args!); } catch { /* cut off by max_tokens */ }
    return this.chunk([{ functionCall: { name: block.name, args }, ...(block.signature ? { thoughtSignature: block.signature } : {}) }]);
  }

  private chunk(parts: VertexPart[], end?: { finishReason: string; usageMetadata: Record<string, unknown> }): string {
    const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
    if (end) candidate.finishReason = end.finishReason;
    const body: Record<string, unknown> = { candidates: [candidate] };
    body.usageMetadata = end ? end.usageMetadata : { trafficType: this.ctx.tier === 'flex' ? 'ON_DEMAND_FLEX' : 'ON_DEMAND' };
    body.modelVersion = this.ctx.model;
    body.responseId = this.responseId;
    return formatFrame(JSON.stringify(body));
  }
}

/** A google.rpc.Status for an in-stream failure. */
function googleError(code: string, message: string): Record<string, unknown> {
  const [status, http] = /overload|unavailable|capacity/i.test(code) ? ['UNAVAILABLE', 503]
    : /rate_limit|resource_exhausted/i.test(code) ? ['RESOURCE_EXHAUSTED', 429]
    : /deadline|timeout/i.test(code) ? ['DEADLINE_EXCEEDED', 504]
    : ['INTERNAL', 500];
  return { code: http, message, status };
}
