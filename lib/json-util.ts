// Small JSON-shape helpers every floor may use (ground floor).

/** A JSON object: not null, not an array. */
export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A token count read off a provider's usage object: a finite number, else 0 (absent or malformed). */
export const tokenCount = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
