// vendor_a, OpenAI Chat Completions: POST /v1/chat/completions. `data:`-only framing ending in
// `data: [DONE]`; the usage chunk (`choices: []`) only with stream_options.include_usage, and then
// every other chunk carries `"usage": null`. service_tier ("flex" | "default") on every chunk.
import { chatJsonOutput } from '../structured-output.ts';
import type { Answer } from '../answer.ts';
import { sseData, sseRaw, SSE_CONTENT_TYPE, type Frame } from '../frames.ts';
import {
  asArray, asPositiveInt, asString, contentText, invalid, isRecord, REASONING_TOKENS,
  type DecodeResult, type Decoded, type PromptTool,
} from '../prompt.ts';
import { bearerToken, type RouteAdapter, type StreamEncoding } from './route.ts';
import { openaiResponses } from './openai-responses.ts';

const DONE: Frame = { bytes: 'data: [DONE]\n\n', tokens: 0 };

export const openaiChat: RouteAdapter = {
  name: 'vendor_a',
  family: 'openai',
  match: (path) => (path === '/v1/chat/completions' ? {} : undefined),
  authenticate: (info, ctx) => openaiResponses.authenticate(info, ctx),
  decode: decodeChat,
  flexRefusal: openaiResponses.flexRefusal,
  streamContentType: SSE_CONTENT_TYPE,
  encodeBody: completionBody,
  encodeStream: chunkStream,
  replayFrame: (line) => sseRaw(line),
  replayTail: [DONE],
  headers: openaiResponses.headers,
};

function decodeChat(body: unknown): DecodeResult {
  if (!isRecord(body)) return invalid('Request body must be a JSON object.');
  const model = asString(body.model);
  if (!model) return invalid('Missing required parameter: \'model\'.');
  const messages = asArray(body.messages);
  if (!messages.length) return invalid('Missing required parameter: \'messages\'.');

  let text = '';
  let lastUserText = '';
  let lastIsToolResult = false;
  for (const message of messages) {
    if (!isRecord(message)) return invalid('Invalid type for \'messages\': expected an array of objects.');
    const turnText = contentText(message.content);
    text += turnText;
    for (const call of asArray(message.tool_calls)) {
      if (isRecord(call) && isRecord(call.function)) text += asString(call.function.arguments) ?? '';
    }
    if (message.role === 'user') lastUserText = turnText;
    lastIsToolResult = message.role === 'tool';
  }

  const tools: PromptTool[] = [];
  for (const tool of asArray(body.tools)) {
    if (isRecord(tool) && isRecord(tool.function) && typeof tool.function.name === 'string') {
      tools.push({ name: tool.function.name, parameters: tool.function.parameters });
    }
  }
  const choice = body.tool_choice;
  const forcedTool = choice === 'required' ? true
    : isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string' ? choice.function.name : undefined;
  const effort = asString(body.reasoning_effort);
  const reasoning = effort !== undefined && effort !== 'none';
  const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;

  const value: Decoded = {
    prompt: {
      model, text, lastUserText, tools, forcedTool, lastTurnIsToolResult: lastIsToolResult,
      maxOutputTokens: asPositiveInt(body.max_completion_tokens) ?? asPositiveInt(body.max_tokens),
      jsonOutput: chatJsonOutput(body.response_format),
      reasoning, reasoningTokens: reasoning ? REASONING_TOKENS[effort!] : undefined,
    },
    stream: body.stream === true,
    tier: body.service_tier === 'flex' ? 'flex' : 'standard',
    echo: { includeUsage },
  };
  return { ok: true, value };
}

const finishReason = (answer: Answer) => (answer.stop === 'tool_use' ? 'tool_calls' : answer.stop === 'max_tokens' ? 'length' : 'stop');
const tierOf = (decoded: Decoded) => (decoded.tier === 'flex' ? 'flex' : 'default');

function usage(answer: Answer) {
  return {
    prompt_tokens: answer.usage.input, completion_tokens: answer.usage.output, total_tokens: answer.usage.input + answer.usage.output,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: answer.usage.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0,
    },
  };
}

function completionBody(answer: Answer, decoded: Decoded) {
  const message: Record<string, unknown> = {
    role: 'assistant', content: answer.text?.tokens.text() ?? null, refusal: null, annotations: [],
  };
  if (answer.toolCall) {
    message.tool_calls = [{
      id: `call_${answer.uid}`, type: 'function', function: { name: answer.toolCall.name, arguments: answer.toolCall.args },
    }];
  }
  return {
    id: `chatcmpl-${answer.uid}`, object: 'chat.completion', created: answer.created, model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer) }],
    usage: usage(answer), service_tier: tierOf(decoded), system_fingerprint: 'fp_sim',
  };
}

function chunkStream(answer: Answer, decoded: Decoded): StreamEncoding {
  const withUsage = decoded.echo.includeUsage === true;
  const head = {
    id: `chatcmpl-${answer.uid}`, object: 'chat.completion.chunk', created: answer.created, model: answer.model,
    service_tier: tierOf(decoded), system_fingerprint: 'fp_sim',
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, tokens = 0): Frame =>
    sseData(
      { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) }, tokens,
    );

  function* frames(): Generator<Frame> {
    // Chat shows no reasoning, but its tokens still take time: an empty frame paces them.
    if (answer.reasoning) yield { bytes: '', tokens: answer.usage.reasoning };
    if (answer.toolCall) {
      const call = answer.toolCall;
      const per = Math.max(1, Math.round((answer.usage.output - answer.usage.reasoning) / call.fragments.length));
      yield chunk({
        role: 'assistant', content: null, refusal: null,
        tool_calls: [{ index: 0, id: `call_${answer.uid}`, type: 'function', function: { name: call.name, arguments: '' } }],
      });
      for (const fragment of call.fragments) yield chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }, null, per);
    } else {
      yield chunk({ role: 'assistant', content: '', refusal: null });
      for (const token of answer.text?.tokens ?? []) yield chunk({ content: token }, null, 1);
    }
    yield chunk({}, finishReason(answer));
    if (withUsage) yield sseData({ ...head, choices: [], usage: usage(answer) });
    yield DONE;
  }
  return {
    frames: frames(),
    // openai-node throws APIError on a data line whose JSON has an `error` key.
    error: (message) => [sseData({ error: { message, type: 'server_error', param: null, code: 'server_error' } })],
  };
}
