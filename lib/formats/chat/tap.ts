// Passthrough usage tap for a Chat Completions stream: bytes go through untouched; only the chunk
// with a non-null usage (and the finish chunk, for the tier) is parsed. OpenAI writes compact JSON,
// so `"usage":{` marks real usage: inside a content string the quotes would be escaped. Compatible
// servers written in Python (json.dumps) put a space after the colon: both spellings are markers.
import type { CostExtras } from '../../ir.ts';
import { isPlainObject } from '../../json-util.ts';
import type { SSEFrame, TapState, UsageTap } from '../types.ts';
import { addChatExtras, tierOfChunk, usageFromChat } from './usage.ts';

export const chatTap: UsageTap = {
  markers: ['"usage":{', '"finish_reason":"', '"usage": {', '"finish_reason": "'],

  carriesUsage(frame: SSEFrame): boolean {
    const d = frame.data;
    return d.includes('"usage":{') || d.includes('"finish_reason":"') || d.includes('"usage": {') || d.includes('"finish_reason": "');
  },

  read(data: any, acc: TapState): void {
    if (isPlainObject(data?.usage)) { acc.usage = usageFromChat(data.usage); acc.sawUsage = true; }
    const tier = tierOfChunk(data?.service_tier);
    if (tier) acc.tier = tier;
    if (Array.isArray(data?.choices) && data.choices.some((choice: any) => choice?.finish_reason)) acc.answered = true;
  },

  isFinal(_frame: SSEFrame, data: any): boolean {
    return isPlainObject(data?.usage);
  },

  inject(data: any, extras: CostExtras): string {
    const usage: Record<string, unknown> = { ...data.usage };
    addChatExtras(usage, extras);
    return JSON.stringify({ ...data, usage });
  },
};
