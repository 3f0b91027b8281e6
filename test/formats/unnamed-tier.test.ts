// Every decoder reads the tier the provider names as served, and a stream or body that names none
// as no tier at all (undefined), never as standard: the committed tier then stands, as it does for
// the passthrough tap (test/e2e/unnamed-tier.test.ts drives the money side end to end).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CODECS } from '../../lib/formats/index.ts';
import type { FormatName } from '../../lib/ir.ts';
import type { SSEFrame } from '../../lib/formats/types.ts';
import { decodeAll } from '../helpers/decode.ts';

const frame = (data: unknown, event?: string): SSEFrame => ({ data: JSON.stringify(data), ...(event ? { event } : {}) });

/** One short answer in each format, its tier field set to `named` (or absent), streamed and whole;
 *  and the format's own names for flex and a standard tier. */
const FORMATS: Record<FormatName, { flex: string; standard: string; stream(named?: string): SSEFrame[]; body(named?: string): unknown }> = {
  responses: {
    flex: 'flex', standard: 'default',
    body: (named) => ({ id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 3, output_tokens: 2 }, ...(named ? { service_tier: named } : {}) }),
    stream: (named) => [frame({ type: 'response.completed', response: FORMATS.responses.body(named) }, 'response.completed')],
  },
  chat: {
    flex: 'flex', standard: 'default',
    body: (named) => ({ id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], ...(named ? { service_tier: named } : {}) }),
    stream: (named) => [
      frame({ id: 'c', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }], ...(named ? { service_tier: named } : {}) }),
      { data: '[DONE]' },
    ],
  },
  messages: {
    flex: 'flex', standard: 'standard',
    body: (named) => ({ id: 'msg_1', content: [], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2, ...(named ? { service_tier: named } : {}) } }),
    stream: (named) => [
      frame({ type: 'message_start', message: { id: 'msg_1', content: [], usage: { input_tokens: 3, output_tokens: 1, ...(named ? { service_tier: named } : {}) } } }, 'message_start'),
      frame({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }, 'message_delta'),
      frame({ type: 'message_stop' }, 'message_stop'),
    ],
  },
  interactions: {
    flex: 'flex', standard: 'standard',
    body: (named) => ({ id: 'v1_x', status: 'completed', outputs: [], usage: { total_input_tokens: 3, total_output_tokens: 2 }, ...(named ? { service_tier: named } : {}) }),
    stream: (named) => [frame({ event_type: 'interaction.completed', interaction: FORMATS.interactions.body(named) }, 'interaction.completed')],
  },
  vertex: {
    flex: 'ON_DEMAND_FLEX', standard: 'ON_DEMAND',
    body: (named) => ({
      candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5, ...(named ? { trafficType: named } : {}) },
    }),
    stream: (named) => [frame(FORMATS.vertex.body(named))],
  },
};

for (const [name, f] of Object.entries(FORMATS) as [FormatName, (typeof FORMATS)[FormatName]][]) {
  test(`${name}: the tier named as served, and none where the provider names none`, () => {
    const codec = CODECS[name];
    for (const [named, tier] of [[f.flex, 'flex'], [f.standard, 'standard'], [undefined, undefined]] as const) {
      const { events } = decodeAll(codec, f.stream(named));
      const finish = events.find((ev) => ev.type === 'finish');
      assert.ok(finish?.type === 'finish', `${name}: the stream finishes (${JSON.stringify(events)})`);
      assert.equal(finish.tier, tier, `${name} stream naming ${named}`);
      assert.equal(codec.decodeResponse(f.body(named)).tier, tier, `${name} body naming ${named}`);
    }
  });
}
