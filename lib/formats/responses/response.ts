// Non-streamed Responses bodies: vendor A's body → IRResponse, and IRResponse → the caller's body.
// encodeResponse also builds the `response` object of the stream encoder's lifecycle events, so
// a streamed and a non-streamed caller see the same object.
import type { IRBlock, IRResponse, IRStopReason } from '../../ir.ts';
import type { EncodeContext } from '../types.ts';
import { itemId, responseId } from './ids.ts';
import { usageFromResponses, usageToResponses } from './usage.ts';
import { serviceTierOf, tierFromServiceTier } from '../openai-shared.ts';
import { isPlainObject } from '../../json-util.ts';
import { ANTHROPIC_SIGNATURE_TAG, GEMINI_SIGNATURE_TAG } from '../reasoning-tags.ts';

export function decodeResponsesResponse(body: any): IRResponse {
  const blocks: IRBlock[] = [];
  let sawToolCall = false;
  let sawRefusal = false;
  for (const item of Array.isArray(body?.output) ? body.output : []) {
    switch (item?.type) {
      case 'reasoning': {
        const summary = Array.isArray(item.summary) ? item.summary.map((s: any) => String(s?.text ?? '')) : [];
        const block: IRBlock = { kind: 'reasoning', text: summary.join('\n\n') };
        if (typeof item.encrypted_content === 'string' && item.encrypted_content) block.encrypted = item.encrypted_content;
        blocks.push(block);
        break;
      }
      case 'message': {
        // Output text parts in a row join into one text block; refusal parts into one marked refusal.
        let block: Extract<IRBlock, { kind: 'text' }> | undefined;
        for (const part of Array.isArray(item.content) ? item.content : []) {
          const refusal = part?.type === 'refusal';
          if (!refusal && part?.type !== 'output_text') continue;
          if (!block || (block.refusal ?? false) !== refusal) {
            block = refusal ? { kind: 'text', text: '', refusal: true } : { kind: 'text', text: '' };
            blocks.push(block);
          }
          block.text += String((refusal ? part.refusal : part.text) ?? '');
          sawRefusal ||= refusal;
        }
        if (!block) blocks.push({ kind: 'text', text: '' });
        break;
      }
      case 'function_call':
        sawToolCall = true;
        blocks.push({
          kind: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? ''),
          arguments: String(item.arguments ?? ''),
        });
        break;
      default:
        break; // hosted tool items (web_search_call…) have no IR block; their text arrives in a message
    }
  }
  const res: IRResponse = {
    id: String(body?.id ?? ''),
    model: String(body?.model ?? ''),
    blocks,
    stopReason: stopReasonOf(body?.status, body?.incomplete_details?.reason, sawToolCall, sawRefusal),
    usage: usageFromResponses(body?.usage),
    tier: tierFromServiceTier(body?.service_tier),
  };
  if (!isPlainObject(body?.usage)) res.unreported = true;
  if (body?.status === 'failed' || body?.error) {
    res.error = { code: String(body?.error?.code ?? 'server_error'), message: String(body?.error?.message ?? 'The response failed.') };
  }
  return res;
}

export function stopReasonOf(status: unknown, incompleteReason: unknown, sawToolCall: boolean, sawRefusal: boolean): IRStopReason {
  if (status === 'failed' || status === 'cancelled') return 'error';
  if (status === 'incomplete') return incompleteReason === 'content_filter' ? 'content_filter' : 'max_tokens';
  if (sawToolCall) return 'tool_use';
  return sawRefusal ? 'refusal' : 'end';
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export const statusOf = (res: Pick<IRResponse, 'stopReason' | 'error'>): ResponseStatus =>
  res.error || res.stopReason === 'error' ? 'failed'
    : res.stopReason === 'max_tokens' || res.stopReason === 'content_filter' ? 'incomplete'
    : 'completed';

export function encodeResponsesResponse(res: IRResponse, ctx: EncodeContext): Record<string, any> {
  const id = responseId(ctx.id);
  const status = statusOf(res);
  const body = responseShell(id, ctx, status);
  if (status === 'failed') body.error = { code: res.error?.code ?? 'server_error', message: res.error?.message ?? 'The response failed.' };
  if (status === 'incomplete') {
    body.incomplete_details = { reason: res.stopReason === 'content_filter' ? 'content_filter' : 'max_output_tokens' };
  }
  const gemini = keepsGeminiSignatures(ctx);
  body.output = (gemini ? withCallSignatures(res.blocks) : res.blocks).map((block, i) => outputItem(block, id, i, gemini));
  body.usage = usageToResponses(res.usage, res.extras);
  return body;
}

/** Gemini's thought signatures reach a Responses caller, tagged in encrypted_content, only when
 *  it asked `include: ["reasoning.encrypted_content"]`, as OpenAI sends its own: a caller that did
 *  not ask gets no new reasoning items (a signed Gemini 3 call would bring one each). */
export const keepsGeminiSignatures = (ctx: EncodeContext): boolean =>
  Array.isArray(ctx.echo?.include) && ctx.echo.include.includes('reasoning.encrypted_content');

/** A Gemini signature on a function call (Vertex signs the call itself) has no field on a
 *  function_call item: it rides a reasoning item of its own just before the call, which the
 *  caller's next request gives back in that place, and the Gemini encoders put it back on the call
 *  (Vertex) or in a thought step before it (Interactions). The stream encoder does the same. */
function withCallSignatures(blocks: IRBlock[]): IRBlock[] {
  if (!blocks.some((b) => b.kind === 'tool_call' && b.signature)) return blocks;
  return blocks.flatMap((b): IRBlock[] =>
    (b.kind === 'tool_call' && b.signature ? [{ kind: 'reasoning', text: '', signature: b.signature }, b] : [b]));
}

/** The request members a translated response repeats (responseShell) or reads (include): kept
 *  past the release of the request's body, the prompt not among them. */
const ECHOED = ['instructions', 'max_output_tokens', 'parallel_tool_calls', 'reasoning', 'temperature', 'text',
  'tool_choice', 'tools', 'top_p', 'truncation', 'user', 'metadata', 'include'] as const;

export function responsesEcho(body: Readonly<Record<string, any>>): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  for (const name of ECHOED) if (body[name] !== undefined) echo[name] = body[name];
  return echo;
}

/** The fields every response object carries; status in_progress and no usage for response.created.
 *  The request's own fields are repeated (ctx.echo) as OpenAI's response does, with store false:
 *  an answer translated from another API is stored by no one. */
export function responseShell(id: string, ctx: EncodeContext, status: ResponseStatus): Record<string, any> {
  const echo = ctx.echo;
  return {
    id,
    object: 'response',
    created_at: ctx.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: echo?.instructions ?? null,
    max_output_tokens: echo?.max_output_tokens ?? null,
    model: ctx.model,
    output: [] as unknown[],
    parallel_tool_calls: echo?.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null, ...echo?.reasoning },
    service_tier: serviceTierOf(ctx.tier),
    store: false,
    temperature: echo?.temperature ?? null,
    text: { format: { type: 'text' }, ...echo?.text },
    tool_choice: echo?.tool_choice ?? 'auto',
    tools: echo?.tools ?? [],
    top_p: echo?.top_p ?? null,
    truncation: echo?.truncation ?? 'disabled',
    usage: null as unknown,
    user: echo?.user ?? null,
    metadata: echo?.metadata ?? {},
  };
}

/** One IR block → one output item, completed. Ids follow the item's output index (ids.ts).
 *  gemini: the caller keeps Gemini's signatures (keepsGeminiSignatures). */
export function outputItem(block: IRBlock, respId: string, outputIndex: number, gemini = false): Record<string, unknown> {
  switch (block.kind) {
    case 'text':
      return {
        id: itemId('msg_', respId, outputIndex), type: 'message', status: 'completed', role: 'assistant',
        content: [block.refusal ? { type: 'refusal', refusal: block.text } : { type: 'output_text', text: block.text, annotations: [] }],
      };
    case 'reasoning': {
      const item: Record<string, unknown> = {
        id: itemId('rs_', respId, outputIndex), type: 'reasoning',
        summary: block.text ? [{ type: 'summary_text', text: block.text }] : [],
      };
      // Anthropic's and Gemini's signatures ride where OpenAI's encrypted reasoning does, tagged
      // (reasoning-tags.ts); an unmarked signature is Gemini's.
      if (block.encrypted) item.encrypted_content = block.encrypted;
      else if (block.anthropic && block.signature) item.encrypted_content = ANTHROPIC_SIGNATURE_TAG + block.signature;
      else if (gemini && block.signature) item.encrypted_content = GEMINI_SIGNATURE_TAG + block.signature;
      return item;
    }
    case 'tool_call':
      return {
        id: itemId('fc_', respId, outputIndex), type: 'function_call', status: 'completed',
        call_id: block.id, name: block.name, arguments: block.arguments,
      };
  }
}
