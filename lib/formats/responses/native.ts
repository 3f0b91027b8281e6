// Fields only the caller's own OpenAI family understands travel in IRRequest.native; a same-family
// encoder lays them over the body it built. Arrays (hosted tools beside function tools) are
// appended and objects (text.verbosity beside text.format) merged, so a native field adds to what
// the IR said instead of replacing it.
export function mergeNative(body: Record<string, any>, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    const have = body[key];
    if (Array.isArray(have) && Array.isArray(value)) body[key] = [...have, ...value];
    else if (isPlainObject(have) && isPlainObject(value)) body[key] = { ...have, ...value };
    else body[key] = value;
  }
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Splits `data:<media>;base64,<data>` into its parts; undefined for anything else. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1] || 'application/octet-stream', data: m[2] } : undefined;
}

export const dataUrl = (mediaType: string | undefined, data: string): string =>
  `data:${mediaType ?? 'application/octet-stream'};base64,${data}`;
