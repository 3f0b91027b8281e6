// Retry delay: exponential or linear with full jitter, never sooner than the upstream's
// Retry-After (as undici's retry policy does: retrying sooner only earns another refusal). Pure:
// randomness is injected.
export interface RetryPolicy { count: number; backoff: 'exponential' | 'linear'; jitter: boolean }

export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 8_000;

/** Delay before retry number `n` (1-based). */
export function backoffDelay(policy: RetryPolicy, n: number, retryAfterMs: number | undefined, random: () => number): number {
  const ceiling = Math.min(MAX_DELAY_MS, policy.backoff === 'linear' ? BASE_DELAY_MS * n : BASE_DELAY_MS * 2 ** (n - 1));
  const delay = policy.jitter ? Math.floor(random() * ceiling) : ceiling;
  return Math.max(delay, retryAfterMs ?? 0);
}
