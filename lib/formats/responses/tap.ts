// Passthrough usage tap for a Responses stream: the gateway forwards vendor A's bytes untouched
// and parses only the terminal event, the one that carries usage and the tier that served.
import type { CostExtras } from '../../ir.ts';
import type { SSEFrame, TapState, UsageTap } from '../types.ts';
import { isPlainObject } from '../../json-util.ts';
import { usageFromResponses } from './usage.ts';
import { tierFromServiceTier } from '../openai-shared.ts';
import { addCostExtras } from '../cost-extras.ts';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export const responsesTap: UsageTap = {
  // The likeliest first: a stream that completed is not searched for the other two.
  markers: ['response.completed', 'response.incomplete', 'response.failed'],
  markersOnce: true,
  // The stream's head and its terminal events repeat the whole request (instructions, tools).
  echoes: { opening: ['response.created', 'response.queued', 'response.in_progress'], read: true },
  pick: { type: true, response: { usage: true, service_tier: true } },
  idPick: { type: true, response: { id: true, usage: true, service_tier: true } },
  idFrame: {
    marker: 'response.created',
    pick: { type: true, response: { id: true } },
    read: (_frame, data) => (data?.type === 'response.created' && typeof data.response?.id === 'string' ? data.response.id : undefined),
  },

  carriesUsage(frame: SSEFrame): boolean {
    if (frame.event !== undefined) return TERMINAL.has(frame.event);
    // Data-only framing (not what vendor A sends): the type leads the payload.
    return frame.data.startsWith('{"type":"response.') && /^\{"type":"response\.(completed|incomplete|failed)"/.test(frame.data);
  },

  read(data: any, acc: TapState): void {
    const response = data?.response;
    if (!response) return;
    if (isPlainObject(response.usage)) { acc.usage = usageFromResponses(response.usage); acc.sawUsage = true; }
    if (response.service_tier) acc.tier = tierFromServiceTier(response.service_tier);
    if (typeof response.id === 'string') acc.id = response.id;
  },

  // A completed (or incomplete) response is the end with or without its usage (charged the
  // estimate without); a failed one only when it reports usage (else the stream failed).
  isFinal(_frame: SSEFrame, data: any): boolean {
    return TERMINAL.has(data?.type) && (data.type !== 'response.failed' || isPlainObject(data.response?.usage));
  },

  inject(data: any, extras: CostExtras): string {
    const usage: Record<string, unknown> = { ...data.response.usage };
    addCostExtras(usage, extras);
    return JSON.stringify({ ...data, response: { ...data.response, usage } });
  },
};
