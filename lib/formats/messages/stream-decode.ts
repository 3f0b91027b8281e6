// Anthropic Messages SSE frames → IR events. Also serves cloud_b: its adapter turns Bedrock's
// binary frames into these same frames, and Bedrock's message_stop may carry the token counts
// in amazon-bedrock-invocationMetrics.
import type { IREvent, IRStopReason } from '../../ir.ts';
import type { Tier } from '../../routes.ts';
import type { SSEFrame, StreamDecoder } from '../types.ts';
import { stopFromAnthropic } from './stop-reason.ts';
import { type AnthropicCounters, countersToIR, mergeAnthropicUsage, tierFromAnthropic, zeroCounters } from './usage.ts';

export class MessagesStreamDecoder implements StreamDecoder {
  private started = false;
  private ended = false;
  private counters: AnthropicCounters = zeroCounters();
  /** Which counters message_delta stated (Bedrock's metrics fill in the others). */
  private deltaHad = { input: false, output: false };
  /** The final output count came (message_delta's or Bedrock's metrics): message_start's running
   *  count (1) alone is not what was generated, and the finish is then unreported. */
  private outputReported = false;
  /** What message_start named as served; undefined when it named none. */
  private tier: Tier | undefined;
  private stopReason: IRStopReason | undefined;
  /** Indexes of blocks the IR has a shape for (server tool blocks are skipped with their deltas). */
  private readonly open = new Set<number>();
  /** Tool blocks that have not had an args_delta yet (a call without arguments still gets "{}"). */
  private readonly noArgs = new Set<number>();

  push(frame: SSEFrame): IREvent[] {
    if (this.ended) return [];
    let data: any;
    try { data = JSON.parse(frame.data); } catch {
      return this.fail('invalid_stream', 'The provider sent a frame that is not JSON.');
    }
    switch (data?.type ?? frame.event) {
      case 'message_start': return this.messageStart(data.message ?? {});
      case 'content_block_start': return this.blockStart(data.index, data.content_block ?? {});
      case 'content_block_delta': return this.blockDelta(data.index, data.delta ?? {});
      case 'content_block_stop': return this.blockStop(data.index);
      case 'message_delta':
        if (data.delta?.stop_reason) this.stopReason = stopFromAnthropic(data.delta.stop_reason);
        if (typeof data.usage?.input_tokens === 'number') this.deltaHad.input = true;
        if (typeof data.usage?.output_tokens === 'number') this.deltaHad.output = this.outputReported = true;
        mergeAnthropicUsage(this.counters, data.usage);
        return [{ type: 'usage', usage: countersToIR(this.counters) }];
      case 'message_stop':
        this.bedrockMetrics(data['amazon-bedrock-invocationMetrics']);
        return this.finish();
      case 'error': {
        // The provider's error type (rate_limit_error, overloaded_error…) is its own word: in the
        // caller's format this is the gateway's provider_error, the provider's words its message.
        const type = String(data.error?.type ?? 'api_error');
        return this.fail('provider_error', `${type}: ${String(data.error?.message ?? 'The provider reported an error.')}`);
      }
      default: // ping, and event types added after this was written
        return [];
    }
  }

  end(): IREvent[] {
    if (this.ended) return [];
    // A stream cut after message_delta still told us how it ended; one cut earlier did not.
    return this.stopReason ? this.finish() : this.fail('provider_error', 'The provider stream ended before message_stop.');
  }

  private messageStart(message: any): IREvent[] {
    mergeAnthropicUsage(this.counters, message.usage);
    if (message.usage?.service_tier) this.tier = tierFromAnthropic(message.usage.service_tier);
    const events: IREvent[] = [];
    if (!this.started) {
      this.started = true;
      events.push({ type: 'start', ...(message.id ? { id: message.id } : {}), ...(message.model ? { model: message.model } : {}) });
    }
    events.push({ type: 'usage', usage: countersToIR(this.counters) });
    return events;
  }

  private blockStart(index: number, block: any): IREvent[] {
    switch (block.type) {
      case 'text': {
        this.open.add(index);
        const events: IREvent[] = [{ type: 'block_start', index, block: { kind: 'text' } }];
        if (block.text) events.push({ type: 'text_delta', index, text: block.text });
        return events;
      }
      case 'thinking': {
        this.open.add(index);
        const events: IREvent[] = [{ type: 'block_start', index, block: { kind: 'reasoning' } }];
        if (block.thinking) events.push({ type: 'reasoning_delta', index, text: block.thinking });
        if (block.signature) events.push({ type: 'signature', index, signature: block.signature, anthropic: true });
        return events;
      }
      case 'redacted_thinking':
        this.open.add(index);
        return [
          { type: 'block_start', index, block: { kind: 'reasoning' } },
          { type: 'signature', index, signature: String(block.data ?? ''), anthropic: true },
        ];
      case 'tool_use': {
        this.open.add(index);
        const events: IREvent[] = [{
          type: 'block_start', index, block: { kind: 'tool_call', id: String(block.id), name: String(block.name) },
        }];
        if (block.input && typeof block.input === 'object' && Object.keys(block.input).length) {
          events.push({ type: 'args_delta', index, json: JSON.stringify(block.input) });
        } else this.noArgs.add(index);
        return events;
      }
      default:
        return [];
    }
  }

  private blockDelta(index: number, delta: any): IREvent[] {
    if (!this.open.has(index)) return [];
    switch (delta.type) {
      case 'text_delta': return delta.text ? [{ type: 'text_delta', index, text: delta.text }] : [];
      case 'thinking_delta': return delta.thinking ? [{ type: 'reasoning_delta', index, text: delta.thinking }] : [];
      case 'signature_delta': return delta.signature ? [{ type: 'signature', index, signature: delta.signature, anthropic: true }] : [];
      case 'input_json_delta':
        if (!delta.partial_json) return [];
        this.noArgs.delete(index);
        return [{ type: 'args_delta', index, json: delta.partial_json }];
      default: return []; // citations_delta
    }
  }

  private blockStop(index: number): IREvent[] {
    if (!this.open.delete(index)) return [];
    const events: IREvent[] = [];
    if (this.noArgs.delete(index)) events.push({ type: 'args_delta', index, json: '{}' });
    events.push({ type: 'block_stop', index });
    return events;
  }

  /** Bedrock's counts fill in what message_delta did not state. Like Anthropic's input_tokens,
   *  inputTokenCount excludes cache reads and writes, which Bedrock counts separately. */
  private bedrockMetrics(m: any): void {
    if (!m || typeof m !== 'object') return;
    if (!this.deltaHad.input && typeof m.inputTokenCount === 'number') this.counters.input = m.inputTokenCount;
    if (!this.deltaHad.output && typeof m.outputTokenCount === 'number') {
      this.counters.output = m.outputTokenCount;
      this.outputReported = true;
    }
    if (!this.counters.cacheRead && typeof m.cacheReadInputTokenCount === 'number') this.counters.cacheRead = m.cacheReadInputTokenCount;
    if (!this.counters.cacheWrite && typeof m.cacheWriteInputTokenCount === 'number') {
      this.counters.cacheWrite = m.cacheWriteInputTokenCount;
    }
  }

  private finish(): IREvent[] {
    this.ended = true;
    const usage = countersToIR(this.counters);
    return [{ type: 'finish', reason: this.stopReason ?? 'end', usage, tier: this.tier, ...(this.outputReported ? {} : { unreported: true as const }) }];
  }

  private fail(code: string, message: string): IREvent[] {
    this.ended = true;
    return [{ type: 'error', code, message }];
  }
}
