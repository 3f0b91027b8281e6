// Deterministic randomness: every choice the simulator makes (words, ids, flex delays, schema
// values) comes from a seeded generator, so a run with the same seed and requests replays exactly.

/** FNV-1a over a string, mixed with a seed: a stable 32-bit key for "seed + request content". */
export function hash32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** mulberry32: tiny, fast, good enough for test data. */
export class Rng {
  private state: number;
  constructor(seed: number) { this.state = seed >>> 0; }

  /** An independent generator that continues this one's sequence from here. */
  clone(): Rng { return new Rng(this.state); }

  /** Advance past `n` draws (what `n` calls of next() or pick() would consume). */
  skip(n: number): void { this.state = (this.state + Math.imul(n, 0x6d2b79f5)) >>> 0; }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `len` characters from an alphabet (ids, signatures). */
  chars(len: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    let s = '';
    for (let i = 0; i < len; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
}

export const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
export const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
