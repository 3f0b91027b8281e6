// IR events → the Messages SSE text the Anthropic SDKs parse. The SDK keys content blocks by
// array position, so IR block indexes (which may skip numbers) are renumbered 0, 1, 2, … in the
// order blocks open.
import { formatFrame } from '../../sse.ts';
import { type IREvent, type IRUsage, zeroUsage } from '../../ir.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { newMessageId } from './ids.ts';
import { anthropicErrorType, stopToAnthropic } from './stop-reason.ts';
import { anthropicUsage, countersFromIR } from './usage.ts';
import { addCostExtras } from '../cost-extras.ts';
import { GEMINI_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG } from '../reasoning-tags.ts';

interface OpenBlock {
  kind: 'text' | 'reasoning' | 'tool_call';
  /** Anthropic index; undefined while a tool_use start is held back (see `signature`). */
  at?: number;
  tool?: { id: string; name: string };
}

const PING = formatFrame('{"type":"ping"}', 'ping');

export class MessagesStreamEncoder implements StreamEncoder {
  private started = false;
  private done = false;
  private nextIndex = 0;
  private usage: IRUsage = zeroUsage();
  private readonly blocks = new Map<number, OpenBlock>();

  constructor(private readonly ctx: EncodeContext) {}

  push(ev: IREvent): string {
    if (this.done) return '';
    if (ev.type === 'usage') { Object.assign(this.usage, ev.usage); return ''; }
    let out = this.started ? '' : this.messageStart(ev.type === 'start' ? ev.id : undefined);
    switch (ev.type) {
      case 'start': break;
      case 'block_start':
        if (ev.block.kind === 'tool_call') this.blocks.set(ev.index, { kind: 'tool_call', tool: { id: ev.block.id, name: ev.block.name } });
        else out += this.open(ev.index, ev.block.kind);
        break;
      case 'text_delta': {
        const [block, pre] = this.blockFor(ev.index, 'text');
        if (block.kind === 'text' && ev.text) out += pre + delta(block.at!, { type: 'text_delta', text: ev.text });
        break;
      }
      case 'reasoning_delta': {
        const [block, pre] = this.blockFor(ev.index, 'reasoning');
        if (block.kind === 'reasoning' && ev.text) out += pre + delta(block.at!, { type: 'thinking_delta', thinking: ev.text });
        break;
      }
      case 'signature': out += this.signature(ev.index, ev.signature, ev.encrypted === true, ev.anthropic === true); break;
      case 'args_delta': {
        const block = this.blocks.get(ev.index);
        if (block?.kind !== 'tool_call') break;
        out += this.flushTool(block);
        if (ev.json) out += delta(block.at!, { type: 'input_json_delta', partial_json: ev.json });
        break;
      }
      case 'block_stop': out += this.close(ev.index); break;
      case 'finish': {
        out += this.closeAll();
        this.done = true;
        if (ev.reason === 'error') return out + errorFrame('api_error', 'The provider reported a failed response.', 'provider_error');
        const usage: Record<string, unknown> = anthropicUsage(ev.usage);
        // message_start named the committed tier; where the provider's final event says another
        // served (the one charged), the end says so (Anthropic's own message_delta has no tier).
        if (ev.tier && ev.tier !== this.ctx.tier) usage.service_tier = ev.tier;
        if (ev.extras) addCostExtras(usage, ev.extras);
        out += frame(
          'message_delta', { type: 'message_delta', delta: { stop_reason: stopToAnthropic(ev.reason), stop_sequence: null }, usage },
        );
        out += frame('message_stop', { type: 'message_stop' });
        break;
      }
      case 'error':
        this.done = true;
        out += errorFrame(anthropicErrorType(ev.code), ev.message, ev.code);
        break;
    }
    return out;
  }

  private messageStart(id: string | undefined): string {
    this.started = true;
    const counters = countersFromIR(this.usage);
    const message = {
      id: this.ctx.id || (id?.startsWith('msg_') ? id : newMessageId()),
      type: 'message', role: 'assistant', model: this.ctx.model, content: [],
      stop_reason: null, stop_sequence: null,
      usage: {
        input_tokens: counters.input, cache_creation_input_tokens: counters.cacheWrite, cache_read_input_tokens: counters.cacheRead,
        output_tokens: 1, service_tier: this.ctx.tier,
      },
    };
    return frame('message_start', { type: 'message_start', message }) + PING;
  }

  private open(index: number, kind: 'text' | 'reasoning'): string {
    const block: OpenBlock = { kind, at: this.nextIndex++ };
    this.blocks.set(index, block);
    const content_block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    return frame('content_block_start', { type: 'content_block_start', index: block.at, content_block });
  }

  /** The open block at `index`, opening one of `kind` first when the stream skipped block_start. */
  private blockFor(index: number, kind: 'text' | 'reasoning'): [OpenBlock, string] {
    const block = this.blocks.get(index);
    if (block) return [block, ''];
    const pre = this.open(index, kind);
    return [this.blocks.get(index)!, pre];
  }

  /** A reasoning signature becomes a signature_delta: Anthropic's as it is, OpenAI's encrypted
   *  reasoning and Gemini's thought signature tagged (reasoning-tags.ts), which the Messages
   *  request decoder takes back to the IR field of their vendor.
   *  A Gemini thought signature on a function call has no tool_use field: while the call's start
   *  is still held back it goes out first as a thinking block of its own, which the Gemini
   *  encoders put back on the call next turn. */
  private signature(index: number, signature: string, encrypted: boolean, anthropic: boolean): string {
    if (!signature) return '';
    if (encrypted) signature = OPENAI_ENCRYPTED_TAG + signature;
    else if (!anthropic) signature = GEMINI_SIGNATURE_TAG + signature;
    const block = this.blocks.get(index);
    if (block?.kind === 'tool_call') {
      if (encrypted || block.at !== undefined) return '';
      const at = this.nextIndex++;
      return frame(
        'content_block_start', { type: 'content_block_start', index: at, content_block: { type: 'thinking', thinking: '', signature: '' } },
      )
        + delta(at, { type: 'signature_delta', signature })
        + frame('content_block_stop', { type: 'content_block_stop', index: at })
        + this.flushTool(block);
    }
    const [r, pre] = this.blockFor(index, 'reasoning');
    return r.kind === 'reasoning' ? pre + delta(r.at!, { type: 'signature_delta', signature }) : '';
  }

  private flushTool(block: OpenBlock): string {
    if (block.at !== undefined || !block.tool) return '';
    block.at = this.nextIndex++;
    const content_block = { type: 'tool_use', id: block.tool.id, name: block.tool.name, input: {} };
    return frame('content_block_start', { type: 'content_block_start', index: block.at, content_block });
  }

  private close(index: number): string {
    const block = this.blocks.get(index);
    if (!block) return '';
    this.blocks.delete(index);
    return this.flushTool(block) + frame('content_block_stop', { type: 'content_block_stop', index: block.at });
  }

  private closeAll(): string {
    let out = '';
    for (const index of [...this.blocks.keys()]) out += this.close(index);
    return out;
  }
}

const frame = (event: string, data: unknown): string => formatFrame(JSON.stringify(data), event);
const delta = (index: number, d: Record<string, unknown>): string =>
  frame('content_block_delta', { type: 'content_block_delta', index, delta: d });
/** Anthropic's error event; `code`, the gateway's (the spec's) code beside Anthropic's type, as in
 *  every Messages error body and the passthrough's error event (errors.ts). */
const errorFrame = (type: string, message: string, code?: string): string =>
  frame('error', { type: 'error', error: code === undefined ? { type, message } : { type, message, code } });
