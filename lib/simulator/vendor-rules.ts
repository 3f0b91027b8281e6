// What each simulated vendor refuses about reasoning that another vendor takes, so a gateway that
// sends one vendor's form to another fails here as it would against the real API.
//
// Signatures: every route signs reasoning with random base64; Claude's (vendor_c, cloud_b) carry a
// mark inside, so a Gemini route can refuse one as Gemini refuses a signature it did not make
// ("Corrupted thought signature.").
//
// Levels and efforts, by model id, as the providers answer: Gemini 3 Pro and Flash from 3.7 refuse
// thinking level MINIMAL; GPT-5.2 and later refuse reasoning effort `minimal`; Claude Opus 4.7 and
// later refuse manual thinking and any sampling parameter set to other than its default (top_k,
// which has none, at all); any Claude model refuses temperature other than 1, top_p below 0.95 and
// top_k beside thinking.
import { claudeThinking } from '../catalog/claude-thinking.ts';
import { geminiThinking } from '../catalog/gemini-thinking.ts';
import { openaiEfforts } from '../catalog/openai-reasoning.ts';

const CLAUDE_MARK = 'sim-claude:';

/** A Claude route's thinking signature. */
export const claudeSignature = (raw: string): string => Buffer.from(CLAUDE_MARK + raw).toString('base64');

/** Gemini's answer to a signature it did not make, or undefined for one it may have. */
export function foreignSignature(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  return Buffer.from(value, 'base64').toString('latin1').startsWith(CLAUDE_MARK) ? 'Corrupted thought signature.' : undefined;
}

/** Gemini's answer to a thinking level `level` (any case) on `model`: the catalog's reading of the
 *  id, so the simulator and the gateway's encoders agree on which models take which levels. */
export function geminiLevelRefusal(model: string, level: unknown): string | undefined {
  if (typeof level !== 'string' || level.toLowerCase() !== 'minimal') return undefined;
  const thinking = geminiThinking(model);
  return thinking.by === 'level' && !thinking.levels.includes('minimal') && /^gemini-/.test(model)
    ? 'Thinking level MINIMAL is not supported for this model.' : undefined;
}

/** OpenAI's answer to reasoning effort `effort` on `model` (the catalog's reading of the id). */
export function openaiEffortRefusal(model: string, effort: string | undefined): string | undefined {
  const efforts = openaiEfforts(model);
  if (effort !== 'minimal' || !efforts || efforts.includes('minimal')) return undefined;
  return `Unsupported value: 'minimal' is not supported with the '${model}' model.`
    + ` Supported values are: ${efforts.map((e) => `'${e}'`).join(', ').replace(/, ([^,]*)$/, ', and $1')}.`;
}

/** Anthropic's answer to a body's thinking and sampling parameters on `model` (a Claude id, or
 *  Bedrock's `anthropic.claude-…-v1:0`). */
export function claudeThinkingRefusal(model: string, body: Record<string, unknown>): string | undefined {
  // The catalog's reading of the id, so the simulator and the gateway's encoders agree on which
  // models are adaptive-only; Bedrock's prefix (`anthropic.`, `us.anthropic.`) is not part of it.
  const adaptiveOnly = claudeThinking(model.slice(Math.max(0, model.indexOf('claude-')))).by === 'adaptive';
  const thinking = (body.thinking as { type?: unknown } | undefined)?.type;
  if (adaptiveOnly) {
    if (thinking === 'enabled') {
      return 'thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking behavior.';
    }
    // temperature and top_p at their default (1) are taken, as the SDKs' own checks let them through
    // (@langchain/anthropic refuses only non-default values on these models); top_k has no default.
    const sampling = ['temperature', 'top_p', 'top_k'].find((key) => body[key] !== undefined && (key === 'top_k' || body[key] !== 1));
    return sampling ? `${sampling} is deprecated for this model.` : undefined;
  }
  if (thinking !== 'enabled' && thinking !== 'adaptive') return undefined;
  if (body.temperature !== undefined && body.temperature !== 1) {
    return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  }
  if (typeof body.top_p === 'number' && (body.top_p < 0.95 || body.top_p > 1)) {
    return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  }
  if (body.top_k !== undefined) {
    return '`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  }
  return undefined;
}
