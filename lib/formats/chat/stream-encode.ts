// IR events → the caller's Chat Completions chunks. Every chunk shares one prefix (id, created,
// model, service_tier) and, when the caller asked include_usage, the `"usage":null` tail, so both
// are built once per stream and a content delta is three string concatenations.
import type { IREvent } from '../../ir.ts';
import type { Tier } from '../../routes.ts';
import { serviceTierOf } from '../openai-shared.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { chatId, finishFromStop } from './response.ts';
import { usageToChat } from './usage.ts';

const DONE = 'data: [DONE]\n\n';

export function createChatStreamEncoder(ctx: EncodeContext): StreamEncoder {
  const headOf = (tier: Tier): string => `data: {"id":${JSON.stringify(chatId(ctx.id))},"object":"chat.completion.chunk",`
    + `"created":${ctx.createdAt},"model":${JSON.stringify(ctx.model)},"service_tier":"${serviceTierOf(tier)}","system_fingerprint":null,"choices":`;
  let head = headOf(ctx.tier);
  const tail = ctx.includeUsage ? ',"usage":null}\n\n' : '}\n\n';
  const choice = (delta: string, finish: string | null = null): string =>
    `${head}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]${tail}`;

  const calls = new Map<number, number>(); // IR block index → Chat tool call ordinal
  const refusals = new Set<number>(); // IR text blocks whose text goes out as delta.refusal
  let started = false;
  let done = false;

  const start = (): string => {
    if (started) return '';
    started = true;
    return choice('{"role":"assistant","content":"","refusal":null}');
  };

  const error = (code: string, message: string): string =>
    `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code } })}\n\n`;

  return {
    push(ev: IREvent): string {
      if (done) return '';
      switch (ev.type) {
        case 'start':
          return start();
        case 'text_delta':
          if (!ev.text) return '';
          return start() + choice(`{"${refusals.size && refusals.has(ev.index) ? 'refusal' : 'content'}":${JSON.stringify(ev.text)}}`);
        case 'block_start': {
          if (ev.block.kind === 'text' && ev.block.refusal) refusals.add(ev.index);
          if (ev.block.kind !== 'tool_call' || calls.has(ev.index)) return '';
          const ordinal = calls.size;
          calls.set(ev.index, ordinal);
          const call = { index: ordinal, id: ev.block.id, type: 'function', function: { name: ev.block.name, arguments: '' } };
          return start() + choice(`{"tool_calls":[${JSON.stringify(call)}]}`);
        }
        case 'args_delta': {
          const ordinal = calls.get(ev.index);
          if (ordinal === undefined || !ev.json) return '';
          return choice(`{"tool_calls":[{"index":${ordinal},"function":{"arguments":${JSON.stringify(ev.json)}}}]}`);
        }
        case 'finish': {
          done = true;
          // The tier that served is known at the end (the provider's final event may name another
          // than the one committed): the chunks from here on, finish and usage, carry it.
          if (ev.tier && ev.tier !== ctx.tier) head = headOf(ev.tier);
          if (ev.reason === 'error') return start() + error('provider_error', 'The provider ended the response with an error.');
          let out = start() + choice('{}', finishFromStop(ev.reason));
          if (ctx.includeUsage) out += `${head}[],"usage":${JSON.stringify(usageToChat(ev.usage, ev.extras))}}\n\n`;
          return out + DONE;
        }
        case 'error':
          // After commit a failure is the format's own error event, then the end: no [DONE].
          done = true;
          return error(ev.code, ev.message);
        default:
          return ''; // reasoning, signatures, block_stop, mid-stream usage: no Chat form
      }
    },
  };
}
