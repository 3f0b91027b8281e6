// Usage tap for a Messages passthrough: message_start says the input side, message_delta the
// cumulative totals (the final usage frame, where cost and routing are added).
import type { CostExtras } from '../../ir.ts';
import type { SSEFrame, TapState, UsageTap } from '../types.ts';
import { countersFromIR, countersToIR, mergeAnthropicUsage, tierFromAnthropic } from './usage.ts';
import { addCostExtras } from '../cost-extras.ts';

const frameType = (frame: SSEFrame): string | undefined =>
  frame.event ?? (frame.data.includes('"message_delta"') ? 'message_delta'
    : frame.data.includes('"message_start"') ? 'message_start'
    : undefined);

export const messagesTap: UsageTap = {
  markers: ['message_start', 'message_delta'],
  // The message's empty head and the keep-alive after it.
  echoes: { opening: ['message_start', 'ping'] },

  carriesUsage(frame) {
    const type = frameType(frame);
    return type === 'message_start' || type === 'message_delta';
  },

  read(data, acc: TapState) {
    const start = data?.type === 'message_start';
    const usage = start ? data.message?.usage : data?.usage;
    if (!usage) return;
    const counters = countersFromIR(acc.usage);
    mergeAnthropicUsage(counters, usage);
    acc.usage = countersToIR(counters);
    if (usage.service_tier) acc.tier = tierFromAnthropic(usage.service_tier);
    acc.sawUsage = true;
    // message_start's output count (1) is a running one: only message_delta's is final.
    if (start) acc.partial = true;
    else if (typeof usage.output_tokens === 'number') acc.partial = false;
  },

  // message_delta carries the output side; the input count the spec wants beside the cost came in
  // message_start (Anthropic's meaning: the uncached input), kept by read().
  inject(data, extras: CostExtras, acc?: TapState) {
    const usage = { ...data.usage };
    if (acc?.sawUsage) usage.input_tokens ??= countersFromIR(acc.usage).input;
    return JSON.stringify({ ...data, usage: addCostExtras(usage, extras) });
  },

  isFinal(frame, data) {
    return (data?.type ?? frameType(frame)) === 'message_delta';
  },
};
