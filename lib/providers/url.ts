/** Splits a configured base URL into the pool origin and a path prefix without trailing slash. */
export function originAndBase(baseUrl: string): { origin: string; base: string } {
  const url = new URL(baseUrl);
  return { origin: url.origin, base: url.pathname.replace(/\/+$/, '') };
}
