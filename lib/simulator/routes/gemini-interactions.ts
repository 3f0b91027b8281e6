// vendor_b, Gemini Interactions (steps schema): POST /v1beta/interactions. x-goog-api-key auth;
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

const DONE: Frame = { bytes: 'event: done\ndata: [DONE]\n\n', tokens: 0 };

export const geminiInteractions: RouteAdapter = {
  name: 'vendor_b',
  family: 'google',
  match: (path) => (path === '/v1beta/interactions' ? {} : undefined),
  // Interactions are stored unless store:false; previous_interaction_id must name a stored one.
  state: {
    issued: (a, body) => (body.store === false ? undefined : `v1_${a.uid}`),
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
    if (item.type === 'text') { const t = asString(item.text) ?? ''; text += t; if (role === 'user') lastUserText = t; return; }
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
  for (const t of asArray(body.tools)) {
    if (isRecord(t) && t.type === 'function' && typeof t.name === 'string') tools.push({ name: t.name, parameters: t.parameters });
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

const statusOf = (a: Answer) => (a.stop === 'tool_use' ? 'requires_action' : a.stop === 'max_tokens' ? 'incomplete' : 'completed');

function usage(a: Answer) {
  const output = a.usage.output - a.usage.reasoning;
  return {
    total_tokens: a.usage.input + a.usage.output,
    total_input_tokens: a.usage.input,
    input_tokens_by_modality: [{ modality: 'text', tokens: a.usage.input }],
    total_cached_tokens: 0,
    total_output_tokens: output,
    total_tool_use_tokens: 0,
    total_thought_tokens: a.usage.reasoning,
  };
}

function head(a: Answer, d: Decoded, status: string) {
  const now = new Date(a.created * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    id: `v1_${a.uid}`, status, usage: usage(a), created: now, updated: now,
    service_tier: d.tier === 'flex' ? 'flex' : 'standard', object: 'interaction', model: a.model,
  };
}

function interactionBody(a: Answer, d: Decoded) {
  const steps: unknown[] = [];
  if (a.reasoning) {
    steps.push({ type: 'thought', signature: a.reasoning.signature, summary: [{ type: 'text', text: a.reasoning.tokens.text() }] });
  }
  if (a.toolCall) {
    steps.push({
      type: 'function_call', id: a.uid.slice(0, 8).toLowerCase(), name: a.toolCall.name, arguments: JSON.parse(a.toolCall.args),
    });
  }
  if (a.text) steps.push({ type: 'model_output', content: [{ type: 'text', text: a.text.tokens.text() }] });
  const { id, status, usage: u, created, updated, service_tier, object, model } = head(a, d, statusOf(a));
  return { id, status, usage: u, created, updated, service_tier, steps, object, model };
}

function interactionStream(a: Answer, d: Decoded): StreamEncoding {
  const ev = (event_type: string, payload: Record<string, unknown>, tokens = 0): Frame =>
    sseEvent(event_type, { ...payload, event_type }, tokens);
  function* frames(): Generator<Frame> {
    const id = `v1_${a.uid}`;
    yield ev('interaction.created', { interaction: { id, status: 'in_progress', object: 'interaction', model: a.model } });
    yield ev('interaction.status_update', { interaction_id: id, status: 'in_progress' });
    let index = 0;
    if (a.reasoning) {
      yield ev('step.start', { index, step: { type: 'thought' } });
      for (const t of a.reasoning.tokens) {
        yield ev('step.delta', { index, delta: { content: { type: 'text', text: t }, type: 'thought_summary' } }, 1);
      }
      yield ev('step.delta', { index, delta: { signature: a.reasoning.signature, type: 'thought_signature' } });
      yield ev('step.stop', { index });
      index++;
    }
    if (a.toolCall) {
      const per = Math.max(1, Math.round((a.usage.output - a.usage.reasoning) / a.toolCall.fragments.length));
      yield ev(
        'step.start', { index, step: { id: a.uid.slice(0, 8).toLowerCase(), type: 'function_call', name: a.toolCall.name, arguments: {} } },
      );
      for (const f of a.toolCall.fragments) yield ev('step.delta', { index, delta: { arguments: f, type: 'arguments_delta' } }, per);
      yield ev('step.stop', { index });
      index++;
    }
    if (a.text) {
      yield ev('step.start', { index, step: { type: 'model_output' } });
      for (const t of a.text.tokens) yield ev('step.delta', { index, delta: { text: t, type: 'text' } }, 1);
      yield ev('step.stop', { index });
    }
    yield ev('interaction.completed', { interaction: head(a, d, statusOf(a)) });
    yield DONE;
  }
  return {
    frames: frames(),
    error: (message) => [ev('error', { error: { code: 'internal', message } })],
  };
}
