// vendor_a, OpenAI Responses: POST /v1/responses. Flex = body service_tier "flex"; the tier used
// is reported in response.service_tier ("flex" | "default"), while response.created echoes the
// request's value (or "auto"), as the real API does.
import { responsesJsonOutput } from '../structured-output.ts';
import type { Answer } from '../answer.ts';
import { sseEvent, sseRaw, SSE_CONTENT_TYPE, type Frame } from '../frames.ts';
import {
  asArray, asPositiveInt, asString, contentText, invalid, isRecord, REASONING_TOKENS,
  type DecodeResult, type Decoded, type PromptTool,
} from '../prompt.ts';
import { bearerToken, recordedEventName, type RouteAdapter, type StreamEncoding } from './route.ts';

export const openaiResponses: RouteAdapter = {
  name: 'vendor_a',
  family: 'openai',
  match: (path) => (path === '/v1/responses' ? {} : undefined),
  // Responses are stored unless store:false; previous_response_id must name a stored one.
  state: {
    issued: (a, body) => (body.store === false ? undefined : `resp_${a.uid}`),
    referenced: (body) => asString(body.previous_response_id),
    notFound: (id) => ({
      status: 404, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: {
        message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id',
        code: 'previous_response_not_found',
      } }),
    }),
  },
  authenticate: (info) => (bearerToken(info.headers) ? undefined : {
    name: 'unauthenticated',
    message: 'You didn\'t provide an API key. You need to provide your API key in an Authorization header'
      + ' using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).',
  }),
  decode: decodeResponses,
  flexRefusal: {
    name: 'flex_capacity', status: 429,
    message: 'Resource Unavailable: flex processing capacity is temporarily exhausted. Please retry later or use service_tier "auto".',
  },
  streamContentType: SSE_CONTENT_TYPE,
  encodeBody: (a, d) => responseObject(a, d, a.stop === 'max_tokens' ? 'incomplete' : 'completed', outputItems(a), true),
  encodeStream: responseStream,
  replayFrame: (line) => sseRaw(line, recordedEventName(line, 'type')),
  replayTail: [],
  headers: () => ({ 'openai-version': '2020-10-01', 'x-request-id': `req_${Date.now().toString(36)}` }),
};

function decodeResponses(body: unknown): DecodeResult {
  if (!isRecord(body)) return invalid('Request body must be a JSON object.');
  const model = asString(body.model);
  if (!model) return invalid('Missing required parameter: \'model\'.');
  if (body.input === undefined && body.previous_response_id === undefined) return invalid('Missing required parameter: \'input\'.');

  let text = asString(body.instructions) ?? '';
  let lastUserText = '';
  let lastIsToolResult = false;
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : asArray(body.input);
  for (const item of items) {
    if (!isRecord(item)) continue;
    lastIsToolResult = item.type === 'function_call_output';
    if (item.type === 'function_call_output') text += contentText(item.output);
    else if (item.type === 'function_call') text += asString(item.arguments) ?? '';
    else if (item.role !== undefined) {
      const t = contentText(item.content);
      text += t;
      if (item.role === 'user') lastUserText = t;
    }
  }

  const tools: PromptTool[] = [];
  for (const t of asArray(body.tools)) {
    if (isRecord(t) && t.type === 'function' && typeof t.name === 'string') tools.push({ name: t.name, parameters: t.parameters });
  }
  const choice = body.tool_choice;
  const forcedTool = choice === 'required' ? true
    : isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string' ? choice.name : undefined;
  const effort = isRecord(body.reasoning) ? asString(body.reasoning.effort) : undefined;
  const reasoning = effort !== undefined && effort !== 'none';

  const value: Decoded = {
    prompt: {
      model, text, lastUserText, tools, forcedTool, lastTurnIsToolResult: lastIsToolResult,
      maxOutputTokens: asPositiveInt(body.max_output_tokens), jsonOutput: responsesJsonOutput(body.text),
      reasoning, reasoningTokens: reasoning ? REASONING_TOKENS[effort!] : undefined,
    },
    stream: body.stream === true,
    tier: body.service_tier === 'flex' ? 'flex' : 'standard',
    echo: body,
  };
  return { ok: true, value };
}

type Item = Record<string, unknown>;

function reasoningItem(a: Answer, summary: string): Item {
  return {
    id: `rs_${a.uid}`, type: 'reasoning', encrypted_content: `gAAAAAB${a.reasoning!.signature}`,
    summary: summary ? [{ type: 'summary_text', text: summary }] : [],
  };
}
function messageItem(a: Answer, text: string, status: string): Item {
  return {
    id: `msg_${a.uid}`, type: 'message', status, role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', annotations: [], logprobs: [], text }],
  };
}
function callItem(a: Answer, args: string, status: string): Item {
  return { id: `fc_${a.uid}`, type: 'function_call', status, arguments: args, call_id: `call_${a.uid}`, name: a.toolCall!.name };
}

function outputItems(a: Answer): Item[] {
  const out: Item[] = [];
  if (a.reasoning) out.push(reasoningItem(a, a.reasoning.tokens.text()));
  if (a.toolCall) out.push(callItem(a, a.toolCall.args, 'completed'));
  if (a.text) out.push(messageItem(a, a.text.tokens.text(), a.stop === 'max_tokens' ? 'incomplete' : 'completed'));
  return out;
}

function usage(a: Answer): Item {
  return {
    input_tokens: a.usage.input, input_tokens_details: { cached_tokens: 0 },
    output_tokens: a.usage.output, output_tokens_details: { reasoning_tokens: a.usage.reasoning },
    total_tokens: a.usage.input + a.usage.output,
  };
}

/** The Response object; `final` reports usage and the tier actually used. */
function responseObject(a: Answer, d: Decoded, status: string, output: Item[], final: boolean): Item {
  const req = d.echo;
  const reasoning = isRecord(req.reasoning) ? req.reasoning : {};
  return {
    id: `resp_${a.uid}`, object: 'response', created_at: a.created, status,
    background: false, completed_at: final ? Math.floor(Date.now() / 1000) : null, error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: req.instructions ?? null, max_output_tokens: req.max_output_tokens ?? null,
    model: a.model, output, parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    service_tier: final ? (d.tier === 'flex' ? 'flex' : 'default') : (req.service_tier ?? 'auto'),
    store: req.store ?? true, temperature: req.temperature ?? 1,
    text: req.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: req.tool_choice ?? 'auto', tools: req.tools ?? [], top_p: req.top_p ?? 1,
    truncation: req.truncation ?? 'disabled', usage: final ? usage(a) : null,
    user: req.user ?? null, metadata: req.metadata ?? {},
  };
}

function responseStream(a: Answer, d: Decoded): StreamEncoding {
  const seq = { n: 0 };
  const ev = (type: string, payload: Item, tokens = 0): Frame =>
    sseEvent(type, { type, sequence_number: seq.n++, ...payload }, tokens);
  return {
    frames: responseEvents(a, d, ev),
    // The recorded wire shape: an `error` event, then `response.failed`.
    error: (message) => [
      ev('error', { error: { type: 'server_error', code: 'server_error', message, param: null } }),
      ev('response.failed', {
        response: { ...responseObject(a, d, 'failed', [], false), error: { code: 'server_error', message } },
      }),
    ],
  };
}

type Emit = (type: string, payload: Item, tokens?: number) => Frame;

function* responseEvents(a: Answer, d: Decoded, ev: Emit): Generator<Frame> {
  const started = responseObject(a, d, 'in_progress', [], false);
  yield ev('response.created', { response: started });
  yield ev('response.in_progress', { response: started });

  let index = 0;
  if (a.reasoning) {
    const item_id = `rs_${a.uid}`;
    const at = { item_id, output_index: index, summary_index: 0 };
    yield ev('response.output_item.added', { output_index: index, item: reasoningItem(a, '') });
    yield ev('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    for (const t of a.reasoning.tokens) yield ev('response.reasoning_summary_text.delta', { ...at, delta: t }, 1);
    const text = a.reasoning.tokens.text();
    yield ev('response.reasoning_summary_text.done', { ...at, text });
    yield ev('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
    yield ev('response.output_item.done', { output_index: index, item: reasoningItem(a, text) });
    index++;
  }
  if (a.toolCall) {
    const at = { item_id: `fc_${a.uid}`, output_index: index };
    const per = Math.max(1, Math.round((a.usage.output - a.usage.reasoning) / a.toolCall.fragments.length));
    yield ev('response.output_item.added', { output_index: index, item: callItem(a, '', 'in_progress') });
    for (const f of a.toolCall.fragments) yield ev('response.function_call_arguments.delta', { ...at, delta: f }, per);
    yield ev('response.function_call_arguments.done', { ...at, name: a.toolCall.name, arguments: a.toolCall.args });
    yield ev('response.output_item.done', { output_index: index, item: callItem(a, a.toolCall.args, 'completed') });
  }
  if (a.text) {
    const at = { item_id: `msg_${a.uid}`, output_index: index, content_index: 0 };
    const part = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
    yield ev('response.output_item.added', { output_index: index, item: messageItem(a, '', 'in_progress') });
    yield ev('response.content_part.added', { ...at, part: part('') });
    for (const t of a.text.tokens) yield ev('response.output_text.delta', { ...at, delta: t, logprobs: [] }, 1);
    const text = a.text.tokens.text();
    yield ev('response.output_text.done', { ...at, text, logprobs: [] });
    yield ev('response.content_part.done', { ...at, part: part(text) });
    const status = a.stop === 'max_tokens' ? 'incomplete' : 'completed';
    yield ev('response.output_item.done', { output_index: index, item: messageItem(a, text, status) });
  }
  const incomplete = a.stop === 'max_tokens';
  const final = responseObject(a, d, incomplete ? 'incomplete' : 'completed', outputItems(a), true);
  yield ev(incomplete ? 'response.incomplete' : 'response.completed', { response: final });
}
