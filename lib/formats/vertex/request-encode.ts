// IR → Vertex generateContent body (no model member: it lives in the URL the adapter builds; the
// IR's model picks how thinking is asked for).
import type { IRRequest, IRToolChoice } from '../../ir.ts';
import { encodeParts, type VertexPart } from './parts-encode.ts';
import { SKIP_SIGNATURE } from '../google-shared.ts';
import { lookupTable } from '../lookup-table.ts';
import { refuseToolNames, TOOL_NAME_RULES } from '../tool-identity.ts';
import { clampEffort, EFFORT_BUDGET, requestedEffort } from '../effort-budget.ts';
import { geminiThinking } from '../../catalog/gemini-thinking.ts';

export function encodeVertexRequest(ir: IRRequest): Record<string, any> {
  const contents: { role: 'user' | 'model'; parts: VertexPart[] }[] = [];
  const callNames = new Map<string, string>();
  for (const message of ir.messages) {
    const parts = encodeParts(message.content, callNames);
    if (!parts.length) continue;
    const role = message.role === 'user' ? 'user' : 'model';
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  contents.forEach((content, i) => {
    if (content.role === 'model') signFirstCall(content.parts);
    else if (i > 0) orderResponsesAsCalls(content.parts, contents[i - 1]!.parts);
  });
  const body: Record<string, any> = { contents };
  if (ir.system) body.systemInstruction = { parts: [{ text: ir.system }] };
  if (ir.tools?.length) {
    refuseToolNames(ir.tools, TOOL_NAME_RULES.gemini, 'Vertex Gemini');
    body.tools = [{
      functionDeclarations: ir.tools.map((tool) => ({
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        // parametersJsonSchema takes JSON Schema as callers write it ($defs/$ref, type lists,
        // const); `parameters` takes an OpenAPI subset that refuses those ("Unknown name").
        parametersJsonSchema: withoutSchemaKeyword(tool.parameters),
      })),
    }];
    if (ir.toolChoice) body.toolConfig = { functionCallingConfig: encodeToolChoice(ir.toolChoice) };
  }
  const gc: Record<string, unknown> = {};
  if (ir.maxOutputTokens !== undefined) gc.maxOutputTokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) gc.temperature = ir.temperature;
  if (ir.topP !== undefined) gc.topP = ir.topP;
  if (ir.stopSequences?.length) gc.stopSequences = ir.stopSequences;
  if (ir.responseFormat) {
    gc.responseMimeType = 'application/json';
    // responseJsonSchema takes JSON Schema as callers write it (responseSchema takes an OpenAPI subset).
    if (ir.responseFormat.type === 'json_schema') gc.responseJsonSchema = ir.responseFormat.schema;
  }
  const thinkingConfig = encodeThinking(ir);
  if (thinkingConfig) gc.thinkingConfig = thinkingConfig;
  if (Object.keys(gc).length) body.generationConfig = gc;
  if (ir.native?.family === 'interactions') addInteractionsExtras(body, ir.native.fields);
  if (ir.native?.family === 'vertex') {
    for (const [k, v] of Object.entries(ir.native.fields)) {
      if (k === 'generationConfig' && v && typeof v === 'object') body.generationConfig = { ...body.generationConfig, ...(v as object) };
      else body[k] = v;
    }
  }
  return body;
}

/** The caller's reasoning as the model's generation takes it (catalog/gemini-thinking.ts): Gemini 3
 *  a level, held to those the model takes (minimal → LOW on Pro and Flash 3.7+; xhigh and max →
 *  HIGH), or the caller's own budget; Gemini 2.5 a budget only, an effort's being Anthropic's
 *  (low 1024, medium 4096, high 16384), any budget held to the model's ceiling (a Messages caller's
 *  31999 on Flash would be refused); Gemini 2.0 none, as Vertex refuses thinking there (left out,
 *  like thinking Anthropic would refuse, not refused: the model answers without it). */
function encodeThinking(ir: IRRequest): Record<string, unknown> | undefined {
  const effort = requestedEffort(ir);
  if (!effort) return undefined;
  const thinking = geminiThinking(ir.model);
  if (thinking.by === 'none') return undefined;
  const budget = ir.reasoning?.budgetTokens;
  if (thinking.by === 'budget') {
    return { thinkingBudget: Math.min(budget ?? EFFORT_BUDGET[effort], thinking.maxBudget), includeThoughts: true };
  }
  return budget !== undefined
    ? { thinkingBudget: budget, includeThoughts: true }
    : { thinkingLevel: clampEffort(effort, thinking.levels).toUpperCase(), includeThoughts: true };
}

/** An Interactions caller's hosted tools and generation_config keys that Vertex has a field for
 *  (cloud_a serves the same Gemini models as vendor B, whose API takes them as sent). The
 *  Interactions endpoint refuses every other before a request for cloud_a gets here
 *  (CARRIED_EXTRAS, interactions/endpoint.ts; test/formats/interactions-fidelity.test.ts keeps the
 *  two lists equal). Looked up with the caller's tool type and values: no prototype, so a type
 *  "constructor" or "toString" is no tool here (the endpoint refuses it as an unknown type). */
export const SEARCH_TYPES = lookupTable({ web_search: 'webSearch', image_search: 'imageSearch' });
export const INTERACTIONS_TOOLS = lookupTable<(tool: Record<string, any>) => Record<string, unknown>>({
  google_search: (tool) => ({
    googleSearch: Array.isArray(tool.search_types)
      ? { searchTypes: Object.fromEntries(tool.search_types.flatMap((type: unknown) => {
        const field = typeof type === 'string' ? SEARCH_TYPES[type] : undefined;
        return field ? [[field, {}]] : [];
      })) }
      : {},
  }),
  code_execution: () => ({ codeExecution: {} }),
  url_context: () => ({ urlContext: {} }),
});
export const INTERACTIONS_GENERATION = lookupTable({ seed: 'seed' });

function addInteractionsExtras(body: Record<string, any>, fields: Record<string, unknown>): void {
  const hosted = Array.isArray(fields.tools)
    ? fields.tools.flatMap((tool: any) => {
      const encode = typeof tool?.type === 'string' ? INTERACTIONS_TOOLS[tool.type] : undefined;
      return encode ? [encode(tool)] : [];
    })
    : [];
  if (hosted.length) body.tools = [...(body.tools ?? []), ...hosted];
  const gc = fields.generation_config as Record<string, unknown> | undefined;
  if (!gc || typeof gc !== 'object') return;
  for (const [key, field] of Object.entries(INTERACTIONS_GENERATION)) {
    if (gc[key] !== undefined) body.generationConfig = { ...body.generationConfig, [field]: gc[key] };
  }
  // thinking_summaries "none": thoughts are still made, their summaries not sent.
  const thinking = body.generationConfig?.thinkingConfig;
  if (gc.thinking_summaries === 'none' && thinking) thinking.includeThoughts = false;
}

/** Gemini 3 wants a thoughtSignature on the first functionCall part of every model step (parallel
 *  calls after it carry none). A call replayed by a caller whose format has no field for it (Chat,
 *  Responses) or made by another model has none of Gemini's: it gets the documented skip value.
 *  A call that kept its own signature keeps it. Only a request gets this: a response body shows
 *  what Gemini sent. */
function signFirstCall(parts: VertexPart[]): void {
  const call = parts.find((p) => p.functionCall);
  if (call && !call.thoughtSignature) call.thoughtSignature = SKIP_SIGNATURE;
}

/** A user content's functionResponse parts in the order of the calls of the model content before
 *  it, matched by id. Callers may send results in any order (OpenAI pairs them by tool_call_id;
 *  agents have been seen returning them permuted), and Vertex pairs the responses of parallel
 *  calls to one function by position: out of order, each call would get another's result. Other
 *  parts keep their places; a response that answers none of those calls comes after those that do. */
function orderResponsesAsCalls(parts: VertexPart[], before: VertexPart[]): void {
  const order = new Map<unknown, number>();
  for (const p of before) {
    const id = (p.functionCall as { id?: string } | undefined)?.id;
    if (id !== undefined && !order.has(id)) order.set(id, order.size);
  }
  if (!order.size) return;
  const slots: number[] = [];
  parts.forEach((p, i) => { if (p.functionResponse) slots.push(i); });
  const rank = (p: VertexPart): number => order.get((p.functionResponse as { id?: string }).id) ?? order.size;
  // Array.prototype.sort is stable: unmatched responses keep their own order after the matched.
  const sorted = slots.map((i) => parts[i]!).sort((a, b) => rank(a) - rank(b));
  slots.forEach((slot, k) => { parts[slot] = sorted[k]!; });
}

function encodeToolChoice(choice: IRToolChoice): Record<string, unknown> {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice.name] };
}

/** The `$schema` keyword schema generators add names a dialect and constrains nothing; Vertex's
 *  function schemas have refused it, so it is left out. */
function withoutSchemaKeyword(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema;
  const { $schema: _drop, ...rest } = schema;
  return rest;
}
