// IRRequest → a Chat Completions body for vendor A (the Chat passthrough path). The adapter adds
// stream, stream_options and service_tier. Chat has no slot for replayed reasoning, so reasoning
// parts are dropped; tool results become role "tool" messages right after the assistant turn.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest } from '../../ir.ts';
import { dataUrl, mergeNative, refuseAudioVideo } from '../openai-shared.ts';

export function encodeChatRequest(ir: IRRequest): Record<string, any> {
  const messages: Record<string, unknown>[] = [];
  if (ir.system) messages.push({ role: 'system', content: ir.system });
  for (const message of ir.messages) messages.push(...(message.role === 'assistant' ? assistantMessage(message) : userMessages(message)));
  const body: Record<string, any> = { model: ir.model, messages };
  if (ir.tools?.length) {
    body.tools = ir.tools.map(t => {
      const fn: Record<string, unknown> = { name: t.name };
      if (t.description !== undefined) fn.description = t.description;
      fn.parameters = t.parameters;
      if (t.strict !== undefined) fn.strict = t.strict;
      return { type: 'function', function: fn };
    });
  }
  if (ir.toolChoice !== undefined) {
    body.tool_choice = typeof ir.toolChoice === 'string' ? ir.toolChoice : { type: 'function', function: { name: ir.toolChoice.name } };
  }
  if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  if (ir.maxOutputTokens !== undefined) body.max_completion_tokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.reasoning) body.reasoning_effort = ir.reasoning.effort;
  if (ir.responseFormat) {
    const rf = ir.responseFormat;
    body.response_format = rf.type === 'json_object'
      ? { type: 'json_object' }
      : {
        type: 'json_schema',
        json_schema: {
          name: rf.name ?? 'response', ...(rf.description !== undefined ? { description: rf.description } : {}), schema: rf.schema,
          ...(rf.strict !== undefined ? { strict: rf.strict } : {}),
        },
      };
  }
  if (ir.stopSequences?.length) body.stop = ir.stopSequences;
  if (ir.native?.family === 'chat') mergeNative(body, ir.native.fields);
  return body;
}

function assistantMessage(message: IRMessage): Record<string, unknown>[] {
  const text = message.content.filter(p => p.type === 'text').map(p => (p as { text: string }).text).join('');
  const calls = message.content.filter((p): p is Extract<IRPart, { type: 'tool_call' }> => p.type === 'tool_call');
  if (!text && !calls.length) return []; // e.g. a turn of reasoning only
  const wire: Record<string, unknown> = { role: 'assistant', content: text || null };
  if (calls.length) {
    wire.tool_calls = calls.map(call => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return [wire];
}

/** A user message's parts in order: runs of tool results become tool messages, other runs one user message. */
function userMessages(message: IRMessage): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let parts: Record<string, unknown>[] = [];
  const flush = (): void => {
    if (!parts.length) return;
    const onlyText = parts.every(p => p.type === 'text');
    out.push({ role: 'user', content: onlyText && parts.length === 1 ? parts[0].text : parts });
    parts = [];
  };
  for (const p of message.content) {
    switch (p.type) {
      case 'tool_result':
        flush();
        out.push({ role: 'tool', tool_call_id: p.callId, content: p.content });
        break;
      case 'text':
        parts.push({ type: 'text', text: p.text });
        break;
      case 'image':
        parts.push({
          type: 'image_url',
          image_url: {
            url: p.data !== undefined ? dataUrl(p.mediaType, p.data) : p.url, ...(p.detail !== undefined ? { detail: p.detail } : {}),
          },
        });
        break;
      case 'file': {
        refuseAudioVideo(p.mediaType, 'messages');
        if (p.data === undefined) {
          throw new GatewayError(
            'unsupported_parameter', 'Chat Completions accepts files only as inline data, not by URL.', { param: 'messages' },
          );
        }
        parts.push({ type: 'file', file: { file_data: dataUrl(p.mediaType, p.data), filename: p.filename ?? 'file' } });
        break;
      }
      default:
        break; // reasoning or tool calls in a user turn have no Chat form
    }
  }
  flush();
  return out;
}
