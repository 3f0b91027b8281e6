// What a benchmark scenario declares: one request, as the gateway's caller sends it and as the
// gateway sends it upstream. The direct and bare-proxy baselines send the upstream form (without
// the gateway's own fields), so all three targets make the simulator do the same work.

export type TargetName = 'direct' | 'bare proxy' | 'gateway';
export const TARGETS: readonly TargetName[] = ['direct', 'bare proxy', 'gateway'];

export interface Scenario {
  /** The file's name, e.g. `responses-stream`. */
  name: string;
  /** One line: what is measured. */
  title: string;
  /** Caller endpoint on the gateway and its body (with `start_within` and friends). */
  gateway: { path: string; body: Record<string, unknown> };
  /** Provider endpoint and the body the gateway sends there: what direct and bare proxy send. */
  upstream: { path: string; body: Record<string, unknown> };
  /** Checks one sanity reply's body (200 already checked); returns what is wrong, if anything. */
  checkBody(text: string, target: TargetName): string | undefined;
  /** The gateway's `x-service-flex-reason` for this request (proves the intended path ran). */
  flexReason: string;
  /** Which organization calls the gateway: its own vendor_a key (default) or the managed balance. */
  org?: 'byok' | 'managed';
  /** The share of the bare proxy's req/s the gateway must keep (issue targets). */
  target: number;
}

export const MODEL = 'gpt-5.4-mini';
export const PROMPT = 'Write one short sentence about benchmarks.';

/** A Responses stream that reached its clean end, with text in it. */
export function checkResponsesStream(text: string): string | undefined {
  if (!text.includes('event: response.output_text.delta')) return 'no response.output_text.delta event';
  if (!text.includes('event: response.completed')) return 'stream did not end with response.completed';
  if (text.includes('event: error') || text.includes('response.failed')) return 'stream carries an error event';
  return undefined;
}

/** A Chat stream that reached its clean end, with content in it. */
export function checkChatStream(text: string): string | undefined {
  if (!text.includes('"chat.completion.chunk"')) return 'no chat.completion.chunk';
  if (!/"content":"[^"]/.test(text)) return 'no content delta';
  if (!text.trimEnd().endsWith('data: [DONE]')) return 'stream did not end with [DONE]';
  if (text.includes('"error"')) return 'stream carries an error';
  return undefined;
}

/** A non-streamed Responses body, completed, with output text. */
export function checkResponsesBody(text: string): string | undefined {
  let body: any;
  try { body = JSON.parse(text); } catch { return 'body is not JSON'; }
  if (body.object !== 'response' || body.status !== 'completed') return `object/status = ${body.object}/${body.status}`;
  const words = (body.output ?? []).flatMap((o: any) => o.content ?? []).map((c: any) => c.text ?? '').join('');
  if (!words.trim()) return 'no output text';
  return undefined;
}
