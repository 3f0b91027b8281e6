// The reasoning efforts an OpenAI model takes, by generation. GPT-5.2 and later refuse `minimal`
// ("Unsupported value: 'minimal' is not supported with the 'gpt-5.5' model. Supported values are:
// 'none', 'low', 'medium', 'high', and 'xhigh'."); GPT-5.1 takes none to high; GPT-5 minimal to
// high. A translated effort is held to these (effort-budget.ts clampEffort).
//
// Read from the model id, as geminiThinking is. An id naming no GPT-5 version (a config file's own
// model, an o-series model) gets undefined: its effort goes as the caller gave it.
import type { Effort } from '../formats/effort-budget.ts';

const VERSION = /^gpt-(\d+)(?:\.(\d+))?/;

export function openaiEfforts(model: string): readonly Effort[] | undefined {
  const version = VERSION.exec(model);
  if (!version) return undefined;
  const [major, minor] = [Number(version[1]), Number(version[2] ?? 0)];
  if (major < 5) return undefined;
  if (major > 5 || minor >= 2) return ['none', 'low', 'medium', 'high', 'xhigh'];
  if (minor === 1) return ['none', 'low', 'medium', 'high'];
  return ['minimal', 'low', 'medium', 'high'];
}
