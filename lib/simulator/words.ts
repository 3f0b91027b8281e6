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

/** A run of output tokens, produced on demand: a 60k-token stream costs the simulator a cursor,
 *  not 60k strings. Iterating again replays the same words; text() joins them (the few events
 *  that carry the whole text build it once, when they are sent). */
export interface Tokens extends Iterable<string> {
  readonly count: number;
  text(): string;
}

/** `count` tokens: the first without a leading space, the rest with one (so they concatenate), the
 *  last ending the sentence. Takes its words from a copy of `rng` and moves `rng` past them, so
 *  what the caller draws next is what it drew when the words were generated eagerly. */
export function generateTokens(rng: Rng, count: number): Tokens {
  const start = rng.clone();
  rng.skip(count);
  return {
    count,
    *[Symbol.iterator]() {
      const words = start.clone();
      for (let i = 0; i < count; i++) yield token(words.pick(VOCABULARY), i, count);
    },
    text() { return joinTokens(this); },
  };
}

/** Tokens already in hand (the fragments of a structured-output answer). */
export function listedTokens(tokens: readonly string[]): Tokens {
  return { count: tokens.length, [Symbol.iterator]: () => tokens[Symbol.iterator](), text: () => tokens.join('') };
}

function token(word: string, i: number, count: number): string {
  const t = i === 0 ? word[0]!.toUpperCase() + word.slice(1) : ' ' + word;
  return i === count - 1 ? t + '.' : t;
}

function joinTokens(tokens: Iterable<string>): string {
  let s = '';
  for (const t of tokens) s += t;
  return s;
}

export function generateWord(rng: Rng): string {
  return rng.pick(VOCABULARY);
}
