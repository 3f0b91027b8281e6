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
import { openaiEffortRefusal } from '../vendor-rules.ts';

export const openaiResponses: RouteAdapter = {
  name: 'vendor_a',
  family: 'openai',
  match: (path) => (path === '/v1/responses' ? {} : undefined),
  // Responses are stored unless store:false; previous_response_id must name a stored one.
  state: {
    issued: (answer, body) => (body.store === false ? undefined : `resp_${answer.uid}`),
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
  encodeBody: (answer, decoded) =>
    responseObject(answer, decoded, answer.stop === 'max_tokens' ? 'incomplete' : 'completed', outputItems(answer), true),
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
      const turnText = contentText(item.content);
      text += turnText;
      if (item.role === 'user') lastUserText = turnText;
    }
  }

  const tools: PromptTool[] = [];
  for (const tool of asArray(body.tools)) {
    if (isRecord(tool) && tool.type === 'function' && typeof tool.name === 'string') {
      tools.push({ name: tool.name, parameters: tool.parameters });
    }
  }
  const choice = body.tool_choice;
  const forcedTool = choice === 'required' ? true
    : isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string' ? choice.name : undefined;
  const effort = isRecord(body.reasoning) ? asString(body.reasoning.effort) : undefined;
  const refused = openaiEffortRefusal(model, effort);
  if (refused) return invalid(refused);
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

function reasoningItem(answer: Answer, summary: string): Item {
  return {
    id: `rs_${answer.uid}`, type: 'reasoning', encrypted_content: `gAAAAAB${answer.reasoning!.signature}`,
    summary: summary ? [{ type: 'summary_text', text: summary }] : [],
  };
}
function messageItem(answer: Answer, text: string, status: string): Item {
  return {
    id: `msg_${answer.uid}`, type: 'message', status, role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', annotations: [], logprobs: [], text }],
  };
}
function callItem(answer: Answer, args: string, status: string): Item {
  return {
    id: `fc_${answer.uid}`, type: 'function_call', status, arguments: args, call_id: `call_${answer.uid}`, name: answer.toolCall!.name,
  };
}

function outputItems(answer: Answer): Item[] {
  const out: Item[] = [];
  if (answer.reasoning) out.push(reasoningItem(answer, answer.reasoning.tokens.text()));
  if (answer.toolCall) out.push(callItem(answer, answer.toolCall.args, 'completed'));
  if (answer.text) out.push(messageItem(answer, answer.text.tokens.text(), answer.stop === 'max_tokens' ? 'incomplete' : 'completed'));
  return out;
}

function usage(answer: Answer): Item {
  return {
    input_tokens: answer.usage.input, input_tokens_details: { cached_tokens: 0 },
    output_tokens: answer.usage.output, output_tokens_details: { reasoning_tokens: answer.usage.reasoning },
    total_tokens: answer.usage.input + answer.usage.output,
  };
}

/** The Response object; `final` reports usage and the tier actually used. */
function responseObject(answer: Answer, decoded: Decoded, status: string, output: Item[], final: boolean): Item {
  const req = decoded.echo;
  const reasoning = isRecord(req.reasoning) ? req.reasoning : {};
  return {
    id: `resp_${answer.uid}`, object: 'response', created_at: answer.created, status,
    background: false, completed_at: final ? Math.floor(Date.now() / 1000) : null, error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: req.instructions ?? null, max_output_tokens: req.max_output_tokens ?? null,
    model: answer.model, output, parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    service_tier: final ? (decoded.tier === 'flex' ? 'flex' : 'default') : (req.service_tier ?? 'auto'),
    store: req.store ?? true, temperature: req.temperature ?? 1,
    text: req.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: req.tool_choice ?? 'auto', tools: req.tools ?? [], top_p: req.top_p ?? 1,
    truncation: req.truncation ?? 'disabled', usage: final ? usage(answer) : null,
    user: req.user ?? null, metadata: req.metadata ?? {},
  };
}

function responseStream(answer: Answer, decoded: Decoded): StreamEncoding {
  const seq = { n: 0 };
  const ev = (type: string, payload: Item, tokens = 0): Frame =>
    sseEvent(type, { type, sequence_number: seq.n++, ...payload }, tokens);
  return {
    frames: responseEvents(answer, decoded, ev),
    // The recorded wire shape: an `error` event, then `response.failed`.
    error: (message) => [
      ev('error', { error: { type: 'server_error', code: 'server_error', message, param: null } }),
      ev('response.failed', {
        response: { ...responseObject(answer, decoded, 'failed', [], false), error: { code: 'server_error', message } },
      }),
    ],
  };
}

type Emit = (type: string, payload: Item, tokens?: number) => Frame;

function* responseEvents(answer: Answer, decoded: Decoded, ev: Emit): Generator<Frame> {
  const started = responseObject(answer, decoded, 'in_progress', [], false);
  yield ev('response.created', { response: started });
  yield ev('response.in_progress', { response: started });

  let index = 0;
  if (answer.reasoning) {
    const item_id = `rs_${answer.uid}`;
    const at = { item_id, output_index: index, summary_index: 0 };
    yield ev('response.output_item.added', { output_index: index, item: reasoningItem(answer, '') });
    yield ev('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    for (const token of answer.reasoning.tokens) yield ev('response.reasoning_summary_text.delta', { ...at, delta: token }, 1);
    const text = answer.reasoning.tokens.text();
    yield ev('response.reasoning_summary_text.done', { ...at, text });
    yield ev('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
    yield ev('response.output_item.done', { output_index: index, item: reasoningItem(answer, text) });
    index++;
  }
  if (answer.toolCall) {
    const at = { item_id: `fc_${answer.uid}`, output_index: index };
    const per = Math.max(1, Math.round((answer.usage.output - answer.usage.reasoning) / answer.toolCall.fragments.length));
    yield ev('response.output_item.added', { output_index: index, item: callItem(answer, '', 'in_progress') });
    for (const fragment of answer.toolCall.fragments) yield ev('response.function_call_arguments.delta', { ...at, delta: fragment }, per);
    yield ev('response.function_call_arguments.done', { ...at, name: answer.toolCall.name, arguments: answer.toolCall.args });
    yield ev('response.output_item.done', { output_index: index, item: callItem(answer, answer.toolCall.args, 'completed') });
  }
  if (answer.text) {
    const at = { item_id: `msg_${answer.uid}`, output_index: index, content_index: 0 };
    const part = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
    yield ev('response.output_item.added', { output_index: index, item: messageItem(answer, '', 'in_progress') });
    yield ev('response.content_part.added', { ...at, part: part('') });
    for (const token of answer.text.tokens) yield ev('response.output_text.delta', { ...at, delta: token, logprobs: [] }, 1);
    const text = answer.text.tokens.text();
    yield ev('response.output_text.done', { ...at, text, logprobs: [] });
    yield ev('response.content_part.done', { ...at, part: part(text) });
    const status = answer.stop === 'max_tokens' ? 'incomplete' : 'completed';
    yield ev('response.output_item.done', { output_index: index, item: messageItem(answer, text, status) });
  }
  const incomplete = answer.stop === 'max_tokens';
  const final = responseObject(answer, decoded, incomplete ? 'incomplete' : 'completed', outputItems(answer), true);
  yield ev(incomplete ? 'response.incomplete' : 'response.completed', { response: final });
}
