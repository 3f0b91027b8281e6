// start_within: "HHh-MMm-SSs" (two-digit fields, at most 00h-10m-00s) asks for a flex race within
// that budget; the literal "now" is the non-racing form: standard tier at once, nothing to wait for.
import { GatewayError } from '../errors.ts';

export type StartWithin = { kind: 'now' } | { kind: 'duration'; ms: number };

export const MAX_START_WITHIN_MS = 10 * 60_000;
const SHAPE = /^(\d{2})h-(\d{2})m-(\d{2})s$/;

/** `param`: the field it came from (a key's default_start_within), named by a refusal. */
export function parseStartWithin(value: unknown, param = 'start_within'): StartWithin {
  if (value === 'now') return { kind: 'now' };
  const match = typeof value === 'string' ? SHAPE.exec(value) : null;
  if (!match) throw bad(param);
  const [hours, minutes, seconds] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (minutes > 59 || seconds > 59) throw bad(param);
  const ms = ((hours * 60 + minutes) * 60 + seconds) * 1000;
  if (ms > MAX_START_WITHIN_MS) throw bad(param, 'start_within is longer than 10 minutes (00h-10m-00s).');
  return { kind: 'duration', ms };
}

const bad = (param: string, message = new GatewayError('invalid_start_within').message): GatewayError =>
  new GatewayError('invalid_start_within', message.replace('start_within', param), { param });
