// Pseudo-words for generated output: one word is one token, so token counts, deltas and usage
// line up exactly and tests can predict them.
import type { Rng } from './rng.ts';

export const VOCABULARY = [
  'the', 'quiet', 'river', 'carries', 'light', 'across', 'stone', 'and', 'amber', 'fields',
  'where', 'small', 'engines', 'hum', 'softly', 'under', 'a', 'patient', 'sky', 'of',
  'copper', 'clouds', 'drift', 'toward', 'northern', 'harbors', 'while', 'lanterns', 'glow', 'in',
  'narrow', 'streets', 'every', 'signal', 'returns', 'with', 'measured', 'care', 'then', 'rests',
  'beside', 'old', 'maps', 'folded', 'into', 'careful', 'squares', 'ready', 'for', 'tomorrow',
  'bright', 'orchards', 'answer', 'slowly', 'through', 'morning', 'fog', 'as', 'gentle', 'bells',
  'count', 'hours', 'over', 'green', 'valleys', 'silver', 'wires', 'sing', 'between', 'towers',
] as const;

/** `count` tokens: the first without a leading space, the rest with one (so they concatenate). */
export function generateTokens(rng: Rng, count: number): string[] {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const word = rng.pick(VOCABULARY);
    tokens.push(i === 0 ? word[0]!.toUpperCase() + word.slice(1) : ' ' + word);
  }
  if (count > 0) tokens[count - 1] += '.';
  return tokens;
}

export function generateWord(rng: Rng): string {
  return rng.pick(VOCABULARY);
}
