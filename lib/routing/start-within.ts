// start_within: "HHh-MMm-SSs" (two-digit fields, at most 00h-10m-00s) asks for a flex race within
// that budget; the literal "now" is the non-racing form: standard tier at once, nothing to wait for.
import { GatewayError } from '../errors.ts';

export type StartWithin = { kind: 'now' } | { kind: 'duration'; ms: number };

export const MAX_START_WITHIN_MS = 10 * 60_000;
const SHAPE = /^(\d{2})h-(\d{2})m-(\d{2})s$/;

export function parseStartWithin(value: unknown): StartWithin {
  if (value === 'now') return { kind: 'now' };
  const m = typeof value === 'string' ? SHAPE.exec(value) : null;
  if (!m) throw new GatewayError('invalid_start_within', undefined, { param: 'start_within' });
  const [h, min, s] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (min > 59 || s > 59) throw new GatewayError('invalid_start_within', undefined, { param: 'start_within' });
  const ms = ((h * 60 + min) * 60 + s) * 1000;
  if (ms > MAX_START_WITHIN_MS) {
    throw new GatewayError('invalid_start_within', 'start_within is longer than 10 minutes (00h-10m-00s).', { param: 'start_within' });
  }
  return { kind: 'duration', ms };
}
