// Vertex streamGenerateContent chunks (data-only GenerateContentResponse) → IR events.
//
// Consecutive text parts (or thought parts) continue one block. A function call arrives whole
// ({name, args}) or streamed: {name, willContinue} opens it, parts with partialArgs fill it, and
// a functionCall part without willContinue closes it; its arguments go out as one args_delta.
// A thoughtSignature on a thought part or a function call is that block's signature; on any
// other part it becomes a reasoning block of its own just before that part (see parts-encode.ts).
import { type IREvent, type IRUsage, zeroUsage } from '../../ir.ts';
import { type Tier } from '../../routes.ts';
import type { SSEFrame, StreamDecoder } from '../types.ts';
import { PROMPT_BLOCKED, stopFromFinish } from './finish-reason.ts';
import { newCallId } from './ids.ts';
import { PartialArgs } from './partial-args.ts';
import { hasCounts, tierFromTraffic, usageFromVertex } from './usage.ts';

export class VertexStreamDecoder implements StreamDecoder {
  private started = false;
  private ended = false;
  private nextIndex = 0;
  private current: { index: number; kind: 'text' | 'reasoning' } | undefined;
  private streamedCall: { index: number; args: PartialArgs } | undefined;
  private sawToolCall = false;
  /** The last counts reported; undefined while none came (the finish is then unreported). */
  private usage: IRUsage | undefined;
  /** The last trafficType's tier; undefined while none came. */
  private tier: Tier | undefined;
  private finishReason: string | undefined;

  push(frame: SSEFrame): IREvent[] {
    if (this.ended || frame.data === '[DONE]') return [];
    let chunk: any;
    try { chunk = JSON.parse(frame.data); } catch {
      return this.fail('invalid_stream', 'The provider sent a chunk that is not JSON.');
    }
    if (chunk?.error) {
      return this.fail(
        String(chunk.error.status ?? chunk.error.code ?? 'provider_error'),
        String(chunk.error.message ?? 'The provider reported an error.'),
      );
    }
    const events: IREvent[] = [];
    if (!this.started) {
      this.started = true;
      events.push({
        type: 'start', ...(chunk.responseId ? { id: chunk.responseId } : {}), ...(chunk.modelVersion ? { model: chunk.modelVersion } : {}),
      });
    }
    const meta = chunk.usageMetadata;
    if (meta?.trafficType) this.tier = tierFromTraffic(meta.trafficType);
    if (hasCounts(meta)) this.usage = usageFromVertex(meta);

    const candidate = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    for (const part of Array.isArray(candidate?.content?.parts) ? candidate.content.parts : []) this.part(part ?? {}, events);
    const reason = candidate?.finishReason ?? (chunk.promptFeedback?.blockReason ? PROMPT_BLOCKED : undefined);
    if (reason) {
      this.closeCurrent(events);
      this.finishReason = reason;
    }
    // The chunk with finishReason normally carries the final counts; if not, wait for one that does.
    if (this.finishReason && hasCounts(meta)) events.push(...this.finish());
    return events;
  }

  end(): IREvent[] {
    if (this.ended) return [];
    if (!this.finishReason) return this.fail('provider_error', 'The provider stream ended without a finishReason.');
    const events: IREvent[] = [];
    this.closeCurrent(events);
    return [...events, ...this.finish()];
  }

  private part(p: any, events: IREvent[]): void {
    const sig = typeof p.thoughtSignature === 'string' && p.thoughtSignature ? p.thoughtSignature : undefined;
    if (p.functionCall) { this.functionCall(p.functionCall, sig, events); return; }
    if (p.thought === true) {
      const index = this.ensure('reasoning', events);
      if (p.text) events.push({ type: 'reasoning_delta', index, text: String(p.text) });
      if (sig) events.push({ type: 'signature', index, signature: sig });
      return;
    }
    if (sig) {
      this.closeCurrent(events);
      const index = this.nextIndex++;
      events.push(
        { type: 'block_start', index, block: { kind: 'reasoning' } }, { type: 'signature', index, signature: sig },
        { type: 'block_stop', index },
      );
    }
    if (typeof p.text === 'string' && p.text) {
      const index = this.ensure('text', events);
      events.push({ type: 'text_delta', index, text: p.text });
    }
    // inlineData, executableCode, …: no IR block
  }

  private functionCall(fc: any, sig: string | undefined, events: IREvent[]): void {
    if (!fc.name) {
      if (!this.streamedCall) return; // the closing {} of a call already complete
      this.streamedCall.args.apply(fc.partialArgs);
      if (!fc.willContinue) this.closeStreamedCall(events);
      return;
    }
    this.closeCurrent(events);
    const index = this.nextIndex++;
    this.sawToolCall = true;
    events.push({
      type: 'block_start', index,
      block: { kind: 'tool_call', id: typeof fc.id === 'string' && fc.id ? fc.id : newCallId(), name: String(fc.name) },
    });
    if (sig) events.push({ type: 'signature', index, signature: sig });
    if (fc.willContinue) {
      this.streamedCall = { index, args: new PartialArgs(fc.args) };
      this.streamedCall.args.apply(fc.partialArgs);
      return;
    }
    events.push({ type: 'args_delta', index, json: JSON.stringify(fc.args ?? {}) }, { type: 'block_stop', index });
  }

  /** The open text or thought block of `kind`, opening it (and closing any other) if needed. */
  private ensure(kind: 'text' | 'reasoning', events: IREvent[]): number {
    if (this.current?.kind === kind) return this.current.index;
    this.closeCurrent(events);
    const index = this.nextIndex++;
    this.current = { index, kind };
    events.push({ type: 'block_start', index, block: { kind } });
    return index;
  }

  private closeCurrent(events: IREvent[]): void {
    if (this.streamedCall) this.closeStreamedCall(events);
    if (!this.current) return;
    events.push({ type: 'block_stop', index: this.current.index });
    this.current = undefined;
  }

  private closeStreamedCall(events: IREvent[]): void {
    const call = this.streamedCall!;
    this.streamedCall = undefined;
    events.push({ type: 'args_delta', index: call.index, json: call.args.json() }, { type: 'block_stop', index: call.index });
  }

  private finish(): IREvent[] {
    this.ended = true;
    const reason = stopFromFinish(this.finishReason!, this.sawToolCall);
    if (!this.usage) return [{ type: 'finish', reason, usage: zeroUsage(), tier: this.tier, unreported: true }];
    return [{ type: 'finish', reason, usage: this.usage, tier: this.tier }];
  }

  private fail(code: string, message: string): IREvent[] {
    this.ended = true;
    return [{ type: 'error', code, message }];
  }
}
