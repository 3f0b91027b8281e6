// cloud_a, Gemini on Vertex AI (generateContent):
//   POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent
//   POST …:streamGenerateContent?alt=sse   (data-only SSE, no terminator)
// Auth is a Bearer token this simulator issued at POST /token. Flex is the header
// `X-Vertex-AI-LLM-Shared-Request-Type: flex`; the tier used shows in usageMetadata.trafficType
// (ON_DEMAND_FLEX | ON_DEMAND). A full flex queue answers 429 RESOURCE_EXHAUSTED. A gemini-3*
// model signs its function calls and, as Gemini 3 does, answers 400 to a current-turn call sent
// back without its thoughtSignature. A thinkingConfig the model's generation does not take (a
// level or a budget past its ceiling on gemini-2.5*, any on gemini-2.0*) is refused 400 as Vertex
// refuses it, and so is a content answering a function call turn with another number of
// functionResponse parts than the turn has calls. A level the model refuses (MINIMAL on Pro and
// Flash 3.7+) and a thoughtSignature Claude made are refused too (../vendor-rules.ts).
import { vertexJsonOutput } from '../structured-output.ts';
import type { Answer } from '../answer.ts';
import { sseData, sseRaw, SSE_CONTENT_TYPE, type Frame } from '../frames.ts';
import {
  asArray, asPositiveInt, asString, invalid, isRecord, REASONING_TOKENS, DEFAULT_REASONING_TOKENS,
  type DecodeResult, type Decoded, type PromptTool,
} from '../prompt.ts';
import { foreignSignature, geminiLevelRefusal } from '../vendor-rules.ts';
import { bearerToken, decodeSegment, type RequestInfo, type RouteAdapter, type StreamEncoding } from './route.ts';

const PATH = /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

export const vertexGemini: RouteAdapter = {
  name: 'cloud_a',
  family: 'google',
  match: (path) => {
    const match = PATH.exec(path);
    return match ? { project: match[2]!, location: match[3]!, model: decodeSegment(match[4]!), verb: match[5]! } : undefined;
  },
  authenticate: (info, ctx) => {
    const token = bearerToken(info.headers);
    if (token && ctx.isIssuedToken(token)) return undefined;
    return {
      name: 'unauthenticated',
      message: 'Request had invalid authentication credentials.'
        + ' Expected OAuth 2 access token, login cookie or other valid authentication credential.',
    };
  },
  decode: decodeVertex,
  flexRefusal: {
    name: 'rate_limited', status: 429,
    message: 'Resource exhausted. Flex PayGo capacity is temporarily unavailable; please try again later.',
  },
  streamContentType: SSE_CONTENT_TYPE,
  encodeBody: (answer, decoded) => response(answer, decoded, allParts(answer), true),
  encodeStream: vertexStream,
  replayFrame: (line) => sseRaw(line),
  replayTail: [],
};

function decodeVertex(body: unknown, info: RequestInfo): DecodeResult {
  if (!isRecord(body)) return invalid('Invalid JSON payload received.');
  const contents = asArray(body.contents);
  if (!contents.length) return invalid('contents is not specified');
  const unsigned = signsCalls(info.params.model!) ? unsignedCall(contents) : undefined;
  if (unsigned) return invalid(unsigned);
  const unpaired = unpairedResponses(contents);
  if (unpaired) return invalid(unpaired);
  const corrupted = contents.flatMap(partsOf).map((p) => (isRecord(p) ? foreignSignature(p.thoughtSignature) : undefined)).find(Boolean);
  if (corrupted) return invalid(corrupted);

  let text = '';
  for (const p of partsOf(body.systemInstruction)) if (isRecord(p)) text += asString(p.text) ?? '';
  let lastUserText = '';
  let lastIsToolResult = false;
  for (const content of contents) {
    if (!isRecord(content)) return invalid('Invalid value at \'contents\'.');
    let turnText = '';
    lastIsToolResult = false;
    for (const p of asArray(content.parts)) {
      if (!isRecord(p)) continue;
      if (typeof p.text === 'string' && p.thought !== true) turnText += p.text;
      if (isRecord(p.functionCall)) text += JSON.stringify(p.functionCall.args ?? {});
      if (isRecord(p.functionResponse)) { text += JSON.stringify(p.functionResponse.response ?? {}); lastIsToolResult = true; }
    }
    text += turnText;
    if (content.role !== 'model' && turnText) lastUserText = turnText;
  }

  const tools: PromptTool[] = [];
  for (const tool of asArray(body.tools)) {
    if (!isRecord(tool)) continue;
    for (const declaration of asArray(tool.functionDeclarations)) {
      if (isRecord(declaration) && typeof declaration.name === 'string') {
        tools.push({ name: declaration.name, parameters: declaration.parametersJsonSchema ?? declaration.parameters });
      }
    }
  }
  const fcc = isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
  const allowed = asArray(fcc.allowedFunctionNames).filter((n): n is string => typeof n === 'string');
  const forcedTool = fcc.mode === 'ANY' ? (allowed[0] ?? true) : undefined;
  const gen = isRecord(body.generationConfig) ? body.generationConfig : {};
  const thinking = isRecord(gen.thinkingConfig) ? gen.thinkingConfig : undefined;
  const refused = thinking && thinkingRefusal(info.params.model!, thinking);
  if (refused) return invalid(refused);
  const reasoning = thinking !== undefined && thinking.thinkingBudget !== 0;
  const level = thinking ? asString(thinking.thinkingLevel)?.toLowerCase() : undefined;
  const flexHeader = info.headers['x-vertex-ai-llm-shared-request-type'];

  const value: Decoded = {
    prompt: {
      model: info.params.model!, text, lastUserText, tools, forcedTool, lastTurnIsToolResult: lastIsToolResult,
      maxOutputTokens: asPositiveInt(gen.maxOutputTokens), jsonOutput: vertexJsonOutput(gen),
      reasoning, reasoningTokens: reasoning ? (level && REASONING_TOKENS[level]) || DEFAULT_REASONING_TOKENS : undefined,
    },
    stream: info.params.verb === 'streamGenerateContent',
    tier: typeof flexHeader === 'string' && flexHeader.toLowerCase() === 'flex' ? 'flex' : 'standard',
    echo: {},
  };
  return { ok: true, value };
}

/** What Vertex refuses in a thinkingConfig, by the model's generation (messages are Vertex's): Gemini
 *  2.0 and earlier do not think; 2.5 takes a budget only (0 off, -1 dynamic, else up to 24576, Pro
 *  32768); 3 and later take a level or a budget. */
function thinkingRefusal(model: string, thinking: Record<string, unknown>): string | undefined {
  const generation = /^gemini-(\d+)\.(\d+)/.exec(model);
  if (!generation) return undefined;
  const [major, minor] = [Number(generation[1]), Number(generation[2])];
  if (major < 2 || (major === 2 && minor < 5)) {
    return 'Unable to submit request because thinking is not supported by this model.'
      + ' Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini';
  }
  if (major > 2) return geminiLevelRefusal(model, thinking.thinkingLevel);
  if (thinking.thinkingLevel !== undefined) return 'Thinking level is not supported for this model.';
  const budget = thinking.thinkingBudget;
  const max = model.includes('-pro') ? 32_768 : 24_576;
  if (typeof budget === 'number' && budget !== -1 && (budget < 0 || budget > max)) {
    return `Unable to submit request because thinking_budget is out of range; supported values are integers from 1 to ${max}.`;
  }
  return undefined;
}

/** Gemini 3 signs the first functionCall part of each model step and wants it back. */
const signsCalls = (model: string): boolean => model.startsWith('gemini-3');

/** Gemini 3's check: in the current turn (the model steps after the last user content that is not
 *  only functionResponse parts), the first functionCall part of each model content must carry a
 *  thoughtSignature. Earlier turns are not checked. The message is Vertex's. */
function unsignedCall(contents: unknown[]): string | undefined {
  let start = -1;
  contents.forEach((c, i) => {
    if (isRecord(c) && c.role !== 'model' && asArray(c.parts).some((p) => isRecord(p) && !isRecord(p.functionResponse))) start = i;
  });
  for (let i = start + 1; i < contents.length; i++) {
    const c = contents[i];
    if (!isRecord(c) || c.role !== 'model') continue;
    const call = asArray(c.parts).find((p): p is Record<string, unknown> => isRecord(p) && isRecord(p.functionCall));
    if (call && !(typeof call.thoughtSignature === 'string' && call.thoughtSignature)) {
      const name = (call.functionCall as Record<string, unknown>).name;
      return `Unable to submit request because function call \`${String(name)}\` in the ${i + 1}. content block is missing a \`thought_signature\`.`
        + ' Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures';
    }
  }
  return undefined;
}

/** Gemini's pairing check: a content answering a function call turn (it has functionResponse
 *  parts, the model content before it functionCall parts) answers every call, no more, no less.
 *  It pairs them by id, else by position among one function's calls, and checks no more than the
 *  count; the message is Gemini's. */
function unpairedResponses(contents: unknown[]): string | undefined {
  const count = (content: unknown, key: string): number => asArray(isRecord(content) ? content.parts : undefined)
    .filter((p) => isRecord(p) && isRecord(p[key])).length;
  for (let i = 1; i < contents.length; i++) {
    const [turn, answer] = [contents[i - 1], contents[i]];
    if (!isRecord(turn) || turn.role !== 'model' || !isRecord(answer) || answer.role === 'model') continue;
    const [calls, responses] = [count(turn, 'functionCall'), count(answer, 'functionResponse')];
    if (calls && responses && calls !== responses) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
  }
  return undefined;
}

function partsOf(content: unknown): unknown[] {
  return isRecord(content) ? asArray(content.parts) : [];
}

type Part = Record<string, unknown>;

/** The signature a Gemini 3 function call carries (Gemini 2.5 signs only when thinking). */
const callSignature = (answer: Answer): Part =>
  (signsCalls(answer.model) ? { thoughtSignature: Buffer.from(`sim-call-${answer.uid}`).toString('base64') } : {});

function allParts(answer: Answer): Part[] {
  const parts: Part[] = [];
  if (answer.reasoning) parts.push({ text: answer.reasoning.tokens.text(), thought: true, thoughtSignature: answer.reasoning.signature });
  if (answer.toolCall) parts.push({ functionCall: { name: answer.toolCall.name, args: JSON.parse(answer.toolCall.args) }, ...callSignature(answer) });
  if (answer.text) parts.push({ text: answer.text.tokens.text() });
  return parts;
}

const trafficType = (decoded: Decoded) => (decoded.tier === 'flex' ? 'ON_DEMAND_FLEX' : 'ON_DEMAND');

function usageMetadata(answer: Answer, decoded: Decoded) {
  const candidates = answer.usage.output - answer.usage.reasoning;
  return {
    promptTokenCount: answer.usage.input, candidatesTokenCount: candidates, thoughtsTokenCount: answer.usage.reasoning,
    totalTokenCount: answer.usage.input + answer.usage.output, cachedContentTokenCount: 0, trafficType: trafficType(decoded),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: answer.usage.input }],
    candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: candidates }],
  };
}

/** One GenerateContentResponse; the last one carries finishReason and the full usage. */
function response(answer: Answer, decoded: Decoded, parts: Part[], last: boolean) {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  if (last) candidate.finishReason = answer.stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
  return {
    candidates: [candidate],
    usageMetadata: last ? usageMetadata(answer, decoded) : { trafficType: trafficType(decoded) },
    modelVersion: answer.model,
    createTime: new Date(answer.created * 1000).toISOString(),
    responseId: answer.uid,
  };
}

function vertexStream(answer: Answer, decoded: Decoded): StreamEncoding {
  function* pieces(): Generator<[Part, number]> {
    if (answer.reasoning) {
      const reasoning = answer.reasoning;
      let i = 0;
      for (const token of reasoning.tokens) {
        const last = ++i === reasoning.tokens.count;
        yield [last ? { text: token, thought: true, thoughtSignature: reasoning.signature } : { text: token, thought: true }, 1];
      }
    }
    // Vertex sends a function call whole ({name, args}); its tokens are one frame.
    const call = answer.toolCall;
    if (call) yield [{ functionCall: { name: call.name, args: JSON.parse(call.args) }, ...callSignature(answer) }, answer.usage.output - answer.usage.reasoning];
    for (const token of answer.text?.tokens ?? []) yield [{ text: token }, 1];
  }
  function* frames(): Generator<Frame> {
    // The final chunk carries the last piece of output together with finishReason and usage: each
    // piece is sent once the next one is known (one piece of look-ahead, not the whole answer).
    let held: [Part, number] = [{ text: '' }, 0];
    let any = false;
    for (const next of pieces()) {
      if (any) yield sseData(response(answer, decoded, [held[0]], false), held[1]);
      held = next;
      any = true;
    }
    yield sseData(response(answer, decoded, [held[0]], true), held[1]);
  }
  return {
    frames: frames(),
    error: (message) => [sseData({ error: { code: 500, message, status: 'INTERNAL' } })],
  };
}
