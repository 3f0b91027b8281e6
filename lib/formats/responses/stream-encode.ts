// IR events → the caller's Responses event stream, in the lifecycle the official SDK accumulates:
// response.created / in_progress, then per block output_item.added … output_item.done, then one
// terminal event carrying the whole response (built by encodeResponse, so streamed and
// non-streamed callers read the same object). Deltas, the hot path, are concatenated from
// per-block prefixes instead of serialising an object per token.
import { type IRBlock, type IREvent, type IRResponse, type IRStopReason, type IRUsage, zeroUsage } from '../../ir.ts';
import { formatFrame } from '../../sse.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { itemId, responseId } from './ids.ts';
import { encodeResponsesResponse, keepsGeminiSignatures, outputItem, responseShell } from './response.ts';

interface Item {
  outputIndex: number;
  id: string;
  block: IRBlock;            // grows as deltas arrive; becomes the output item at the end
  open: boolean;
  summaryOpen: boolean;      // reasoning: summary part 0 announced
  deltaType: string;         // the event type of this item's deltas
  deltaTail: string;         // `,"item_id":…,"delta":` for this item's delta events
}

const deltaEvent = (block: IRBlock): string =>
  block.kind === 'text' ? (block.refusal ? 'response.refusal.delta' : 'response.output_text.delta')
    : block.kind === 'reasoning' ? 'response.reasoning_summary_text.delta'
    : 'response.function_call_arguments.delta';

/** The content part a text item holds: a refusal part for a model refusal, output text otherwise. */
const textPart = (block: Extract<IRBlock, { kind: 'text' }>, text: string): Record<string, unknown> =>
  block.refusal ? { type: 'refusal', refusal: text } : { type: 'output_text', annotations: [], text };

/** The part index a delta event names for its item: content_index for text, summary_index for reasoning. */
const partIndexField = (kind: IRBlock['kind']): string =>
  kind === 'text' ? ',"content_index":0' : kind === 'reasoning' ? ',"summary_index":0' : '';

export function createResponsesStreamEncoder(ctx: EncodeContext): StreamEncoder {
  const id = responseId(ctx.id);
  const encCtx: EncodeContext = { ...ctx, id };
  const items = new Map<number, Item>(); // IR block index → item
  const order: Item[] = [];
  let seq = 0;
  let started = false;
  let done = false;
  const gemini = keepsGeminiSignatures(ctx);
  /** A function call whose item is not announced yet: a Gemini signature on the call comes right
   *  after its block_start and goes out first, on a reasoning item of its own (response.ts
   *  withCallSignatures); any other event opens the call's item. */
  let held: { index: number; block: Extract<IRBlock, { kind: 'tool_call' }> } | undefined;

  const frame = (type: string, payload: Record<string, unknown>): string =>
    formatFrame(JSON.stringify({ type, sequence_number: seq++, ...payload }), type);

  const deltaFrame = (item: Item, delta: string): string => {
    const type = item.deltaType;
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq++}${item.deltaTail}${JSON.stringify(delta)}}\n\n`;
  };

  function start(): string {
    if (started) return '';
    started = true;
    const response = responseShell(id, encCtx, 'in_progress');
    return frame('response.created', { response }) + frame('response.in_progress', { response });
  }

  /** Opens an item for `block`; `index` is its IR block index, undefined for a call signature's
   *  reasoning item, which no IR event names. */
  function openItem(index: number | undefined, block: IRBlock): string {
    const outputIndex = order.length;
    const prefix = block.kind === 'text' ? 'msg_' : block.kind === 'reasoning' ? 'rs_' : 'fc_';
    const itemIdText = itemId(prefix, id, outputIndex);
    const item: Item = {
      outputIndex, id: itemIdText, block, open: true, summaryOpen: false, deltaType: deltaEvent(block),
      deltaTail: `,"item_id":${JSON.stringify(itemIdText)},"output_index":${outputIndex}${partIndexField(block.kind)},"delta":`,
    };
    if (index !== undefined) items.set(index, item);
    order.push(item);
    const at = { output_index: outputIndex };
    switch (block.kind) {
      case 'text':
        return frame(
          'response.output_item.added',
          { ...at, item: { id: item.id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } },
        )
          + frame(
            'response.content_part.added',
            { item_id: item.id, ...at, content_index: 0, part: textPart(block, '') },
          );
      case 'reasoning':
        return frame('response.output_item.added', { ...at, item: { id: item.id, type: 'reasoning', summary: [] } });
      case 'tool_call':
        return frame('response.output_item.added', {
          ...at, item: { id: item.id, type: 'function_call', status: 'in_progress', arguments: '', call_id: block.id, name: block.name },
        });
    }
  }

  /** The item at an IR index, opened on the fly when a delta came without its block_start. */
  function itemFor(index: number, kind: 'text' | 'reasoning'): [Item, string] {
    const have = items.get(index);
    if (have) return [have, ''];
    const text = openItem(index, kind === 'text' ? { kind: 'text', text: '' } : { kind: 'reasoning', text: '' });
    return [items.get(index)!, text];
  }

  function closeItem(item: Item): string {
    if (!item.open) return '';
    item.open = false;
    const block = item.block;
    const at = { item_id: item.id, output_index: item.outputIndex };
    let out = '';
    if (block.kind === 'text') {
      out += (block.refusal
        ? frame('response.refusal.done', { ...at, content_index: 0, refusal: block.text })
        : frame('response.output_text.done', { ...at, content_index: 0, text: block.text, logprobs: [] }))
        + frame('response.content_part.done', { ...at, content_index: 0, part: textPart(block, block.text) });
    } else if (block.kind === 'reasoning' && item.summaryOpen) {
      out += frame('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: block.text })
        + frame('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: block.text } });
    } else if (block.kind === 'tool_call') {
      out += frame('response.function_call_arguments.done', { ...at, name: block.name, arguments: block.arguments });
    }
    return out + frame('response.output_item.done', { output_index: item.outputIndex, item: outputItem(block, id, item.outputIndex, gemini) });
  }

  /** Announces the held function call; first, when `signature` is Gemini's and the caller keeps
   *  Gemini's signatures, the reasoning item that carries it (added and done at once). */
  function openHeld(signature?: Extract<IREvent, { type: 'signature' }>): string {
    const call = held!;
    held = undefined;
    let out = '';
    if (signature && gemini && signature.signature && !signature.encrypted && !signature.anthropic) {
      const block: IRBlock = { kind: 'reasoning', text: '', signature: signature.signature };
      out += openItem(undefined, block) + closeItem(order.at(-1)!);
    }
    return out + openItem(call.index, call.block);
  }

  /** The terminal event; usage null when the provider gave no final usage (a stream that broke). */
  function terminal(reason: IRStopReason, usage: IRUsage | null, ev?: Extract<IREvent, { type: 'finish' }>, error?: IRResponse['error']): string {
    // The tier that served, as the provider's final event says (response.created named the committed one).
    const tier = ev?.tier ?? ctx.tier;
    const res: IRResponse = { id, model: ctx.model, blocks: order.map(i => i.block), stopReason: reason, usage: usage ?? zeroUsage(), tier };
    if (ev?.extras) res.extras = ev.extras;
    if (error) res.error = error;
    const response = encodeResponsesResponse(res, { ...encCtx, tier });
    if (!usage) response.usage = null;
    const type = response.status === 'failed' ? 'response.failed'
      : response.status === 'incomplete' ? 'response.incomplete'
      : 'response.completed';
    return frame(type, { response });
  }

  return {
    push(ev: IREvent): string {
      if (done) return '';
      let out = start();
      if (held && ev.type === 'signature' && ev.index === held.index) return out + openHeld(ev);
      if (held) out += openHeld();
      switch (ev.type) {
        case 'start':
        case 'usage': // a running count; only the finish's usage is final (terminal)
          break;
        case 'block_start':
          if (items.has(ev.index)) break;
          if (ev.block.kind === 'tool_call') {
            held = { index: ev.index, block: { kind: 'tool_call', id: ev.block.id, name: ev.block.name, arguments: '' } };
          } else {
            out += openItem(ev.index, ev.block.kind === 'text'
              ? { kind: 'text', text: '', ...(ev.block.refusal ? { refusal: true } : {}) }
              : { kind: 'reasoning', text: '' });
          }
          break;
        case 'text_delta': {
          const [item, opened] = itemFor(ev.index, 'text');
          out += opened;
          if (item.block.kind !== 'text' || !ev.text) break;
          item.block.text += ev.text;
          out += deltaFrame(item, ev.text);
          break;
        }
        case 'reasoning_delta': {
          const [item, opened] = itemFor(ev.index, 'reasoning');
          out += opened;
          if (item.block.kind !== 'reasoning' || !ev.text) break;
          if (!item.summaryOpen) {
            item.summaryOpen = true;
            out += frame(
              'response.reasoning_summary_part.added',
              { item_id: item.id, output_index: item.outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } },
            );
          }
          item.block.text += ev.text;
          out += deltaFrame(item, ev.text);
          break;
        }
        case 'signature': {
          // OpenAI's encrypted reasoning, and Anthropic's and (when the caller keeps them) Gemini's
          // signatures, which outputItem tags, go back to the caller in encrypted_content. A
          // Gemini signature on a call already announced has no place left before it: dropped.
          const block = items.get(ev.index)?.block;
          if (block?.kind !== 'reasoning') break;
          if (ev.encrypted) block.encrypted = ev.signature;
          else if (ev.anthropic) { block.signature = (block.signature ?? '') + ev.signature; block.anthropic = true; }
          else if (gemini) block.signature = (block.signature ?? '') + ev.signature;
          break;
        }
        case 'args_delta': {
          const item = items.get(ev.index);
          if (item?.block.kind !== 'tool_call' || !ev.json) break;
          item.block.arguments += ev.json;
          out += deltaFrame(item, ev.json);
          break;
        }
        case 'block_stop': {
          const item = items.get(ev.index);
          if (item) out += closeItem(item);
          break;
        }
        case 'finish':
          for (const item of order) out += closeItem(item);
          out += terminal(
            ev.reason, ev.usage, ev,
            ev.reason === 'error' ? { code: 'provider_error', message: 'The provider ended the response with an error.' } : undefined,
          );
          done = true;
          break;
        case 'error':
          // The SDK raises APIError on an `error` event whose data has an `error` key; the flat
          // code/message pair is the SDK's own ResponseErrorEvent type. Both are written.
          out += frame('error', {
            code: ev.code, message: ev.message, param: null,
            error: { type: 'server_error', code: ev.code, message: ev.message, param: null },
          });
          // A failure before the finish has no final usage to tell: an IR usage event before it is
          // a running count (Anthropic's message_start says 1 output token), not what the request
          // is charged (an estimate). usage null, as OpenAI's own response.failed writes it and a
          // passthrough forwards it.
          out += terminal('error', null, undefined, { code: ev.code, message: ev.message });
          done = true;
          break;
      }
      return out;
    },
  };
}
