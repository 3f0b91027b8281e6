// Polling and the simulator directive, shared by the gateway and simulator tests.

/** Polls until cond() holds (real time; for observing servers, never for asserting speed). */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The `#sim{...}` directive a request carries in its last user text. */
export const sim = (directive: Record<string, unknown>): string => `#sim${JSON.stringify(directive)}`;
