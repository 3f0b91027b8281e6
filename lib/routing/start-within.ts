// start_within: "HHh-MMm-SSs" (two-digit fields, at most 00h-10m-00s) asks for a flex race within
// that budget; the literal "now" is the non-racing form: standard tier at once, nothing to wait for.
import { GatewayError } from '../errors.ts';

export type StartWithin = { kind: 'now' } | { kind: 'duration'; ms: number };

export const MAX_START_WITHIN_MS = 10 * 60_000;
const SHAPE = /^(\d{2})h-(\d{2})m-(\d{2})s$/;

export function parseStartWithin(value: unknown): StartWithin {
  if (value === 'now') return { kind: 'now' };
  const match = typeof value === 'string' ? SHAPE.exec(value) : null;
  if (!match) throw new GatewayError('invalid_start_within', undefined, { param: 'start_within' });
  const [hours, minutes, seconds] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (minutes > 59 || seconds > 59) throw new GatewayError('invalid_start_within', undefined, { param: 'start_within' });
  const ms = ((hours * 60 + minutes) * 60 + seconds) * 1000;
  if (ms > MAX_START_WITHIN_MS) {
    throw new GatewayError('invalid_start_within', 'start_within is longer than 10 minutes (00h-10m-00s).', { param: 'start_within' });
  }
  return { kind: 'duration', ms };
}
