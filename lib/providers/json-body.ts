// The JSON body a direct route sends: the route's own members (`set`: model, stream, tier, …;
// undefined removes a member) over the caller's body. A passthrough forwards the caller's own
// bytes with members cut out and set anew — no re-serialization of a body that can be megabytes
// (a coding agent's context); a translated body is serialized once.
import type { BuildArgs } from './types.ts';
import { spliceMembers } from '../json-skip.ts';
import { GatewayError } from '../errors.ts';

/** JSON.stringify of a body the gateway sends upstream. The schemas take free-form members (a
 *  tool's JSON schema) at any depth, and a value nested thousands of levels deep overflows the
 *  serializer's stack: the caller's 400, before anything is sent, not the gateway's 5xx. */
export function upstreamJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) throw new GatewayError('invalid_request', 'The request is nested too deeply to be sent to the provider.');
    throw err;
  }
}

export function jsonBody(args: BuildArgs, set: Record<string, unknown>): string | Buffer {
  const { body, raw } = args;
  // The checks may remove top-level members from the caller's body (gateway fields, a
  // service_tier), never rewrite one: what the checked body no longer has stays out.
  if (raw) return spliceMembers(raw, (key) => Object.hasOwn(body, key), set);
  const out: Record<string, unknown> = { ...body };
  for (const k in set) { if (set[k] === undefined) delete out[k]; else out[k] = set[k]; }
  return upstreamJson(out);
}
