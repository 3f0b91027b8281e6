// The Anthropic Messages shape, shared by vendor_c (/v1/messages) and cloud_b (Bedrock
// InvokeModel): decoding the request body and building the Message object or stream events.
// Each route adds its own framing and envelope.
import { messagesJsonOutput } from '../structured-output.ts';
import type { Answer } from '../answer.ts';
import {
  asArray, asPositiveInt, asString, contentText, DEFAULT_REASONING_TOKENS, invalid, isRecord,
  type DecodeResult, type PromptTool,
} from '../prompt.ts';
import { claudeSignature, claudeThinkingRefusal } from '../vendor-rules.ts';

export interface AnthropicEvent { payload: Record<string, unknown>; tokens: number }

/** What Anthropic's request validation holds call ids and custom tool names to (its 400 messages
 *  quote them). */
const CALL_ID = /^[a-zA-Z0-9_-]+$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** Decode a Messages body; `model` comes from the body (vendor_c) or the URL (Bedrock). Call ids,
 *  custom tool names, an input schema without a root `type`, and thinking or sampling parameters
 *  the model does not take (vendor-rules.ts) are refused as Anthropic refuses them. */
export function decodeAnthropic(body: Record<string, unknown>, model: string): DecodeResult {
  const maxTokens = asPositiveInt(body.max_tokens);
  if (maxTokens === undefined) return invalid('max_tokens: Field required');
  const messages = asArray(body.messages);
  if (!messages.length) return invalid('messages: Field required');
  const tier = body.service_tier;
  if (tier !== undefined && tier !== 'auto' && tier !== 'standard_only') {
    return invalid(`service_tier: Input should be 'auto' or 'standard_only'`);
  }

  let text = typeof body.system === 'string' ? body.system : contentText(body.system);
  let lastUserText = '';
  let lastIsToolResult = false;
  for (const [i, message] of messages.entries()) {
    if (isRecord(message) && message.role === 'system') {
      // A system-role message (the SDK's SystemMessageParam: a string or text blocks), anywhere in
      // the conversation, as Claude Code sends its environment: prompt text, never the user's turn.
      const badBlock = asArray(message.content).findIndex((block) => !isRecord(block) || block.type !== 'text');
      if (badBlock >= 0) return invalid(`messages.${i}.content.${badBlock}.type: Input should be 'text'`);
      text += contentText(message.content);
      continue;
    }
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) {
      return invalid('messages: each message needs role "user", "assistant" or "system"');
    }
    let turnText = '';
    let hasToolResult = false;
    if (typeof message.content === 'string') turnText = message.content;
    for (const [j, block] of asArray(message.content).entries()) {
      if (!isRecord(block)) continue;
      const badId = block.type === 'tool_use' ? !CALL_ID.test(String(block.id)) && 'tool_use.id'
        : block.type === 'tool_result' ? !CALL_ID.test(String(block.tool_use_id)) && 'tool_result.tool_use_id' : false;
      if (badId) return invalid(`messages.${i}.content.${j}.${badId}: String should match pattern '${CALL_ID.source}'`);
      if (block.type === 'text') turnText += asString(block.text) ?? '';
      else if (block.type === 'tool_use') text += JSON.stringify(block.input ?? {});
      else if (block.type === 'tool_result') { hasToolResult = true; text += contentText(block.content); }
    }
    text += turnText;
    if (message.role === 'user' && turnText) lastUserText = turnText;
    lastIsToolResult = message.role === 'user' && hasToolResult;
  }

  const tools: PromptTool[] = [];
  for (const [i, tool] of asArray(body.tools).entries()) {
    if (!isRecord(tool) || typeof tool.name !== 'string') continue;
    if (tool.type === undefined || tool.type === 'custom') { // server tools (typed) take no schema
      if (!TOOL_NAME.test(tool.name)) return invalid(`tools.${i}.custom.name: String should match pattern '${TOOL_NAME.source}'`);
      if (!isRecord(tool.input_schema)) return invalid(`tools.${i}.custom.input_schema: Field required`);
      if (tool.input_schema.type === undefined) return invalid(`tools.${i}.custom.input_schema.type: Field required`);
    }
    tools.push({ name: tool.name, parameters: tool.input_schema });
  }
  const choice = isRecord(body.tool_choice) ? body.tool_choice : {};
  const forcedTool = choice.type === 'any' ? true
    : choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
  const refused = claudeThinkingRefusal(model, body);
  if (refused) return invalid(refused);
  const thinking = isRecord(body.thinking) ? body.thinking.type : undefined;
  const reasoning = thinking === 'enabled' || thinking === 'adaptive';

  return {
    ok: true,
    value: {
      prompt: {
        model, text, lastUserText, tools, forcedTool, lastTurnIsToolResult: lastIsToolResult,
        maxOutputTokens: maxTokens, jsonOutput: messagesJsonOutput(body),
        reasoning, reasoningTokens: reasoning ? DEFAULT_REASONING_TOKENS : undefined,
      },
      stream: body.stream === true,
      tier: 'standard',
      echo: {},
    },
  };
}

const stopReason = (answer: Answer) => (answer.stop === 'tool_use' ? 'tool_use' : answer.stop === 'max_tokens' ? 'max_tokens' : 'end_turn');

function usage(answer: Answer, outputTokens: number) {
  return {
    input_tokens: answer.usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens, service_tier: 'standard',
    // As the recorded reasoning stream reports it: thinking tokens inside output_tokens.
    ...(answer.usage.reasoning > 0 && outputTokens > 1 ? { output_tokens_details: { thinking_tokens: answer.usage.reasoning } } : {}),
  };
}

export function messageBody(answer: Answer): Record<string, unknown> {
  const content: unknown[] = [];
  if (answer.reasoning) content.push({ type: 'thinking', thinking: answer.reasoning.tokens.text(), signature: claudeSignature(answer.reasoning.signature) });
  if (answer.toolCall) {
    content.push({ type: 'tool_use', id: `toolu_01${answer.uid}`, name: answer.toolCall.name, input: JSON.parse(answer.toolCall.args) });
  }
  if (answer.text) content.push({ type: 'text', text: answer.text.tokens.text() });
  return {
    id: `msg_01${answer.uid}`, type: 'message', role: 'assistant', model: answer.model, content,
    stop_reason: stopReason(answer), stop_sequence: null, usage: usage(answer, answer.usage.output),
  };
}

/** A content block delta and the output tokens it carries. */
type Delta = [Record<string, unknown>, number];

/** One delta per token, made as the stream reaches it. */
function* tokenDeltas(tokens: Iterable<string>, delta: (t: string) => Record<string, unknown>): Generator<Delta> {
  for (const token of tokens) yield [delta(token), 1];
}

export function* messageEvents(answer: Answer): Generator<AnthropicEvent> {
  const ev = (payload: Record<string, unknown>, tokens = 0): AnthropicEvent => ({ payload, tokens });
  yield ev({
    type: 'message_start',
    message: {
      id: `msg_01${answer.uid}`, type: 'message', role: 'assistant', model: answer.model, content: [],
      stop_reason: null, stop_sequence: null, usage: usage(answer, 1),
    },
  });
  yield ev({ type: 'ping' });
  let index = 0;
  const block = function* (start: Record<string, unknown>, deltas: Iterable<Delta>): Generator<AnthropicEvent> {
    yield ev({ type: 'content_block_start', index, content_block: start });
    for (const [delta, tokens] of deltas) yield ev({ type: 'content_block_delta', index, delta }, tokens);
    yield ev({ type: 'content_block_stop', index });
    index++;
  };
  if (answer.reasoning) {
    const reasoning = answer.reasoning;
    yield* block({ type: 'thinking', thinking: '', signature: '' }, (function* (): Generator<Delta> {
      yield* tokenDeltas(reasoning.tokens, (thinking) => ({ type: 'thinking_delta', thinking }));
      yield [{ type: 'signature_delta', signature: claudeSignature(reasoning.signature) }, 0];
    })());
  }
  if (answer.toolCall) {
    const per = Math.max(1, Math.round((answer.usage.output - answer.usage.reasoning) / answer.toolCall.fragments.length));
    yield* block({ type: 'tool_use', id: `toolu_01${answer.uid}`, name: answer.toolCall.name, input: {} },
      answer.toolCall.fragments.map((f): Delta => [{ type: 'input_json_delta', partial_json: f }, per]));
  }
  if (answer.text) yield* block({ type: 'text', text: '' }, tokenDeltas(answer.text.tokens, (text) => ({ type: 'text_delta', text })));
  yield ev({
    type: 'message_delta', delta: { stop_reason: stopReason(answer), stop_sequence: null },
    usage: {
      output_tokens: answer.usage.output,
      ...(answer.usage.reasoning > 0 ? { output_tokens_details: { thinking_tokens: answer.usage.reasoning } } : {}),
    },
  });
  yield ev({ type: 'message_stop' });
}
