// A non-streamed Message built from an Anthropic event stream for a Messages caller (cloud_b:
// Bedrock is always called streamed), as the Anthropic SDK's MessageStream accumulates one, so the
// answer says what a streamed one would: stop_sequence, pause_turn, citations, redacted_thinking,
// server tool blocks, none of which the IR has a shape for. The IR decoder runs beside it: usage,
// tier and failure are read as for every other assembled answer, and the body states them.
import type { IREvent, IRResponse } from '../../ir.ts';
import type { EncodeContext, NativeAssembler, SSEFrame } from '../types.ts';
import { argumentsObject } from '../tool-args.ts';
import { newMessageId } from './ids.ts';
import { MessagesStreamDecoder } from './stream-decode.ts';
import { anthropicUsage } from './usage.ts';

/** message_delta's members that describe the message (the SDK copies these; usage is merged). */
const DELTA_FIELDS = ['stop_reason', 'stop_sequence', 'stop_details', 'container'] as const;

export class MessagesAssembler implements NativeAssembler {
  private readonly decoder = new MessagesStreamDecoder();
  /** message_start's message, grown by every later event. */
  private message: Record<string, any> | undefined;
  /** The input_json_delta text of each block still open, parsed at its content_block_stop. */
  private readonly json = new Map<number, string>();

  push(frame: SSEFrame): IREvent[] {
    const events = this.decoder.push(frame);
    // The decoder parsed this frame too, for the IR; a second parse only on this path (a
    // non-streamed answer assembled from a stream) keeps the decoder, shared by every stream, as is.
    let data: any;
    try { data = JSON.parse(frame.data); } catch { return events; }
    if (data && typeof data === 'object') this.apply(data, frame.event);
    return events;
  }

  end(): IREvent[] {
    return this.decoder.end();
  }

  response(res: IRResponse, ctx: EncodeContext): Record<string, any> | undefined {
    const message = this.message;
    if (!message) return undefined;
    for (const index of [...this.json.keys()]) this.closeInput(index);
    if (!message.usage || typeof message.usage !== 'object') message.usage = {};
    // The counts charged, which are Anthropic's own but for Bedrock's: where message_delta did not
    // state them, its message_stop's amazon-bedrock-invocationMetrics did (the decoder reads them).
    for (const [name, value] of Object.entries(anthropicUsage(res.usage))) {
      if ((message.usage[name] ?? 0) !== value) message.usage[name] = value;
    }
    message.usage.service_tier = ctx.tier; // the tier that served, as every Messages answer says
    message.id ||= ctx.id || newMessageId();
    message.model ||= ctx.model;
    return message;
  }

  private apply(data: any, event: string | undefined): void {
    const type = data.type ?? event;
    if (type === 'message_start') {
      if (this.message || !data.message || typeof data.message !== 'object') return;
      this.message = data.message;
      if (!Array.isArray(this.message!.content)) this.message!.content = [];
      return;
    }
    const message = this.message;
    if (!message) return;
    switch (type) {
      case 'content_block_start':
        // As the SDK does: in the order sent (the index of a well-formed stream is the position).
        if (data.content_block && typeof data.content_block === 'object') message.content.push(data.content_block);
        break;
      case 'content_block_delta':
        this.delta(data.index, data.delta ?? {});
        break;
      case 'content_block_stop':
        this.closeInput(data.index);
        break;
      case 'message_delta': {
        const delta = data.delta ?? {};
        for (const field of DELTA_FIELDS) if (field in delta) message[field] = delta[field];
        // Cumulative totals: message_delta's win where it states them.
        if (data.usage && typeof data.usage === 'object') {
          if (!message.usage || typeof message.usage !== 'object') message.usage = {};
          for (const [name, value] of Object.entries(data.usage)) {
            if (value != null && name !== '__proto__') message.usage[name] = value;
          }
        }
        break;
      }
      default: // message_stop, ping, error (the IR decoder reports it)
        break;
    }
  }

  private delta(index: unknown, delta: any): void {
    const block = typeof index === 'number' ? this.message!.content[index] : undefined;
    if (!block || typeof block !== 'object') return;
    switch (delta.type) {
      case 'text_delta':
        if (block.type === 'text') block.text = (block.text ?? '') + String(delta.text ?? '');
        break;
      case 'citations_delta':
        if (block.type === 'text' && delta.citation !== undefined) (block.citations ??= []).push(delta.citation);
        break;
      case 'thinking_delta':
        if (block.type === 'thinking') block.thinking = (block.thinking ?? '') + String(delta.thinking ?? '');
        break;
      case 'signature_delta': // one per block, sent whole
        if (block.type === 'thinking') block.signature = delta.signature;
        break;
      case 'input_json_delta': // tool_use, server_tool_use, …: whatever block carries an input
        this.json.set(index as number, (this.json.get(index as number) ?? '') + String(delta.partial_json ?? ''));
        break;
      default:
        break;
    }
  }

  /** A block's input, from its input_json_delta text; a text that is not JSON (a call cut off)
   *  leaves the input it started with. */
  private closeInput(index: unknown): void {
    if (typeof index !== 'number') return;
    const text = this.json.get(index);
    if (text === undefined) return;
    this.json.delete(index);
    const input = argumentsObject(text);
    const block = this.message!.content[index];
    if (input && block && typeof block === 'object') block.input = input;
  }
}
