// Vendor A's Chat Completions chunks → IR events. Choice 0's delta opens blocks as content,
// refusal, reasoning (compatible servers) or a new tool call index appears; a block closes when
// another begins or the finish_reason arrives. The finish waits for usage: with
// stream_options.include_usage the usage chunk (choices: []) follows the finish_reason chunk.
import { type IREvent, type IRStopReason, type IRUsage, zeroUsage } from '../../ir.ts';
import { type Tier } from '../../routes.ts';
import type { SSEFrame, StreamDecoder } from '../types.ts';
import { stopFromFinish } from './response.ts';
import { tierOfChunk, usageFromChat } from './usage.ts';

type Kind = 'text' | 'refusal' | 'reasoning';

export function createChatStreamDecoder(): StreamDecoder {
  let next = 0;
  let started = false;
  let ended = false;
  let current: { index: number; kind: Kind | 'tool_call' } | undefined; // the block taking deltas
  const calls = new Map<number, number>(); // Chat tool call index → IR block index
  const open = new Set<number>();
  let reason: IRStopReason | undefined;
  let refused = false;
  let usage: IRUsage | undefined;
  let tier: Tier | undefined;

  const stop = (out: IREvent[], index: number): void => {
    if (open.delete(index)) out.push({ type: 'block_stop', index });
  };
  const switchTo = (out: IREvent[], kind: Kind): number => {
    if (current?.kind === kind && open.has(current.index)) return current.index;
    if (current) stop(out, current.index);
    const index = next++;
    open.add(index);
    out.push({ type: 'block_start', index, block: kind === 'refusal' ? { kind: 'text', refusal: true } : { kind } });
    current = { index, kind };
    return index;
  };
  const finish = (out: IREvent[]): void => {
    for (const index of [...open]) stop(out, index);
    ended = true;
    const stopped = reason ?? 'end';
    const ev: IREvent = { type: 'finish', reason: refused && stopped === 'end' ? 'refusal' : stopped, usage: usage ?? zeroUsage() };
    if (tier) ev.tier = tier;
    if (!usage) ev.unreported = true;
    out.push(ev);
  };

  function push(frame: SSEFrame): IREvent[] {
    if (ended) return [];
    const out: IREvent[] = [];
    if (frame.data.trim() === '[DONE]') {
      // A clean end the provider declared. A server that ignores include_usage (the gateway always
      // asks it) sends no usage: the finish still ends the stream, unreported (charged the
      // estimate).
      if (reason !== undefined || usage) finish(out);
      return out;
    }
    let chunk: any;
    try { chunk = JSON.parse(frame.data); } catch { return []; }
    if (!chunk || typeof chunk !== 'object') return [];
    if (chunk.error) {
      ended = true;
      const error = chunk.error;
      out.push({
        type: 'error', code: String(error.code ?? error.type ?? 'server_error'), message: String(error.message ?? 'Upstream error.'),
      });
      return out;
    }
    const choices: any[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    // Azure's first chunk has an empty id and no choices (prompt filter results only): start later.
    if (!started && (chunk.id || choices.length)) {
      started = true;
      out.push({ type: 'start', ...(chunk.id ? { id: String(chunk.id) } : {}), ...(chunk.model ? { model: String(chunk.model) } : {}) });
    }
    tier = tierOfChunk(chunk.service_tier) ?? tier;
    const choice = choices.find(entry => (entry?.index ?? 0) === 0);
    const delta = choice?.delta;
    if (delta) {
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (typeof thought === 'string' && thought) out.push({ type: 'reasoning_delta', index: switchTo(out, 'reasoning'), text: thought });
      if (typeof delta.content === 'string' && delta.content) {
        out.push({ type: 'text_delta', index: switchTo(out, 'text'), text: delta.content });
      }
      if (typeof delta.refusal === 'string' && delta.refusal) {
        refused = true;
        out.push({ type: 'text_delta', index: switchTo(out, 'refusal'), text: delta.refusal });
      }
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) toolCall(out, call);
    }
    if (choice?.finish_reason) {
      reason = stopFromFinish(choice.finish_reason);
      for (const index of [...open]) stop(out, index);
    }
    if (chunk.usage && typeof chunk.usage === 'object') usage = usageFromChat(chunk.usage);
    if (reason !== undefined && usage) finish(out);
    return out;
  }

  function toolCall(out: IREvent[], call: any): void {
    const key = typeof call?.index === 'number' ? call.index : calls.size;
    let index = calls.get(key);
    if (index === undefined) {
      if (current) stop(out, current.index);
      index = next++;
      calls.set(key, index);
      open.add(index);
      out.push({
        type: 'block_start', index,
        block: { kind: 'tool_call', id: String(call?.id ?? `call_${index}`), name: String(call?.function?.name ?? '') },
      });
      current = { index, kind: 'tool_call' };
    }
    // A fragment for an earlier call (interleaved parallel calls) still lands on its own block.
    const args = call?.function?.arguments;
    if (typeof args === 'string' && args) out.push({ type: 'args_delta', index, json: args });
  }

  return {
    push,
    end(): IREvent[] {
      // No [DONE]: only usage makes the stream billable; otherwise nothing (an upstream failure).
      if (ended || !usage) return [];
      const out: IREvent[] = [];
      finish(out);
      return out;
    },
  };
}
