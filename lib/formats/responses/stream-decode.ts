// Vendor A's Responses event stream → IR events. Output items open IR blocks in order of
// appearance: a reasoning item or a function_call item is one block; each content part of a
// message item is one text block. The terminal response.completed / response.incomplete carries
// the usage and the tier that served; response.failed and `error` become one IR error.
import { pickMembers, withoutBulk, withoutString, type MemberPick } from '../../json-skip.ts';
import { type IRBlock, type IREvent, type IRStopReason, type IRUsage, zeroUsage } from '../../ir.ts';
import type { SSEFrame, StreamDecoder } from '../types.ts';
import { decodeResponsesResponse, stopReasonOf } from './response.ts';
import { usageFromResponses } from './usage.ts';
import { tierFromServiceTier } from '../openai-shared.ts';

interface OpenBlock { index: number; kind: 'text' | 'reasoning' | 'tool_call'; streamed: boolean; open: boolean }

/** The events this decoder reads. Once the stream has started (its first event gave the id and
 *  model), any other (response.in_progress, annotations, hosted-tool progress…) carries nothing
 *  for the IR, and its frame is not parsed. */
const READ = new Set([
  'response.created', 'response.output_item.added', 'response.content_part.added',
  'response.output_text.delta', 'response.refusal.delta', 'response.output_text.done', 'response.refusal.done',
  'response.content_part.done', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done',
  'response.output_item.done', 'response.completed', 'response.incomplete', 'response.failed', 'error',
]);

export function createResponsesStreamDecoder(): StreamDecoder {
  let next = 0;
  const blocks = new Map<string, OpenBlock>(); // key: output_index, or output_index:content_index for text
  let started = false;
  let ended = false; // finish or error emitted
  let sawToolCall = false;
  let sawRefusal = false;
  let usage: IRUsage | undefined;
  const summaryParts = new Map<number, number>(); // reasoning block index → summary parts seen

  const open = (out: IREvent[], key: string, block: StartBlock): OpenBlock => {
    const openBlock: OpenBlock = { index: next++, kind: block.kind, streamed: false, open: true };
    blocks.set(key, openBlock);
    out.push({ type: 'block_start', index: openBlock.index, block });
    return openBlock;
  };
  const close = (out: IREvent[], openBlock: OpenBlock | undefined): void => {
    if (openBlock?.open) { openBlock.open = false; out.push({ type: 'block_stop', index: openBlock.index }); }
  };
  /** The text block of a content part; a refusal part's block is marked so encoders write it as one. */
  const textBlock = (out: IREvent[], ev: any, refusal = false): OpenBlock =>
    blocks.get(`${ev.output_index}:${ev.content_index ?? 0}`)
      ?? open(out, `${ev.output_index}:${ev.content_index ?? 0}`, refusal ? { kind: 'text', refusal: true } : { kind: 'text' });
  // The text block the last delta went to: the next delta almost always goes there too.
  let last: { output: number; content: number; block: OpenBlock } | undefined;

  function push(frame: SSEFrame): IREvent[] {
    if (ended) return [];
    if (started && frame.event !== undefined && !READ.has(frame.event)) return [];
    if (started && frame.event === 'response.output_text.delta') {
      const d = textDelta(frame.data);
      if (d) {
        if (!d.text) return [];
        const out: IREvent[] = [];
        if (last?.output !== d.output || last.content !== d.content) {
          last = { output: d.output, content: d.content, block: textBlock(out, { output_index: d.output, content_index: d.content }) };
        }
        last.block.streamed = true;
        out.push({ type: 'text_delta', index: last.block.index, text: d.text });
        return out;
      }
    }
    let ev: any;
    const data = next > 0 ? withoutRepeats(frame) : frame.data;
    const pick = data.length > PICK_OVER ? echoPick(frame, next) : undefined;
    // `[DONE]` and malformed lines carry nothing
    try { ev = pick ? pickMembers(data, pick) : JSON.parse(data); } catch { return []; }
    if (!ev || typeof ev !== 'object') return [];
    const type: string = ev.type ?? frame.event ?? '';
    const out: IREvent[] = [];
    if (!started && type !== 'error') {
      started = true;
      const response = ev.response;
      out.push({
        type: 'start', ...(response?.id ? { id: String(response.id) } : {}), ...(response?.model ? { model: String(response.model) } : {}),
      });
    }
    switch (type) {
      case 'response.output_item.added': {
        const item = ev.item ?? {};
        const key = String(ev.output_index);
        if (item.type === 'reasoning') {
          const openBlock = open(out, key, { kind: 'reasoning' });
          summaryParts.set(openBlock.index, 0);
        } else if (item.type === 'function_call') {
          sawToolCall = true;
          const openBlock = open(out, key, { kind: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? '') });
          if (item.arguments) { openBlock.streamed = true; out.push({ type: 'args_delta', index: openBlock.index, json: item.arguments }); }
        }
        break; // message items open their blocks per content part
      }
      case 'response.content_part.added':
        if (ev.part?.type === 'output_text' || ev.part?.type === 'refusal') textBlock(out, ev, ev.part.type === 'refusal');
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const refusal = type === 'response.refusal.delta';
        sawRefusal ||= refusal;
        if (!ev.delta) break;
        const openBlock = textBlock(out, ev, refusal);
        openBlock.streamed = true;
        out.push({ type: 'text_delta', index: openBlock.index, text: String(ev.delta) });
        break;
      }
      case 'response.output_text.done':
      case 'response.refusal.done': {
        // A stream that skipped the deltas still delivers the text once (parsed whole for it: the
        // repeat was cut from what was parsed above).
        const openBlock = textBlock(out, ev, type === 'response.refusal.done');
        if (openBlock.streamed) break;
        const whole = data === frame.data ? ev : JSON.parse(frame.data);
        const text = type === 'response.output_text.done' ? whole.text : whole.refusal;
        if (text) {
          openBlock.streamed = true;
          out.push({ type: 'text_delta', index: openBlock.index, text: String(text) });
        }
        break;
      }
      case 'response.content_part.done':
        close(out, blocks.get(`${ev.output_index}:${ev.content_index ?? 0}`));
        break;
      case 'response.reasoning_summary_part.added': {
        const openBlock = blocks.get(String(ev.output_index));
        if (!openBlock || openBlock.kind !== 'reasoning') break;
        const seen = summaryParts.get(openBlock.index) ?? 0;
        // Several summary parts share one IR reasoning block, separated as the non-streamed decoder joins them.
        if (seen > 0) out.push({ type: 'reasoning_delta', index: openBlock.index, text: '\n\n' });
        summaryParts.set(openBlock.index, seen + 1);
        break;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const openBlock = blocks.get(String(ev.output_index));
        if (openBlock?.kind === 'reasoning' && ev.delta) {
          openBlock.streamed = true;
          out.push({ type: 'reasoning_delta', index: openBlock.index, text: String(ev.delta) });
        }
        break;
      }
      case 'response.function_call_arguments.delta': {
        const openBlock = blocks.get(String(ev.output_index));
        if (openBlock?.kind === 'tool_call' && ev.delta) {
          openBlock.streamed = true;
          out.push({ type: 'args_delta', index: openBlock.index, json: String(ev.delta) });
        }
        break;
      }
      case 'response.function_call_arguments.done': {
        const openBlock = blocks.get(String(ev.output_index));
        if (openBlock?.kind === 'tool_call' && !openBlock.streamed && ev.arguments) {
          openBlock.streamed = true;
          out.push({ type: 'args_delta', index: openBlock.index, json: String(ev.arguments) });
        }
        break;
      }
      case 'response.output_item.done':
        itemDone(out, ev);
        break;
      case 'response.completed':
      case 'response.incomplete':
        finish(out, ev.response, type === 'response.incomplete' ? 'incomplete' : ev.response?.status);
        break;
      case 'response.failed': {
        const response = ev.response ?? {};
        if (response.usage) out.push({ type: 'usage', usage: usageFromResponses(response.usage) });
        ended = true;
        out.push({
          type: 'error',
          code: String(response.error?.code ?? 'server_error'),
          message: String(response.error?.message ?? 'The response failed.'),
        });
        break;
      }
      case 'error': {
        // Two shapes on the wire: flat {code, message} (SDK type) and nested {error:{code, message}}.
        const e = ev.error && typeof ev.error === 'object' ? ev.error : ev;
        ended = true;
        out.push({ type: 'error', code: String(e.code ?? e.type ?? 'server_error'), message: String(e.message ?? 'Upstream error.') });
        break;
      }
      default:
        break; // created, in_progress, annotations, hosted-tool progress: nothing for the IR
    }
    return out;
  }

  function itemDone(out: IREvent[], ev: any): void {
    const item = ev.item ?? {};
    const key = String(ev.output_index);
    if (item.type === 'message') {
      for (const [k, openBlock] of blocks) if (k.startsWith(`${key}:`)) close(out, openBlock);
      return;
    }
    let openBlock = blocks.get(key);
    if (item.type === 'reasoning') {
      openBlock ??= open(out, key, { kind: 'reasoning' });
      if (!openBlock.streamed && Array.isArray(item.summary) && item.summary.length) {
        out.push({
          type: 'reasoning_delta', index: openBlock.index, text: item.summary.map((s: any) => String(s?.text ?? '')).join('\n\n'),
        });
      }
      // The item's final encrypted_content supersedes the one output_item.added carried.
      if (typeof item.encrypted_content === 'string' && item.encrypted_content) {
        out.push({ type: 'signature', index: openBlock.index, signature: item.encrypted_content, encrypted: true });
      }
    } else if (item.type === 'function_call') {
      sawToolCall = true;
      openBlock ??= open(out, key, { kind: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? '') });
      if (!openBlock.streamed && item.arguments) out.push({ type: 'args_delta', index: openBlock.index, json: String(item.arguments) });
    }
    if (openBlock) { openBlock.streamed = true; close(out, openBlock); }
  }

  function finish(out: IREvent[], r: any, status: unknown): void {
    for (const openBlock of blocks.values()) close(out, openBlock);
    if (next === 0 && Array.isArray(r?.output) && r.output.length) {
      const replayed = decodeResponsesResponse(r).blocks;
      next = replayBlocks(out, replayed, next);
      sawToolCall ||= replayed.some(block => block.kind === 'tool_call');
      sawRefusal ||= replayed.some(block => block.kind === 'text' && block.refusal === true);
    }
    if (r?.usage) usage = usageFromResponses(r.usage);
    const reason: IRStopReason = stopReasonOf(status, r?.incomplete_details?.reason, sawToolCall, sawRefusal);
    ended = true;
    out.push({ type: 'finish', reason, usage: usage ?? zeroUsage(), tier: tierFromServiceTier(r?.service_tier), ...(usage ? {} : { unreported: true }) });
  }

  return {
    push,
    end(): IREvent[] {
      // Only usage makes a stream without its terminal event billable; otherwise the gateway sees
      // a missing finish and treats it as the upstream failure it is.
      if (ended || !usage) return [];
      const out: IREvent[] = [];
      for (const openBlock of blocks.values()) close(out, openBlock);
      ended = true;
      out.push({ type: 'finish', reason: stopReasonOf(undefined, undefined, sawToolCall, sawRefusal), usage });
      return out;
    },
  };
}

type StartBlock = Extract<IREvent, { type: 'block_start' }>['block'];

/** Most of a stream is text deltas, `{"type":"response.output_text.delta",…,"output_index":0,
 *  "content_index":0,"delta":"…",…}` in vendor A's order. One regular expression reads their
 *  three members (≈ 55 ns) where parsing the event takes ≈ 350 ns and makes its object and strings
 *  (bench/README.md, "Translated streams"). A quote inside a string value is escaped, so the
 *  members' sequence cannot match inside one. Any other shape (another order, a member that is not
 *  a plain number or string, spaces) does not match, and the event is parsed whole. */
const TEXT_DELTA = /^\{"type":"response\.output_text\.delta",[^]*?"output_index":(\d+),"content_index":(\d+),"delta":"((?:[^"\\]|\\.)*)"/;

function textDelta(data: string): { output: number; content: number; text: string } | undefined {
  const m = TEXT_DELTA.exec(data);
  if (!m) return undefined;
  const raw = m[3]!;
  let text = raw;
  if (raw.includes('\\')) {
    try { text = JSON.parse(`"${raw}"`) as string; } catch { return undefined; }
  }
  return { output: Number(m[1]), content: Number(m[2]), text };
}

/** Once blocks have opened, the events that close them repeat what streamed: the whole text
 *  (`output_text.done`, `refusal.done`, `content_part.done`), a message's content
 *  (`output_item.done`), the whole output (`response.completed`, `.incomplete`). Their frames are
 *  parsed with that bulk cut out, so a long answer is not parsed four times over at its end. */
function withoutRepeats(frame: SSEFrame): string {
  switch (frame.event) {
    case 'response.completed': case 'response.incomplete': return withoutBulk(frame.data, '"output":[');
    case 'response.output_item.done': return withoutBulk(frame.data, '"content":[');
    case 'response.content_part.done': return withoutBulk(frame.data, '"part":{');
    case 'response.output_text.done': return withoutString(frame.data, '"text":"');
    case 'response.refusal.done': return withoutString(frame.data, '"refusal":"');
    default: return frame.data;
  }
}

/** The first event and the terminal one echo the request's instructions and tools, for a coding
 *  agent tens of KB. From a long one the decoder takes only the members it reads (json-skip.ts
 *  pickMembers walks past the rest): the walk beats a parse once the skipped values are long
 *  strings, and loses to it on short events (bench/README.md, "The usage frame and the
 *  request's echo"). A terminal event read before any block opened is parsed whole: its output
 *  is the answer. */
const PICK_OVER = 2_048;
const CREATED: MemberPick = { type: true, response: { id: true, model: true } };
const TERMINAL: MemberPick = {
  type: true, response: { id: true, model: true, status: true, incomplete_details: true, usage: true, service_tier: true },
};

function echoPick(frame: SSEFrame, next: number): MemberPick | undefined {
  switch (frame.event) {
    case 'response.created': return CREATED;
    case 'response.completed': case 'response.incomplete': return next > 0 ? TERMINAL : undefined;
    default: return undefined;
  }
}

/** Blocks of a terminal response whose items never streamed (a body relayed as one event). */
function replayBlocks(out: IREvent[], replayed: IRBlock[], first: number): number {
  let index = first;
  for (const openBlock of replayed) {
    out.push({
      type: 'block_start', index,
      block: openBlock.kind === 'tool_call' ? { kind: 'tool_call', id: openBlock.id, name: openBlock.name }
        : openBlock.kind === 'text' && openBlock.refusal ? { kind: 'text', refusal: true }
        : { kind: openBlock.kind },
    });
    if (openBlock.kind === 'text' && openBlock.text) out.push({ type: 'text_delta', index, text: openBlock.text });
    if (openBlock.kind === 'reasoning' && openBlock.text) out.push({ type: 'reasoning_delta', index, text: openBlock.text });
    if (openBlock.kind === 'reasoning' && openBlock.encrypted) {
      out.push({ type: 'signature', index, signature: openBlock.encrypted, encrypted: true });
    }
    if (openBlock.kind === 'tool_call' && openBlock.arguments) out.push({ type: 'args_delta', index, json: openBlock.arguments });
    out.push({ type: 'block_stop', index });
    index++;
  }
  return index;
}
