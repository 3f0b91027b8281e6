// The JSON body a direct route sends: the route's own members (`set`: model, stream, tier, …;
// undefined removes a member) over the caller's body. A passthrough forwards the caller's own
// bytes with members cut out and set anew — no re-serialization of a body that can be megabytes
// (a coding agent's context); a translated body is serialized once.
import type { BuildArgs } from './types.ts';
import { spliceMembers } from '../json-skip.ts';

export function jsonBody(args: BuildArgs, set: Record<string, unknown>): string | Buffer {
  const { body, raw } = args;
  // The checks may remove top-level members from the caller's body (gateway fields, a
  // service_tier), never rewrite one: what the checked body no longer has stays out.
  if (raw) return spliceMembers(raw, (key) => Object.hasOwn(body, key), set);
  const out: Record<string, unknown> = { ...body };
  for (const k in set) { if (set[k] === undefined) delete out[k]; else out[k] = set[k]; }
  return JSON.stringify(out);
}
