// Vertex generateContent body → IR (a best effort: Vertex is rarely a caller format). Function
// calls without an id get one, and a functionResponse without an id answers the earliest
// unanswered call of the same name. What the IR cannot hold stays in native.fields.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest, IRToolChoice, IRToolDef } from '../../ir.ts';
import { newCallId } from './ids.ts';

const CONSUMED = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'stream']);
const GENERATION_KEYS = new Set([
  'maxOutputTokens', 'temperature', 'topP', 'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'thinkingConfig',
]);
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

export function decodeVertexRequest(body: Record<string, any>): IRRequest {
  if (!Array.isArray(body.contents)) throw invalid('contents', 'contents must be an array.');
  const native: Record<string, unknown> = {};
  const ir: IRRequest = {
    model: typeof body.model === 'string' ? body.model : '', messages: decodeContents(body.contents), stream: body.stream === true,
  };

  const system = body.systemInstruction;
  if (system !== undefined) {
    const text = typeof system === 'string' ? system
      : Array.isArray(system?.parts) ? system.parts.map((part: any) => String(part?.text ?? '')).join('\n\n')
      : undefined;
    if (text === undefined) throw invalid('systemInstruction', 'systemInstruction must be {parts:[{text}]}.');
    if (text) ir.system = text;
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw invalid('tools', 'tools must be an array.');
    const tools: IRToolDef[] = [];
    let lossy = false;
    for (const tool of body.tools) {
      const decls = Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : [];
      if (Object.keys(tool ?? {}).some((k) => k !== 'functionDeclarations')) lossy = true; // googleSearch, codeExecution, …
      for (const declaration of decls) {
        tools.push({
          name: String(declaration?.name ?? ''),
          ...(typeof declaration?.description === 'string' ? { description: declaration.description } : {}),
          parameters: declaration?.parametersJsonSchema ?? declaration?.parameters ?? { type: 'object' },
        });
      }
    }
    if (tools.length) ir.tools = tools;
    if (lossy) native.tools = body.tools;
  }
  const fcc = body.toolConfig?.functionCallingConfig;
  if (fcc) {
    const [choice, exact] = decodeToolChoice(fcc);
    if (choice) ir.toolChoice = choice;
    if (!exact) native.toolConfig = body.toolConfig;
  }
  if (body.generationConfig !== undefined) {
    const extras = decodeGenerationConfig(body.generationConfig, ir);
    if (Object.keys(extras).length) native.generationConfig = extras;
  }
  for (const [k, v] of Object.entries(body)) if (!CONSUMED.has(k)) native[k] = v;
  if (Object.keys(native).length) ir.native = { family: 'vertex', fields: native };
  return ir;
}

function decodeContents(contents: any[]): IRMessage[] {
  const messages: IRMessage[] = [];
  const unanswered: { id: string; name: string }[] = [];
  contents.forEach((content, i) => {
    if (!content || typeof content !== 'object') throw invalid(`contents[${i}]`, 'Each content must be an object.');
    const role = content.role === 'model' ? 'assistant' : 'user';
    const parts: IRPart[] = [];
    for (const p of Array.isArray(content.parts) ? content.parts : []) {
      const sig = typeof p?.thoughtSignature === 'string' ? p.thoughtSignature : undefined;
      if (p?.functionCall) {
        const id = typeof p.functionCall.id === 'string' ? p.functionCall.id : newCallId();
        const name = String(p.functionCall.name ?? '');
        unanswered.push({ id, name });
        parts.push({
          type: 'tool_call', id, name, arguments: JSON.stringify(p.functionCall.args ?? {}), ...(sig ? { signature: sig } : {}),
        });
        continue;
      }
      if (p?.thought === true) {
        parts.push({ type: 'reasoning', text: String(p.text ?? ''), ...(sig ? { signature: sig } : {}) });
        continue;
      }
      if (sig) parts.push({ type: 'reasoning', signature: sig }); // belongs to the part after it
      if (p?.functionResponse) {
        const fr = p.functionResponse;
        const name = String(fr.name ?? '');
        const at = typeof fr.id === 'string'
          ? unanswered.findIndex((call) => call.id === fr.id)
          : unanswered.findIndex((call) => call.name === name);
        const callId = typeof fr.id === 'string' ? fr.id : at >= 0 ? unanswered[at]!.id : newCallId();
        if (at >= 0) unanswered.splice(at, 1);
        const response = fr.response ?? {};
        const content = typeof response.result === 'string' ? response.result
          : typeof response.error === 'string' ? response.error
          : JSON.stringify(response);
        parts.push({
          type: 'tool_result', callId, name, content,
          ...(typeof response.error === 'string' && response.result === undefined ? { isError: true } : {}),
        });
      } else if (typeof p?.text === 'string') {
        if (p.text) parts.push({ type: 'text', text: p.text });
      } else if (p?.inlineData) {
        const { mimeType, data } = p.inlineData;
        parts.push(String(mimeType).startsWith('image/')
          ? { type: 'image', mediaType: mimeType, data }
          : { type: 'file', mediaType: mimeType, data });
      } else if (p?.fileData) {
        const { mimeType, fileUri } = p.fileData;
        parts.push(String(mimeType).startsWith('image/')
          ? { type: 'image', mediaType: mimeType, url: fileUri }
          : { type: 'file', mediaType: mimeType, url: fileUri });
      }
    }
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...parts);
    else if (parts.length) messages.push({ role, content: parts });
  });
  return messages;
}

function decodeToolChoice(fcc: any): [IRToolChoice | undefined, boolean] {
  const names: unknown[] = Array.isArray(fcc.allowedFunctionNames) ? fcc.allowedFunctionNames : [];
  switch (fcc.mode) {
    case 'AUTO': return ['auto', names.length === 0];
    case 'NONE': return ['none', true];
    case 'ANY':
      return names.length === 1 && typeof names[0] === 'string' ? [{ name: names[0] }, true] : ['required', names.length === 0];
    default: return [undefined, fcc.mode === undefined]; // VALIDATED, …
  }
}

function decodeGenerationConfig(gc: any, ir: IRRequest): Record<string, unknown> {
  if (!gc || typeof gc !== 'object') throw invalid('generationConfig', 'generationConfig must be an object.');
  const extras: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(gc)) if (!GENERATION_KEYS.has(k)) extras[k] = v;
  if (typeof gc.maxOutputTokens === 'number') ir.maxOutputTokens = gc.maxOutputTokens;
  if (typeof gc.temperature === 'number') ir.temperature = gc.temperature;
  if (typeof gc.topP === 'number') ir.topP = gc.topP;
  if (Array.isArray(gc.stopSequences) && gc.stopSequences.length) ir.stopSequences = gc.stopSequences.map(String);
  if (gc.responseMimeType === 'application/json') {
    const schema = gc.responseJsonSchema ?? gc.responseSchema;
    ir.responseFormat = schema && typeof schema === 'object' ? { type: 'json_schema', schema } : { type: 'json_object' };
  } else if (gc.responseMimeType !== undefined) {
    extras.responseMimeType = gc.responseMimeType;
    if (gc.responseSchema !== undefined) extras.responseSchema = gc.responseSchema;
    if (gc.responseJsonSchema !== undefined) extras.responseJsonSchema = gc.responseJsonSchema;
  }
  const thinking = gc.thinkingConfig;
  if (thinking && typeof thinking === 'object') {
    const level = typeof thinking.thinkingLevel === 'string' ? thinking.thinkingLevel.toLowerCase() : undefined;
    if (level && EFFORTS.has(level)) ir.reasoning = { effort: level as 'minimal' | 'low' | 'medium' | 'high' };
    else if (typeof thinking.thinkingBudget === 'number' && thinking.thinkingBudget !== 0) {
      const budget = thinking.thinkingBudget;
      ir.reasoning = budget < 0 ? { effort: 'medium' } : {
        effort: budget < 2048 ? 'low' : budget < 8192 ? 'medium' : 'high', budgetTokens: budget,
      };
    }
    const known = (key: string): boolean => key === 'thinkingLevel' || key === 'thinkingBudget' || key === 'includeThoughts';
    if (!Object.keys(thinking).every(known)) extras.thinkingConfig = thinking;
  }
  return extras;
}
