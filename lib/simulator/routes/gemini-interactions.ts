// vendor_b, Gemini Interactions (steps schema): POST /v1beta/interactions, and /v1/interactions
// where the API is generally available (the path @google/genai ≥ 3 calls by default; 2.x called
// /v1beta, as the gateway's own adapter still does: lib/providers/gemini.ts). x-goog-api-key auth;
// flex = body service_tier "flex", reported in interaction.service_tier; a full flex queue answers
// 503 UNAVAILABLE. Streams end with `event: done` / `data: [DONE]`. Thought tokens are reported
// outside total_output_tokens (total_thought_tokens), as the real API does.
import { interactionsJsonOutput } from '../structured-output.ts';
import type { Answer } from '../answer.ts';
import { sseEvent, sseRaw, SSE_CONTENT_TYPE, type Frame } from '../frames.ts';
import {
  asArray, asPositiveInt, asString, contentText, invalid, isRecord, REASONING_TOKENS, DEFAULT_REASONING_TOKENS,
  type DecodeResult, type Decoded, type PromptTool,
} from '../prompt.ts';
import { headerValue, recordedEventName, type RouteAdapter, type StreamEncoding } from './route.ts';
import { errorReply } from '../errors.ts';
import { foreignSignature, geminiLevelRefusal } from '../vendor-rules.ts';

const DONE: Frame = { bytes: 'event: done\ndata: [DONE]\n\n', tokens: 0 };

export const geminiInteractions: RouteAdapter = {
  name: 'vendor_b',
  family: 'google',
  match: (path) => (path === '/v1beta/interactions' || path === '/v1/interactions' ? {} : undefined),
  // Interactions are stored unless store:false; previous_interaction_id must name a stored one.
  state: {
    issued: (answer, body) => (body.store === false ? undefined : `v1_${answer.uid}`),
    referenced: (body) => asString(body.previous_interaction_id),
    notFound: (id) => errorReply('google', 'not_found', { message: `Interaction '${id}' was not found.` }),
  },
  authenticate: (info) => (headerValue(info.headers, 'x-goog-api-key')?.trim() ? undefined : {
    name: 'unauthenticated',
    message: 'Method doesn\'t allow unregistered callers (callers without established identity).'
      + ' Please use API Key or other form of API consumer identity to call this API.',
  }),
  decode: decodeInteraction,
  flexRefusal: { name: 'unavailable', status: 503, message: 'The system is currently at capacity. Please try again later.' },
  streamContentType: SSE_CONTENT_TYPE,
  encodeBody: interactionBody,
  encodeStream: interactionStream,
  replayFrame: (line) => sseRaw(line, recordedEventName(line, 'event_type')),
  replayTail: [DONE],
};

function decodeInteraction(body: unknown): DecodeResult {
  if (!isRecord(body)) return invalid('Invalid JSON payload: expected an object.');
  const model = asString(body.model) ?? asString(body.agent);
  if (!model) return invalid('model is required.');
  if (body.input === undefined) return invalid('input is required.');

  let text = asString(body.system_instruction) ?? contentText(body.system_instruction);
  let lastUserText = '';
  let lastIsToolResult = false;
  const visit = (item: unknown, role: string) => {
    if (typeof item === 'string') { text += item; if (role === 'user') lastUserText = item; lastIsToolResult = false; return; }
    if (!isRecord(item)) return;
    if (item.type === 'function_result') {
      text += typeof item.result === 'string' ? item.result : JSON.stringify(item.result ?? null);
      lastIsToolResult = true;
      return;
    }
    lastIsToolResult = false;
    if (item.type === 'function_call') { text += JSON.stringify(item.arguments ?? {}); return; }
    if (item.type === 'text') {
      const itemText = asString(item.text) ?? '';
      text += itemText;
      if (role === 'user') lastUserText = itemText;
      return;
    }
    // A turn ({role, content}) or a step carrying content (user_input, model_output).
    const turnRole = item.role === 'model' || item.type === 'model_output' ? 'model' : 'user';
    if (typeof item.content === 'string') visit(item.content, turnRole);
    else {
      const parts = asArray(item.content);
      let turnText = '';
      for (const p of parts) {
        visit(p, 'none');
        if (isRecord(p) && p.type === 'text') turnText += asString(p.text) ?? '';
      }
      if (turnRole === 'user' && turnText) lastUserText = turnText;
    }
  };
  if (Array.isArray(body.input)) for (const item of body.input) visit(item, 'user');
  else visit(body.input, 'user');

  const tools: PromptTool[] = [];
  for (const tool of asArray(body.tools)) {
    if (isRecord(tool) && tool.type === 'function' && typeof tool.name === 'string') {
      tools.push({ name: tool.name, parameters: tool.parameters });
    }
  }
  const config = isRecord(body.generation_config) ? body.generation_config : {};
  const choice = config.tool_choice;
  let forcedTool: string | true | undefined;
  if (choice === 'any') forcedTool = true;
  else if (isRecord(choice) && isRecord(choice.allowed_tools)) {
    const allowed = choice.allowed_tools;
    const names = asArray(allowed.tools).filter((n): n is string => typeof n === 'string');
    if (allowed.mode === undefined || allowed.mode === 'any') forcedTool = names[0] ?? true;
  }
  const level = asString(config.thinking_level);
  const refused = geminiLevelRefusal(model, level)
    ?? (Array.isArray(body.input) ? body.input.map((step) => (isRecord(step) ? foreignSignature(step.signature) : undefined)).find(Boolean) : undefined);
  if (refused) return invalid(refused);

  const value: Decoded = {
    prompt: {
      model, text, lastUserText, tools, forcedTool, lastTurnIsToolResult: lastIsToolResult,
      maxOutputTokens: asPositiveInt(config.max_output_tokens), jsonOutput: interactionsJsonOutput(body),
      reasoning: level !== undefined,
      reasoningTokens: level !== undefined ? REASONING_TOKENS[level] ?? DEFAULT_REASONING_TOKENS : undefined,
    },
    stream: body.stream === true,
    tier: body.service_tier === 'flex' ? 'flex' : 'standard',
    echo: { store: body.store },
  };
  return { ok: true, value };
}

const statusOf = (answer: Answer) =>
  (answer.stop === 'tool_use' ? 'requires_action' : answer.stop === 'max_tokens' ? 'incomplete' : 'completed');

/** A function_call step's id, the same in the body and the stream. */
const callStepId = (answer: Answer): string => answer.uid.slice(0, 8).toLowerCase();

function usage(answer: Answer) {
  const output = answer.usage.output - answer.usage.reasoning;
  return {
    total_tokens: answer.usage.input + answer.usage.output,
    total_input_tokens: answer.usage.input,
    input_tokens_by_modality: [{ modality: 'text', tokens: answer.usage.input }],
    total_cached_tokens: 0,
    total_output_tokens: output,
    total_tool_use_tokens: 0,
    total_thought_tokens: answer.usage.reasoning,
  };
}

function head(answer: Answer, decoded: Decoded, status: string) {
  const now = new Date(answer.created * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    id: `v1_${answer.uid}`, status, usage: usage(answer), created: now, updated: now,
    service_tier: decoded.tier === 'flex' ? 'flex' : 'standard', object: 'interaction', model: answer.model,
  };
}

function interactionBody(answer: Answer, decoded: Decoded) {
  const steps: unknown[] = [];
  if (answer.reasoning) {
    steps.push({
      type: 'thought', signature: answer.reasoning.signature, summary: [{ type: 'text', text: answer.reasoning.tokens.text() }],
    });
  }
  if (answer.toolCall) {
    steps.push({
      type: 'function_call', id: callStepId(answer), name: answer.toolCall.name, arguments: JSON.parse(answer.toolCall.args),
    });
  }
  if (answer.text) steps.push({ type: 'model_output', content: [{ type: 'text', text: answer.text.tokens.text() }] });
  const { id, status, usage: usageBody, created, updated, service_tier, object, model } = head(answer, decoded, statusOf(answer));
  return { id, status, usage: usageBody, created, updated, service_tier, steps, object, model };
}

function interactionStream(answer: Answer, decoded: Decoded): StreamEncoding {
  const ev = (event_type: string, payload: Record<string, unknown>, tokens = 0): Frame =>
    sseEvent(event_type, { ...payload, event_type }, tokens);
  function* frames(): Generator<Frame> {
    const id = `v1_${answer.uid}`;
    yield ev('interaction.created', { interaction: { id, status: 'in_progress', object: 'interaction', model: answer.model } });
    yield ev('interaction.status_update', { interaction_id: id, status: 'in_progress' });
    let index = 0;
    if (answer.reasoning) {
      yield ev('step.start', { index, step: { type: 'thought' } });
      for (const token of answer.reasoning.tokens) {
        yield ev('step.delta', { index, delta: { content: { type: 'text', text: token }, type: 'thought_summary' } }, 1);
      }
      yield ev('step.delta', { index, delta: { signature: answer.reasoning.signature, type: 'thought_signature' } });
      yield ev('step.stop', { index });
      index++;
    }
    if (answer.toolCall) {
      const per = Math.max(1, Math.round((answer.usage.output - answer.usage.reasoning) / answer.toolCall.fragments.length));
      yield ev('step.start', { index, step: { id: callStepId(answer), type: 'function_call', name: answer.toolCall.name, arguments: {} } });
      for (const fragment of answer.toolCall.fragments) {
        yield ev('step.delta', { index, delta: { arguments: fragment, type: 'arguments_delta' } }, per);
      }
      yield ev('step.stop', { index });
      index++;
    }
    if (answer.text) {
      yield ev('step.start', { index, step: { type: 'model_output' } });
      for (const token of answer.text.tokens) yield ev('step.delta', { index, delta: { text: token, type: 'text' } }, 1);
      yield ev('step.stop', { index });
    }
    yield ev('interaction.completed', { interaction: head(answer, decoded, statusOf(answer)) });
    yield DONE;
  }
  return {
    frames: frames(),
    error: (message) => [ev('error', { error: { code: 'internal', message } })],
  };
}
