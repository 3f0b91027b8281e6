// How a Claude model takes thinking, by model. Opus 4.7 and later think only adaptively: manual
// thinking is refused ("thinking.type.enabled is not supported for this model. Use
// thinking.type.adaptive and output_config.effort"; Bedrock's adaptive-thinking page: these
// models only support adaptive thinking), the amount is output_config.effort (SDK OutputConfig:
// low, medium, high, xhigh, max), and any sampling parameter is refused ("temperature is
// deprecated for this model"). Earlier models (Sonnet 4.6, Haiku 4.5, …) take a token budget.
//
// Read from the model id, as geminiThinking is: the encoders see the IR's model (the catalog id).
// An id naming no Claude family and version (a config file's own model) keeps budgets, which every
// Claude model before Opus 4.7 takes.
import type { Effort } from '../formats/effort-budget.ts';

export type ClaudeThinking =
  | { by: 'adaptive'; efforts: readonly Effort[] }
  | { by: 'budget' };

const VERSION = /^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)/;
const ADAPTIVE_EFFORTS: readonly Effort[] = ['low', 'medium', 'high', 'xhigh', 'max'];

export function claudeThinking(model: string): ClaudeThinking {
  const version = VERSION.exec(model);
  if (!version) return { by: 'budget' };
  const [major, minor] = [Number(version[2]), Number(version[3] ?? 0)];
  const adaptiveOnly = version[1] === 'opus' && (major > 4 || (major === 4 && minor >= 7));
  return adaptiveOnly ? { by: 'adaptive', efforts: ADAPTIVE_EFFORTS } : { by: 'budget' };
}
