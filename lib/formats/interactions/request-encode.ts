// IR → Interactions request body (with `model`; without stream/service_tier, which the adapter
// owns). Turns become steps: user_input, model_output, thought (kept only with its signature),
// function_call (its Gemini signature carried as `signature`) and function_result (which needs
// the function's name, found from the earlier call with the same id).
import { GatewayError } from '../../errors.ts';
import { SKIP_SIGNATURE } from '../google-shared.ts';
import type { IRMessage, IRPart, IRRequest, IRToolChoice } from '../../ir.ts';
import { argumentsObject } from '../tool-args.ts';
import { refuseToolNames, TOOL_NAME_RULES } from '../tool-identity.ts';
import { geminiThinking } from '../../catalog/gemini-thinking.ts';
import { clampEffort, requestedEffort } from '../effort-budget.ts';

type Item = Record<string, unknown>;

export function encodeInteractionsRequest(ir: IRRequest): Record<string, any> {
  const body: Record<string, any> = { model: ir.model, input: encodeSteps(ir.messages) };
  if (ir.system) body.system_instruction = ir.system;
  if (ir.tools?.length) {
    refuseToolNames(ir.tools, TOOL_NAME_RULES.gemini, 'Gemini Interactions');
    body.tools = ir.tools.map((tool) => ({
      type: 'function', name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.parameters,
    }));
  }
  if (ir.responseFormat) {
    body.response_format = ir.responseFormat.type === 'json_schema'
      ? { type: 'text', mime_type: 'application/json', schema: ir.responseFormat.schema }
      : { type: 'text', mime_type: 'application/json' };
  }
  const gc: Record<string, unknown> = {};
  if (ir.maxOutputTokens !== undefined) gc.max_output_tokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) gc.temperature = ir.temperature;
  if (ir.topP !== undefined) gc.top_p = ir.topP;
  if (ir.stopSequences?.length) gc.stop_sequences = ir.stopSequences;
  const thinkingLevel = encodeThinkingLevel(ir);
  if (thinkingLevel) gc.thinking_level = thinkingLevel;
  if (ir.toolChoice && ir.tools?.length) gc.tool_choice = encodeToolChoice(ir.toolChoice);
  if (Object.keys(gc).length) body.generation_config = gc;
  if (ir.native?.family === 'interactions') copyNative(body, ir.native.fields);
  return body;
}

/** thinking_level is the Interactions API's only thinking knob, for 2.5 models too, held to the
 *  levels the model takes (catalog/gemini-thinking.ts: minimal → low on Pro and Flash 3.7+; xhigh
 *  and max → high). Gemini 2.0 does not think and refuses it: left out, as on cloud_a. */
function encodeThinkingLevel(ir: IRRequest): string | undefined {
  const effort = requestedEffort(ir);
  const thinking = geminiThinking(ir.model);
  return effort && thinking.by !== 'none' ? clampEffort(effort, thinking.levels) : undefined;
}

/** native.fields hold what the IR could not: generation_config extras merge into ours, other
 *  keys (previous_interaction_id, hosted tools, the caller's own input when it had hosted-tool
 *  steps, …) are copied as they came. */
function copyNative(body: Record<string, any>, fields: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'generation_config' && v && typeof v === 'object') body.generation_config = { ...body.generation_config, ...(v as object) };
    else body[k] = v;
  }
}

export function encodeSteps(messages: IRMessage[]): Item[] {
  const steps: Item[] = [];
  const callNames = new Map<string, string>();
  let content: Item[] = [];
  let contentStep = '';
  const flush = () => {
    if (content.length) steps.push({ type: contentStep, content });
    content = [];
  };
  for (const message of messages) {
    flush();
    contentStep = message.role === 'user' ? 'user_input' : 'model_output';
    for (const p of message.content) {
      switch (p.type) {
        case 'text':
          if (p.text) content.push({ type: 'text', text: p.text });
          break;
        case 'image':
        case 'file':
          content.push(mediaItem(p));
          break;
        case 'reasoning':
          if (!p.signature || p.anthropic) break; // Gemini wants its own signed thoughts back, nothing else
          flush();
          steps.push({ type: 'thought', signature: p.signature, ...(p.text ? { summary: [{ type: 'text', text: p.text }] } : {}) });
          break;
        case 'tool_call': {
          flush();
          const args = argumentsObject(p.arguments);
          if (!args) {
            throw new GatewayError('invalid_request', `The arguments of tool call ${p.id} are not valid JSON.`, { param: 'input' });
          }
          callNames.set(p.id, p.name);
          steps.push({
            type: 'function_call', id: p.id, name: p.name, arguments: args, ...(p.signature ? { signature: p.signature } : {}),
          });
          break;
        }
        case 'tool_result':
          flush();
          steps.push({
            type: 'function_result', call_id: p.callId, name: callNames.get(p.callId) ?? p.name ?? '',
            result: p.content, ...(p.isError ? { is_error: true } : {}),
          });
          break;
      }
    }
  }
  flush();
  signFirstCalls(steps);
  return steps;
}

/** Gemini 3 wants the first call of each model step signed: by a thought step before it (how
 *  Gemini sends it) or on the call. A call replayed by a caller whose format has no field for it
 *  (Chat, Responses) or made by another model has neither: it gets the documented skip value. A
 *  model step runs from one user_input or function_result step to the next. */
function signFirstCalls(steps: Item[]): void {
  let open = true; // no call yet in this model step
  let signed = false; // a signed thought came first in this model step
  for (const step of steps) {
    if (step.type === 'user_input' || step.type === 'function_result') { open = true; signed = false; }
    else if (step.type === 'thought') signed = true; // kept only with its signature
    else if (step.type === 'function_call' && open) {
      if (!signed && !step.signature) step.signature = SKIP_SIGNATURE;
      open = false;
    }
  }
}

function mediaItem(p: Extract<IRPart, { type: 'image' | 'file' }>): Item {
  const mediaType = p.mediaType;
  const type = p.type === 'image' || mediaType?.startsWith('image/') ? 'image'
    : mediaType?.startsWith('audio/') ? 'audio'
    : mediaType?.startsWith('video/') ? 'video'
    : 'document';
  if (!p.data && !p.url) throw new GatewayError('invalid_request', `An ${p.type} part has neither data nor url.`, { param: 'input' });
  return { type, ...(p.data ? { data: p.data } : { uri: p.url }), ...(mediaType ? { mime_type: mediaType } : {}) };
}

function encodeToolChoice(choice: IRToolChoice): unknown {
  if (choice === 'required') return 'any';
  if (choice === 'auto' || choice === 'none') return choice;
  return { allowed_tools: { mode: 'any', tools: [choice.name] } };
}
