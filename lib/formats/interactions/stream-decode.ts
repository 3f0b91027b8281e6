// Interactions SSE frames (steps schema) → IR events. A step's index is the IR block index.
import type { IRBlockStart, IREvent } from '../../ir.ts';
import type { SSEFrame, StreamDecoder } from '../types.ts';
import { stopFromStatus } from './status.ts';
import { tierFromInteractions, usageFromInteractions } from './usage.ts';
import { isPlainObject } from '../../json-util.ts';

export class InteractionsStreamDecoder implements StreamDecoder {
  private started = false;
  private ended = false;
  private sawToolCall = false;
  /** Open steps the IR has a shape for, by index (hosted tool steps are skipped with their deltas). */
  private readonly open = new Map<number, IRBlockStart['kind']>();
  /** function_call steps that have not had arguments yet (a call without arguments still gets "{}"). */
  private readonly noArgs = new Set<number>();

  push(frame: SSEFrame): IREvent[] {
    if (this.ended || frame.data === '[DONE]' || frame.event === 'done') return [];
    let data: any;
    try { data = JSON.parse(frame.data); } catch {
      return this.fail('invalid_stream', 'The provider sent a frame that is not JSON.');
    }
    switch (data?.event_type ?? frame.event) {
      case 'interaction.created': return this.start(data.interaction ?? {});
      case 'step.start': return this.stepStart(data.index, data.step ?? {});
      case 'step.delta': return this.stepDelta(data.index, data.delta ?? {});
      case 'step.stop': return this.stepStop(data.index);
      case 'interaction.completed': return this.completed(data.interaction ?? {});
      case 'error':
        return this.fail(String(data.error?.code ?? 'provider_error'), String(data.error?.message ?? 'The provider reported an error.'));
      default: // interaction.status_update, and event types added after this was written
        return [];
    }
  }

  end(): IREvent[] {
    return this.ended ? [] : this.fail('provider_error', 'The provider stream ended before interaction.completed.');
  }

  private start(interaction: any): IREvent[] {
    if (this.started) return [];
    this.started = true;
    return [{
      type: 'start', ...(interaction.id ? { id: interaction.id } : {}), ...(interaction.model ? { model: interaction.model } : {}),
    }];
  }

  private stepStart(index: number, step: any): IREvent[] {
    const events: IREvent[] = [];
    switch (step.type) {
      case 'model_output': {
        this.open.set(index, 'text');
        events.push({ type: 'block_start', index, block: { kind: 'text' } });
        for (const part of Array.isArray(step.content) ? step.content : []) {
          if (part?.type === 'text' && part.text) events.push({ type: 'text_delta', index, text: part.text });
        }
        break;
      }
      case 'thought': {
        this.open.set(index, 'reasoning');
        events.push({ type: 'block_start', index, block: { kind: 'reasoning' } });
        for (const part of Array.isArray(step.summary) ? step.summary : []) {
          if (part?.type === 'text' && part.text) events.push({ type: 'reasoning_delta', index, text: part.text });
        }
        if (step.signature) events.push({ type: 'signature', index, signature: step.signature });
        break;
      }
      case 'function_call': {
        this.open.set(index, 'tool_call');
        this.sawToolCall = true;
        events.push({ type: 'block_start', index, block: { kind: 'tool_call', id: String(step.id ?? ''), name: String(step.name ?? '') } });
        if (step.signature) events.push({ type: 'signature', index, signature: step.signature });
        if (step.arguments && typeof step.arguments === 'object' && Object.keys(step.arguments).length) {
          events.push({ type: 'args_delta', index, json: JSON.stringify(step.arguments) });
        } else this.noArgs.add(index);
        break;
      }
      default: break; // hosted tool steps have no IR shape
    }
    return events;
  }

  private stepDelta(index: number, delta: any): IREvent[] {
    const kind = this.open.get(index);
    if (!kind) return [];
    switch (delta.type) {
      case 'text': return kind === 'text' && delta.text ? [{ type: 'text_delta', index, text: delta.text }] : [];
      case 'thought_summary': {
        const text = delta.content?.type === 'text' ? delta.content.text : undefined;
        return kind === 'reasoning' && text ? [{ type: 'reasoning_delta', index, text }] : [];
      }
      case 'thought_signature': return delta.signature ? [{ type: 'signature', index, signature: delta.signature }] : [];
      case 'arguments_delta':
        if (kind !== 'tool_call' || !delta.arguments) return [];
        this.noArgs.delete(index);
        return [{ type: 'args_delta', index, json: delta.arguments }];
      default: return []; // images, annotations, hosted tool deltas
    }
  }

  private stepStop(index: number): IREvent[] {
    if (!this.open.delete(index)) return [];
    const events: IREvent[] = [];
    if (this.noArgs.delete(index)) events.push({ type: 'args_delta', index, json: '{}' });
    events.push({ type: 'block_stop', index });
    return events;
  }

  private completed(interaction: any): IREvent[] {
    this.ended = true;
    return [{
      type: 'finish',
      reason: stopFromStatus(interaction.status, this.sawToolCall),
      usage: usageFromInteractions(interaction.usage),
      tier: tierFromInteractions(interaction.service_tier),
      ...(isPlainObject(interaction.usage) ? {} : { unreported: true as const }),
    }];
  }

  private fail(code: string, message: string): IREvent[] {
    this.ended = true;
    return [{ type: 'error', code, message }];
  }
}
