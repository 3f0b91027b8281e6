// Responses codec: recorded vendor A streams and bodies decode to the right IR; requests survive
// IR → body → IR; the stream and body encoders produce what the official openai SDK accepts; the
// passthrough tap reads usage and injects cost without touching anything else.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import OpenAI from 'openai';
import { closeCodecServers, serveFixed } from '../helpers/codec-server.ts';
import { GatewayError } from '../../lib/errors.ts';
import { responsesCodec } from '../../lib/formats/responses/index.ts';
import type { EncodeContext, SSEFrame, TapState } from '../../lib/formats/types.ts';
import { type CostExtras, type IREvent, type IRRequest, zeroUsage } from '../../lib/ir.ts';
import { SSEParser } from '../../lib/sse.ts';
import { pickMembers } from '../../lib/json-skip.ts';
import { collect } from '../helpers/decode.ts';
import { RECORDED, recordedFiles, recordedOnly } from '../helpers/recorded.ts';

const DIR = `${RECORDED}/openai-responses`;

/** Recorded payload lines → one frame list per stream (a file may hold several back to back). */
function recordedStreams(file: string): SSEFrame[][] {
  const streams: SSEFrame[][] = [];
  for (const line of readFileSync(`${DIR}/${file}`, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let payload: any;
    try { payload = JSON.parse(line); } catch { continue; } // parallel-tool-call-wrapper has broken lines
    if (payload.type === 'response.created' || !streams.length) streams.push([]);
    streams[streams.length - 1].push({ event: payload.type, data: line });
  }
  return streams;
}

function decode(frames: SSEFrame[]): { events: IREvent[]; tail: IREvent[] } {
  const dec = responsesCodec.createStreamDecoder();
  const events = frames.flatMap(f => dec.push(f));
  const tail = dec.end();
  return { events: [...events, ...tail], tail };
}


/** What the recorded payloads themselves say, computed independently of the decoder. */
function expected(frames: SSEFrame[]) {
  const payloads = frames.map(f => JSON.parse(f.data));
  const byType = (t: string) => payloads.filter(p => p.type === t);
  const completed = byType('response.completed')[0]?.response;
  return {
    text: byType('response.output_text.delta').map(p => p.delta).join(''),
    reasoning: byType('response.reasoning_summary_text.delta').map(p => p.delta).join(''),
    calls: byType('response.output_item.done').map(p => p.item).filter(i => i.type === 'function_call')
      .map(i => ({ id: i.call_id, name: i.name, arguments: i.arguments })),
    encrypted: byType('response.output_item.done').map(p => p.item).filter(i => i.type === 'reasoning').map(i => i.encrypted_content),
    usage: completed?.usage,
    completed,
  };
}

const files = recordedFiles('openai-responses', '.chunks.txt');

describe('responses stream decoder on recorded streams', recordedOnly, () => {
  for (const file of files) {
    recordedStreams(file).forEach((frames, n) => {
      test(`${file} #${n + 1}`, recordedOnly, () => {
        const { events } = decode(frames);
        const exp = expected(frames);
        // Block indices are sequential from 0 in order of appearance, each started once and stopped once.
        const starts = events.filter(e => e.type === 'block_start').map(e => (e as { index: number }).index);
        assert.deepEqual(starts, starts.map((_, i) => i));
        const stops = events.filter(e => e.type === 'block_stop').map(e => (e as { index: number }).index);
        if (events.some(e => e.type === 'finish')) assert.deepEqual([...stops].sort((a, b) => a - b), starts);
        const res = collect(events);
        const text = res.blocks.filter(b => b.kind === 'text').map(b => (b as { text: string }).text).join('');
        assert.equal(text, exp.text);
        const reasoning = res.blocks.filter(b => b.kind === 'reasoning').map(b => (b as { text: string }).text).join('');
        assert.equal(reasoning, exp.reasoning);
        assert.deepEqual(res.blocks.filter(b => b.kind === 'tool_call').map(b => ({ ...b, kind: undefined })).map(({ kind: _, ...b }) => b), exp.calls);
        assert.deepEqual(res.blocks.filter(b => b.kind === 'reasoning').map(b => (b as { encrypted?: string }).encrypted), exp.encrypted);
        const finish = events.find(e => e.type === 'finish');
        if (exp.completed) {
          assert.ok(finish && finish.type === 'finish');
          assert.equal(events.filter(e => e.type === 'finish').length, 1);
          assert.deepEqual(finish.usage, {
            inputTokens: exp.usage.input_tokens, cachedInputTokens: exp.usage.input_tokens_details.cached_tokens,
            cacheWriteTokens: exp.usage.input_tokens_details.cache_write_tokens ?? 0,
            outputTokens: exp.usage.output_tokens, reasoningTokens: exp.usage.output_tokens_details.reasoning_tokens,
          });
          assert.equal(finish.reason, exp.calls.length ? 'tool_use' : 'end');
          assert.equal(finish.tier, 'standard'); // recorded service_tier "default"
          const start = events[0];
          assert.ok(start.type === 'start');
          assert.equal(start.id, exp.completed.id);
          assert.equal(start.model, exp.completed.model);
        }
      });
    });
  }

  test('simple text: "OK", 12 in / 2 out', () => {
    const res = collect(decode(recordedStreams('issue-20047-openai-responses.chunks.txt')[0]).events);
    assert.deepEqual(res.blocks, [{ kind: 'text', text: 'OK' }]);
    assert.equal(res.usage.inputTokens, 12);
    assert.equal(res.usage.outputTokens, 2);
    assert.equal(res.stopReason, 'end');
    assert.equal(res.tier, 'standard');
    assert.equal(res.id, 'resp_sanitized_streaming');
  });

  test('tool call with arguments in 6 deltas', () => {
    const res = collect(decode(recordedStreams('issue-19493-gpt-5.1-tool-call.chunks.txt')[0]).events);
    assert.deepEqual(res.blocks, [{ kind: 'tool_call', id: 'call_2FQdm3Br7Qb35YUBSkDR7kue', name: 'get_weather', arguments: '{"city":"Beijing"}' }]);
    assert.equal(res.stopReason, 'tool_use');
    assert.deepEqual(res.usage, { inputTokens: 45, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 25, reasoningTokens: 0 });
  });

  test('4 back-to-back streams: reasoning with encrypted content, calls, final text', () => {
    const streams = recordedStreams('openai-reasoning-encrypted-content.1.chunks.txt');
    assert.equal(streams.length, 4);
    const first = collect(decode(streams[0]).events);
    assert.equal(first.blocks.length, 2);
    const [rs, fc] = first.blocks;
    assert.ok(rs.kind === 'reasoning' && rs.text.startsWith('**Calculating step-by-step using calculator**'));
    assert.ok(rs.encrypted?.startsWith('gAAAAABpPDIVOKrs')); // the output_item.done value, not the .added one
    assert.deepEqual(fc, { kind: 'tool_call', id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' });
    assert.equal(first.usage.inputTokens, 134);
    const last = collect(decode(streams[3]).events);
    assert.deepEqual(last.blocks, [{ kind: 'text', text: 'The final result is **570**.' }]);
    assert.equal(last.stopReason, 'end');
    assert.equal(last.usage.outputTokens, 12);
  });

  test('hand-written wrapper stream: broken created/completed lines are skipped, no finish invented', () => {
    const { events, tail } = decode(recordedStreams('parallel-tool-call-wrapper.1.chunks.txt')[0]);
    const res = collect(events);
    assert.equal(res.blocks.length, 1);
    assert.ok(res.blocks[0].kind === 'tool_call' && res.blocks[0].name === 'parallel');
    assert.deepEqual(JSON.parse((res.blocks[0] as { arguments: string }).arguments).tool_uses.length, 2);
    assert.equal(events.some(e => e.type === 'finish'), false);
    assert.deepEqual(tail, []);
  });

  test('error event then response.failed: one IR error, no finish', () => {
    const { events } = decode(recordedStreams('openai-error.1.chunks.txt')[0]);
    const errors = events.filter(e => e.type === 'error');
    assert.equal(errors.length, 1);
    assert.ok(errors[0].type === 'error' && errors[0].code === 'insufficient_quota' && errors[0].message.startsWith('You exceeded your current quota'));
    assert.equal(events.some(e => e.type === 'finish'), false);
  });

  test('response.failed alone: IR error', () => {
    const { events } = decode(recordedStreams('openai-response-failed-only.1.chunks.txt')[0]);
    const err = events.find(e => e.type === 'error');
    assert.ok(err?.type === 'error' && err.code === 'rate_limit_exceeded' && err.message.includes('Request too large'));
    assert.equal(events.some(e => e.type === 'finish'), false);
  });

  test('flat error shape, incomplete, flex tier, trailing [DONE]', () => {
    const flat = responsesCodec.createStreamDecoder().push({ event: 'error', data: '{"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":3}' });
    assert.deepEqual(flat, [{ type: 'error', code: 'server_error', message: 'boom' }]);
    const dec = responsesCodec.createStreamDecoder();
    const events = [
      { type: 'response.created', response: { id: 'resp_1', model: 'm', status: 'in_progress' } },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg_1' } },
      { type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hel' },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'lo' },
      { type: 'response.incomplete', response: { id: 'resp_1', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, service_tier: 'flex', usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 2 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 } } } },
    ].flatMap(p => dec.push({ event: p.type, data: JSON.stringify(p) }));
    assert.deepEqual(dec.push({ data: '[DONE]' }), []);
    const finish = events.at(-1);
    assert.deepEqual(finish, { type: 'finish', reason: 'max_tokens', tier: 'flex', usage: { inputTokens: 5, cachedInputTokens: 2, cacheWriteTokens: 0, outputTokens: 9, reasoningTokens: 4 } });
    assert.deepEqual(collect(events).blocks, [{ kind: 'text', text: 'Hello' }]);
    assert.deepEqual(dec.end(), []);
  });

  test('a refusal content part is a text block marked refusal, stop reason refusal; incomplete content_filter is content_filter', () => {
    const item = { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] };
    const usage = { input_tokens: 5, output_tokens: 2 };
    const streamed = [
      { type: 'response.created', response: { id: 'resp_1', model: 'm', status: 'in_progress' } },
      { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
      { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'refusal', refusal: '' } },
      { type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'No.' },
      { type: 'response.refusal.done', item_id: 'msg_1', output_index: 0, content_index: 0, refusal: 'No.' },
      { type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 0, part: item.content[0] },
      { type: 'response.output_item.done', output_index: 0, item },
      { type: 'response.completed', response: { id: 'resp_1', model: 'm', status: 'completed', output: [item], usage } },
    ].map(p => ({ event: p.type, data: JSON.stringify(p) }));
    const { events } = decode(streamed);
    assert.deepEqual(events.find(e => e.type === 'block_start'), { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } });
    const res = collect(events);
    assert.deepEqual([res.blocks, res.stopReason], [[{ kind: 'text', text: 'No.', refusal: true }], 'refusal']);
    // A terminal event whose output never streamed, and the non-streamed body, say the same.
    const whole = decode([streamed[0]!, streamed.at(-1)!]).events;
    assert.deepEqual(whole.find(e => e.type === 'block_start'), { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } });
    assert.equal(collect(whole).stopReason, 'refusal');
    const body = responsesCodec.decodeResponse({ id: 'resp_1', model: 'm', status: 'completed', output: [item], usage });
    assert.deepEqual([body.blocks, body.stopReason], [[{ kind: 'text', text: 'No.', refusal: true }], 'refusal']);
    const filtered = { id: 'resp_1', model: 'm', status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [], usage };
    assert.equal(responsesCodec.decodeResponse(filtered).stopReason, 'content_filter');
    assert.equal(collect(decode([streamed[0]!, { event: 'response.incomplete', data: JSON.stringify({ type: 'response.incomplete', response: filtered }) }]).events).stopReason, 'content_filter');
  });

  test('end() without a terminal event and without usage emits nothing', () => {
    const dec = responsesCodec.createStreamDecoder();
    dec.push({ event: 'response.created', data: '{"type":"response.created","response":{"id":"r","model":"m"}}' });
    assert.deepEqual(dec.end(), []);
  });

  test('after the first event, events the decoder does not read are not parsed; the first event always is', () => {
    const dec = responsesCodec.createStreamDecoder();
    const first = dec.push({ event: 'response.in_progress', data: '{"type":"response.in_progress","response":{"id":"r","model":"m"}}' });
    assert.deepEqual(first, [{ type: 'start', id: 'r', model: 'm' }], 'the first event starts the stream, whatever it is');
    // The event's name decides: a decoder that parsed this data would read its type and emit text "X".
    const unread = '{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"X"}';
    assert.deepEqual(dec.push({ event: 'response.web_search_call.searching', data: unread }), []);
    const text = dec.push({ event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"hi"}' });
    assert.deepEqual(collect([...first, ...text]).blocks, [{ kind: 'text', text: 'hi' }]);
  });

  test('the done events\' repeats of streamed text are cut before parsing and not read; a part that never streamed still gets its text', () => {
    const dec = responsesCodec.createStreamDecoder();
    const ev = (type: string, body: Record<string, unknown>): IREvent[] => dec.push({ event: type, data: JSON.stringify({ type, ...body }) });
    const events = [
      ...ev('response.created', { response: { id: 'r', model: 'm' } }),
      ...ev('response.content_part.added', { output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } }),
      ...ev('response.output_text.delta', { output_index: 0, content_index: 0, delta: 'streamed' }),
      // A repeat that disagrees with what streamed: it is not read (the streamed text stands).
      ...ev('response.output_text.done', { output_index: 0, content_index: 0, text: 'REPEAT "quoted" \\ text' }),
      ...ev('response.content_part.done', { output_index: 0, content_index: 0, part: { type: 'output_text', text: 'REPEAT' } }),
      // A second part that never streamed deltas: its done event is the only place its text is.
      ...ev('response.output_text.done', { output_index: 0, content_index: 1, text: 'only "here" \\ é' }),
      ...ev('response.content_part.done', { output_index: 0, content_index: 1, part: { type: 'output_text', text: 'only' } }),
      ...ev('response.output_item.done', { output_index: 0, item: { type: 'message', content: [{ type: 'output_text', text: 'REPEAT' }] } }),
      ...ev('response.completed', { response: { status: 'completed', output: [{ type: 'message' }], usage: { input_tokens: 1, output_tokens: 2 } } }),
    ];
    assert.deepEqual(collect(events).blocks, [{ kind: 'text', text: 'streamed' }, { kind: 'text', text: 'only "here" \\ é' }]);
    assert.equal(events.at(-1)!.type, 'finish');
  });
});

describe('responses decodeResponse', () => {
  test('recorded non-streamed body', recordedOnly, () => {
    const body = JSON.parse(readFileSync(`${DIR}/issue-20047-openai-responses.json`, 'utf8'));
    const res = responsesCodec.decodeResponse(body);
    assert.deepEqual(res, {
      id: 'resp_sanitized_normal', model: 'gpt-4o-mini-2024-07-18', blocks: [{ kind: 'text', text: 'OK' }], stopReason: 'end',
      usage: { inputTokens: 12, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2, reasoningTokens: 0 }, tier: 'standard',
    });
  });

  test('recorded completed response with reasoning and a function call', recordedOnly, () => {
    const completed = expected(recordedStreams('openai-reasoning-encrypted-content.1.chunks.txt')[0]).completed;
    const res = responsesCodec.decodeResponse(completed);
    assert.equal(res.stopReason, 'tool_use');
    assert.equal(res.blocks[0].kind, 'reasoning');
    assert.equal((res.blocks[0] as { encrypted?: string }).encrypted, completed.output[0].encrypted_content);
    assert.deepEqual(res.blocks[1], { kind: 'tool_call', id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' });
  });

  test('failed body carries the error', recordedOnly, () => {
    const failed = JSON.parse(readFileSync(`${DIR}/openai-response-failed-only.1.chunks.txt`, 'utf8').split('\n')[1]).response;
    const res = responsesCodec.decodeResponse(failed);
    assert.equal(res.stopReason, 'error');
    assert.equal(res.error?.code, 'rate_limit_exceeded');
  });
});

const IMAGE = Buffer.from('fake png bytes').toString('base64');
const PDF = Buffer.from('%PDF-1.4 fake').toString('base64');

/** A conversation as another format (Anthropic Messages) would leave it in the IR. */
function anthropicLikeIR(): IRRequest {
  return {
    model: 'gpt-5.1',
    system: 'Be brief.',
    messages: [
      { role: 'user', content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image', mediaType: 'image/png', data: IMAGE },
        { type: 'image', url: 'https://example.com/cat.jpg' },
        { type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'doc.pdf' },
      ] },
      { role: 'assistant', content: [
        { type: 'reasoning', text: 'thinking about it', encrypted: 'gAAAA-enc', id: 'rs_123' },
        { type: 'reasoning', text: 'claude thought', signature: 'anthropic-sig' },
        { type: 'text', text: 'Let me check the weather.' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '{}' },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', callId: 'call_1', name: 'get_weather', content: 'sunny' },
        { type: 'tool_result', callId: 'call_2', name: 'get_time', content: '12:00' },
        { type: 'text', text: 'Thanks, and?' },
      ] },
    ],
    tools: [
      { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
      { name: 'get_time', parameters: { type: 'object', properties: {} } },
    ],
    toolChoice: { name: 'get_weather' },
    maxOutputTokens: 500,
    temperature: 0.5,
    topP: 0.9,
    reasoning: { effort: 'high' },
    responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
    stream: false,
  };
}

describe('responses request round trip', () => {
  test('IR → encodeRequest is a valid Responses body', () => {
    const body = responsesCodec.encodeRequest(anthropicLikeIR());
    assert.equal(body.stream, undefined);
    assert.equal(body.service_tier, undefined);
    assert.equal(body.instructions, 'Be brief.');
    assert.deepEqual(body.input, [
      { type: 'message', role: 'user', content: [
        { type: 'input_text', text: 'What is in these?' },
        { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${IMAGE}` },
        { type: 'input_image', detail: 'auto', image_url: 'https://example.com/cat.jpg' },
        { type: 'input_file', file_data: `data:application/pdf;base64,${PDF}`, filename: 'doc.pdf' },
      ] },
      { type: 'reasoning', id: 'rs_123', summary: [{ type: 'summary_text', text: 'thinking about it' }], encrypted_content: 'gAAAA-enc' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check the weather.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      { type: 'function_call_output', call_id: 'call_2', output: '12:00' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks, and?' }] },
    ]);
    assert.deepEqual(body.tools, [
      { type: 'function', name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
      { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } },
    ]);
    assert.deepEqual(body.tool_choice, { type: 'function', name: 'get_weather' });
    assert.equal(body.max_output_tokens, 500);
    assert.deepEqual(body.reasoning, { effort: 'high' });
    assert.deepEqual(body.include, ['reasoning.encrypted_content']);
    assert.deepEqual(body.text, { format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true } });
  });

  test('IR → encodeRequest → decodeRequest keeps everything Responses can carry', () => {
    const ir = anthropicLikeIR();
    const back = responsesCodec.decodeRequest(responsesCodec.encodeRequest(ir));
    const want = structuredClone(ir);
    want.messages[1].content.splice(1, 1); // the foreign signature has no Responses form
    assert.deepEqual({ ...back, native: undefined }, { ...want, native: undefined });
    assert.deepEqual(back.native, { family: 'responses', fields: { include: ['reasoning.encrypted_content'] } });
  });

  test('caller body with strings, json_object, hosted tools and native fields', () => {
    const body = {
      model: 'gpt-5.4', input: 'hi', instructions: 'sys', stream: true, store: false, metadata: { a: '1' },
      tools: [{ type: 'web_search' }, { type: 'function', name: 'f', parameters: { type: 'object' } }],
      tool_choice: 'required', reasoning: { effort: 'low', summary: 'auto' }, text: { format: { type: 'json_object' }, verbosity: 'low' },
      service_tier: 'flex',
    };
    const ir = responsesCodec.decodeRequest(body);
    assert.deepEqual(ir.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    assert.equal(ir.system, 'sys');
    assert.equal(ir.stream, true);
    assert.deepEqual(ir.responseFormat, { type: 'json_object' });
    assert.deepEqual(ir.reasoning, { effort: 'low' });
    assert.deepEqual(ir.native, { family: 'responses', fields: { store: false, metadata: { a: '1' }, tools: [{ type: 'web_search' }], reasoning: { summary: 'auto' }, text: { verbosity: 'low' } } });
    const out = responsesCodec.encodeRequest(ir);
    const { stream: _s, service_tier: _t, ...rest } = body;
    assert.deepEqual(out, { ...rest, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'web_search' }] });
  });

  test('message items, developer role and reasoning replay decode', () => {
    const ir = responsesCodec.decodeRequest({
      model: 'm',
      input: [
        { role: 'developer', content: 'dev rules' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }, { type: 'input_file', file_data: `data:application/pdf;base64,${PDF}`, filename: 'a.pdf' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }], encrypted_content: 'enc' },
        { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'r' },
      ],
    });
    assert.equal(ir.system, 'dev rules');
    assert.deepEqual(ir.messages, [
      { role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'a.pdf' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'a\n\nb', encrypted: 'enc', id: 'rs_1' }, { type: 'tool_call', id: 'c1', name: 'f', arguments: '{}' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'c1', name: 'f', content: 'r' }] },
    ]);
  });

  test('shapes the IR cannot carry are refused by name', () => {
    assert.throws(() => responsesCodec.decodeRequest({ model: 'm', input: [{ type: 'item_reference', id: 'x' }] }),
      (e: unknown) => e instanceof GatewayError && e.code === 'unsupported_parameter' && e.param === 'input[0].type');
    assert.throws(() => responsesCodec.decodeRequest({ input: 'x' }), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request');
    assert.throws(() => responsesCodec.decodeRequest({ model: 'm', input: 7 }), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_request');
    assert.throws(() => responsesCodec.encodeRequest({ model: 'm', messages: [], stream: false, stopSequences: ['x'] }),
      (e: unknown) => e instanceof GatewayError && e.code === 'unsupported_parameter' && e.param === 'stop');
  });

  test('native fields of another family are not copied', () => {
    const out = responsesCodec.encodeRequest({ model: 'm', messages: [], stream: false, native: { family: 'messages', fields: { top_k: 1 } } });
    assert.equal(out.top_k, undefined);
  });
});

// ---------- the official SDK reads what the encoders write ----------

after(closeCodecServers);

/** Serves one fixed body to every request; returns an SDK client pointed at it. */
async function serve(body: string, contentType: string): Promise<OpenAI> {
  return new OpenAI({ apiKey: 'x', baseURL: `${await serveFixed(body, contentType)}/v1`, maxRetries: 0 });
}

const CTX: EncodeContext = { id: 'resp_abc', model: 'gpt-5.1', createdAt: 1_770_000_000, tier: 'flex' };
const EXTRAS: CostExtras = {
  cost: { total_micro_usd: 1234, currency: 'USD' },
  routing: { provider: 'vendor_a', requested_provider: 'vendor_a', tier: 'flex', reason: 'flex_won', fallback_attempts: 0, mode: 'byok' },
};
const USAGE = { inputTokens: 100, cachedInputTokens: 20, cacheWriteTokens: 0, outputTokens: 50, reasoningTokens: 10 };

function irStream(): IREvent[] {
  return [
    { type: 'start', id: 'up_1', model: 'upstream-model' },
    { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
    { type: 'reasoning_delta', index: 0, text: 'Thinking ' },
    { type: 'reasoning_delta', index: 0, text: 'hard.' },
    { type: 'signature', index: 0, signature: 'enc-blob', encrypted: true },
    { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { kind: 'text' } },
    { type: 'text_delta', index: 1, text: 'Hello "world"' },
    { type: 'text_delta', index: 1, text: ' \u00e9\n' },
    { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_9', name: 'lookup' } },
    { type: 'args_delta', index: 2, json: '{"q":' },
    { type: 'args_delta', index: 2, json: '"x"}' },
    { type: 'block_stop', index: 2 },
    { type: 'finish', reason: 'tool_use', usage: USAGE, tier: 'flex', extras: EXTRAS },
  ];
}

const encodeAll = (events: IREvent[], ctx: EncodeContext = CTX): string => {
  const enc = responsesCodec.createStreamEncoder(ctx);
  return events.map(e => enc.push(e)).join('');
};

describe('responses stream encoder through the official SDK', () => {
  test('full lifecycle: framing and sequence numbers', () => {
    const frames = new SSEParser().push(Buffer.from(encodeAll(irStream())));
    const payloads = frames.map(f => ({ event: f.event, data: JSON.parse(f.data) }));
    payloads.forEach((p, i) => { assert.equal(p.event, p.data.type); assert.equal(p.data.sequence_number, i); });
    assert.deepEqual(payloads.map(p => p.event), [
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    const completed = payloads.at(-1)!.data.response;
    // The streamed items and the terminal object name each item the same way.
    const doneItems = payloads.filter(p => p.event === 'response.output_item.done').map(p => p.data.item);
    assert.deepEqual(completed.output, doneItems);
  });

  test('SDK accumulates text, reasoning, tool call, usage with cost and routing', async () => {
    const client = await serve(encodeAll(irStream()), 'text/event-stream');
    const stream = client.responses.stream({ model: 'gpt-5.1', input: 'hi' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', e => deltas.push(e.delta));
    const final = await stream.finalResponse();
    assert.equal(deltas.join(''), 'Hello "world" \u00e9\n');
    assert.equal(final.output_text, 'Hello "world" \u00e9\n');
    assert.equal(final.id, 'resp_abc');
    assert.equal(final.status, 'completed');
    assert.equal(final.service_tier, 'flex');
    assert.equal(final.model, 'gpt-5.1');
    const [rs, msg, fc] = final.output;
    assert.ok(rs.type === 'reasoning' && rs.summary[0].text === 'Thinking hard.' && rs.encrypted_content === 'enc-blob');
    assert.equal(msg.type, 'message');
    assert.ok(fc.type === 'function_call' && fc.call_id === 'call_9' && fc.name === 'lookup' && fc.arguments === '{"q":"x"}');
    assert.deepEqual(final.usage, {
      input_tokens: 100, input_tokens_details: { cached_tokens: 20 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 10 },
      total_tokens: 150, cost: EXTRAS.cost, routing: EXTRAS.routing,
    } as unknown);
  });

  test('raw event iteration with responses.create({stream:true})', async () => {
    const client = await serve(encodeAll(irStream()), 'text/event-stream');
    const types: string[] = [];
    for await (const ev of await client.responses.create({ model: 'gpt-5.1', input: 'hi', stream: true })) types.push(ev.type);
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
  });

  test('max_tokens ends with response.incomplete', async () => {
    const events: IREvent[] = [
      { type: 'start' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'cut' },
      { type: 'finish', reason: 'max_tokens', usage: USAGE },
    ];
    const client = await serve(encodeAll(events, { ...CTX, tier: 'standard' }), 'text/event-stream');
    const final = await client.responses.stream({ model: 'm', input: 'hi' }).finalResponse();
    assert.equal(final.status, 'incomplete');
    assert.deepEqual(final.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(final.output_text, 'cut');
    assert.equal(final.service_tier, 'default');
    assert.equal((final.usage as any).cost, undefined);
  });

  test('a refusal block streams as a refusal content part; the SDK final response holds it, status completed', async () => {
    const events: IREvent[] = [
      { type: 'start' },
      { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
      { type: 'text_delta', index: 0, text: 'No, ' },
      { type: 'text_delta', index: 0, text: 'sorry.' },
      { type: 'block_stop', index: 0 },
      { type: 'finish', reason: 'refusal', usage: USAGE },
    ];
    const sse = encodeAll(events);
    const types = new SSEParser().push(Buffer.from(sse)).map(f => f.event);
    assert.deepEqual(types.filter(t => t?.includes('refusal')), ['response.refusal.delta', 'response.refusal.delta', 'response.refusal.done']);
    assert.ok(!types.includes('response.output_text.delta'));
    const client = await serve(sse, 'text/event-stream');
    let deltas = '';
    const stream = client.responses.stream({ model: 'm', input: 'hi' });
    stream.on('response.refusal.delta', (e) => { deltas += e.delta; });
    const final = await stream.finalResponse();
    assert.equal(deltas, 'No, sorry.');
    assert.equal(final.status, 'completed');
    const message = final.output[0];
    assert.ok(message?.type === 'message');
    assert.deepEqual(message.content.map(({ type, refusal }: any) => ({ type, refusal })), [{ type: 'refusal', refusal: 'No, sorry.' }]);
    const body = responsesCodec.encodeResponse(collect(events), CTX);
    assert.deepEqual([body.status, body.output[0].content], ['completed', [{ type: 'refusal', refusal: 'No, sorry.' }]]);
  });

  test('content_filter ends with response.incomplete, incomplete_details content_filter', async () => {
    const events: IREvent[] = [
      { type: 'start' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Here is' },
      { type: 'finish', reason: 'content_filter', usage: USAGE },
    ];
    const client = await serve(encodeAll(events), 'text/event-stream');
    const final = await client.responses.stream({ model: 'm', input: 'hi' }).finalResponse();
    assert.equal(final.status, 'incomplete');
    assert.deepEqual(final.incomplete_details, { reason: 'content_filter' });
    assert.equal(final.output_text, 'Here is');
    const body = responsesCodec.encodeResponse(collect(events), CTX);
    assert.deepEqual([body.status, body.incomplete_details], ['incomplete', { reason: 'content_filter' }]);
  });

  test('an IR error becomes error + response.failed without usage, and the SDK raises APIError', async () => {
    const events: IREvent[] = [
      { type: 'start' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'partial' },
      // A running count (Anthropic's message_start), not the final usage.
      { type: 'usage', usage: { inputTokens: 13, outputTokens: 1 } },
      { type: 'error', code: 'provider_error', message: 'upstream reset' },
      { type: 'text_delta', index: 0, text: 'ignored' },
    ];
    const sse = encodeAll(events);
    const frames = new SSEParser().push(Buffer.from(sse));
    assert.deepEqual(frames.slice(-2).map(f => f.event), ['error', 'response.failed']);
    const failed = JSON.parse(frames.at(-1)!.data).response;
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, { code: 'provider_error', message: 'upstream reset' });
    assert.equal(failed.usage, null, 'no final usage came: none is made up');
    const client = await serve(sse, 'text/event-stream');
    await assert.rejects(async () => {
      for await (const _ of await client.responses.create({ model: 'm', input: 'hi', stream: true })) { /* drain */ }
    }, (e: unknown) => e instanceof OpenAI.APIError && /upstream reset/.test(e.message));
    await assert.rejects(client.responses.stream({ model: 'm', input: 'hi' }).finalResponse(), OpenAI.APIError);
  });

  test('recorded vendor A streams re-encoded for a Responses caller', recordedOnly, async () => {
    for (const file of files) {
      for (const frames of recordedStreams(file)) {
        const { events } = decode(frames);
        if (!events.some(e => e.type === 'finish')) continue;
        const exp = expected(frames);
        const client = await serve(encodeAll(events), 'text/event-stream');
        const final = await client.responses.stream({ model: 'm', input: 'hi' }).finalResponse();
        assert.equal(final.output_text, exp.text, file);
        assert.deepEqual(final.output.filter(o => o.type === 'function_call').map(o => o.type === 'function_call' && { id: o.call_id, name: o.name, arguments: o.arguments }), exp.calls);
        assert.equal(final.usage?.input_tokens, exp.usage.input_tokens);
        assert.equal(final.usage?.output_tokens, exp.usage.output_tokens);
      }
    }
  });

  test('non-streamed body through responses.create', async () => {
    const res = collect(irStream());
    const body = responsesCodec.encodeResponse(res, { ...CTX, id: '' });
    assert.match(body.id, /^resp_/);
    const client = await serve(JSON.stringify(body), 'application/json');
    const got = await client.responses.create({ model: 'gpt-5.1', input: 'hi' });
    assert.equal(got.output_text, 'Hello "world" \u00e9\n');
    assert.equal(got.status, 'completed');
    assert.equal(got.usage?.total_tokens, 150);
    assert.deepEqual((got.usage as any).routing, EXTRAS.routing);
    assert.equal(got.output.length, 3);
    assert.ok(got.output.every(o => 'id' in o && typeof o.id === 'string'));
  });

  test('non-streamed failure and truncation statuses', () => {
    const failed = responsesCodec.encodeResponse({ id: '', model: '', blocks: [], stopReason: 'error', usage: zeroUsage(), tier: 'standard', error: { code: 'provider_error', message: 'x' } }, CTX);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, { code: 'provider_error', message: 'x' });
    const cut = responsesCodec.encodeResponse({ id: '', model: '', blocks: [], stopReason: 'max_tokens', usage: zeroUsage(), tier: 'standard' }, CTX);
    assert.equal(cut.status, 'incomplete');
    assert.deepEqual(cut.incomplete_details, { reason: 'max_output_tokens' });
  });
});

describe('responses passthrough tap', () => {
  for (const file of files) {
    recordedStreams(file).forEach((frames, n) => {
      test(`${file} #${n + 1}`, () => {
        const acc: TapState = { usage: zeroUsage(), sawUsage: false };
        const finish = decode(frames).events.find(e => e.type === 'finish');
        let finals = 0;
        for (const frame of frames) {
          if (!responsesCodec.tap.carriesUsage(frame)) {
            assert.ok(!/"type":"response\.(completed|incomplete|failed)"/.test(frame.data.slice(0, 40)));
            continue;
          }
          const data = JSON.parse(frame.data);
          responsesCodec.tap.read(data, acc);
          // What a passthrough that only reads usage takes (the tap's members, with the id where it
          // is recorded) reads the same; without the id, all but the id.
          const picked = pickMembers(frame.data, responsesCodec.tap.idPick!);
          const alone: TapState = { usage: zeroUsage(), sawUsage: false };
          const viaPick: TapState = { usage: zeroUsage(), sawUsage: false };
          const viaUsagePick: TapState = { usage: zeroUsage(), sawUsage: false };
          responsesCodec.tap.read(data, alone);
          responsesCodec.tap.read(picked, viaPick);
          responsesCodec.tap.read(pickMembers(frame.data, responsesCodec.tap.pick!), viaUsagePick);
          assert.deepEqual(viaPick, alone);
          const { id: _id, ...withoutId } = alone;
          assert.deepEqual(viaUsagePick, withoutId);
          assert.equal(responsesCodec.tap.isFinal(frame, picked), responsesCodec.tap.isFinal(frame, data));
          if (!responsesCodec.tap.isFinal(frame, data)) continue;
          finals++;
          const injected = JSON.parse(responsesCodec.tap.inject(data, EXTRAS));
          const want = structuredClone(data);
          want.response.usage.cost = EXTRAS.cost;
          want.response.usage.routing = EXTRAS.routing;
          assert.deepEqual(injected, want);
          assert.deepEqual(data, JSON.parse(frame.data)); // the parsed frame is not mutated
        }
        if (finish?.type === 'finish') {
          assert.equal(finals, 1);
          assert.equal(acc.sawUsage, true);
          assert.deepEqual(acc.usage, finish.usage);
          assert.equal(acc.tier, 'standard');
        } else {
          assert.equal(finals, 0);
          assert.equal(acc.sawUsage, false);
        }
      });
    });
  }

  test('the members the tap picks carry the usage and the tier served, past instructions, tools and metadata that name them too', () => {
    const usage = { input_tokens: 1200, input_tokens_details: { cached_tokens: 1000 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 8 } };
    const text = JSON.stringify({
      type: 'response.completed', sequence_number: 9,
      response: {
        id: 'resp_1', instructions: 'Report "usage":{"input_tokens":1} and "service_tier":"default" \\ verbatim',
        tools: [{ type: 'function', name: 'usage', parameters: { type: 'object', properties: { usage: { type: 'string' } } } }],
        output: [{ type: 'message', content: [{ type: 'output_text', text: '{"usage":{}}' }] }],
        metadata: { usage: 'x', service_tier: 'priority' }, service_tier: 'flex', usage,
      },
    });
    const acc: TapState = { usage: zeroUsage(), sawUsage: false };
    const picked = pickMembers(text, responsesCodec.tap.pick!);
    responsesCodec.tap.read(picked, acc);
    assert.equal(acc.tier, 'flex');
    assert.equal(acc.sawUsage, true);
    assert.deepEqual(acc.usage, { inputTokens: 1200, cachedInputTokens: 1000, cacheWriteTokens: 0, outputTokens: 30, reasoningTokens: 8 });
    assert.equal(responsesCodec.tap.isFinal({ event: 'response.completed', data: text }, picked), true);
  });

  test('cost is omitted when unpriced', () => {
    const data = { type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 2 } } };
    const out = JSON.parse(responsesCodec.tap.inject(data, { routing: EXTRAS.routing }));
    assert.deepEqual(out.response.usage, { input_tokens: 1, output_tokens: 2, routing: EXTRAS.routing });
  });
});

describe('responses answer translated from another API: the request echoed', () => {
  const ECHO = {
    model: 'claude-haiku-4-5', instructions: 'Be brief.', metadata: { ticket: 'T-1' }, max_output_tokens: 300,
    reasoning: { effort: 'low', summary: 'auto' }, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
    tool_choice: 'required', text: { verbosity: 'low' }, parallel_tool_calls: false, temperature: 0.2, top_p: 0.9,
    truncation: 'auto', user: 'u-7', store: true, input: undefined,
  };
  const ECHOED = {
    instructions: 'Be brief.', metadata: { ticket: 'T-1' }, max_output_tokens: 300, reasoning: { effort: 'low', summary: 'auto' },
    tools: ECHO.tools, tool_choice: 'required', text: { format: { type: 'text' }, verbosity: 'low' }, parallel_tool_calls: false,
    temperature: 0.2, top_p: 0.9, truncation: 'auto', user: 'u-7', store: false,
  };
  const echoed = (res: Record<string, any>) => Object.fromEntries(Object.keys(ECHOED).map((k) => [k, res[k]]));

  test('the body and every lifecycle event of the stream repeat the request\'s fields; store is false', async () => {
    const ctx: EncodeContext = { ...CTX, echo: ECHO };
    assert.deepEqual(echoed(responsesCodec.encodeResponse(collect(irStream()), ctx)), ECHOED);
    const sse = encodeAll(irStream(), ctx);
    const frames = new SSEParser().push(Buffer.from(sse)).filter((f) => f.event === 'response.created' || f.event === 'response.in_progress' || f.event === 'response.completed');
    assert.equal(frames.length, 3);
    for (const frame of frames) assert.deepEqual(echoed(JSON.parse(frame.data).response), ECHOED, frame.event);
    const client = await serve(sse, 'text/event-stream');
    const final: any = await client.responses.stream({ model: 'm', input: 'hi' }).finalResponse();
    assert.deepEqual(echoed(final), ECHOED);
  });

  test('without a request to echo, OpenAI\'s defaults', () => {
    assert.deepEqual(echoed(responsesCodec.encodeResponse(collect(irStream()), CTX)), {
      instructions: null, metadata: {}, max_output_tokens: null, reasoning: { effort: null, summary: null }, tools: [],
      tool_choice: 'auto', text: { format: { type: 'text' } }, parallel_tool_calls: true, temperature: null, top_p: null,
      truncation: 'disabled', user: null, store: false,
    });
  });
});

describe('responses native assembler (a non-streamed answer streamed upstream)', () => {
  const OWN = new URL('../fixtures/openai-responses/', import.meta.url);
  const framesOf = (lines: string[]): SSEFrame[] =>
    lines.filter((l) => l.trim()).map((data) => ({ event: JSON.parse(data).type, data }));
  /** Every frame through a fresh assembler; the IR it gave and the body it built. */
  function assemble(frames: SSEFrame[], ctx: EncodeContext = CTX) {
    const asm = responsesCodec.assembleNative!();
    const events = [...frames.flatMap((f) => asm.push(f)), ...asm.end()];
    const res = collect(events);
    return { events, res, body: asm.response(res, { ...ctx, id: res.id }) };
  }

  test('the terminal event\'s response is the body: hosted tool items, citations, logprobs and the provider\'s ids; the IR reads usage and tier', () => {
    const lines = readFileSync(new URL('web-search-citations.chunks.txt', OWN), 'utf8').split('\n');
    const frames = framesOf(lines);
    const terminal = JSON.parse(frames.at(-1)!.data).response;
    const { res, body } = assemble(frames);
    assert.deepEqual(body, terminal);
    assert.deepEqual(body!.output.map((item: any) => item.id), ['ws_abc123', 'msg_def456']);
    assert.equal(res.id, 'resp_ws1', 'the id an issued-id record takes is the body\'s');
    assert.deepEqual(res.blocks, [{ kind: 'text', text: 'Sunny' }]);
    assert.deepEqual([res.stopReason, res.tier], ['end', 'flex']);
    assert.deepEqual(res.usage, { inputTokens: 20, cachedInputTokens: 8, cacheWriteTokens: 0, outputTokens: 10, reasoningTokens: 4 });
  });

  test('a long terminal response.incomplete: the IR reads its status, reason and usage from the members it is handed', () => {
    const instructions = 'x'.repeat(50_000);
    const msg = { id: 'msg_1', type: 'message', status: 'incomplete', role: 'assistant', content: [{ type: 'output_text', text: 'Cut', annotations: [] }] };
    const shell = { id: 'resp_long', object: 'response', model: 'gpt-5.4', instructions, tools: [{ type: 'web_search' }], store: true };
    const frames = framesOf([
      { type: 'response.created', response: { ...shell, status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { ...msg, content: [] } },
      { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Cut' },
      {
        type: 'response.incomplete',
        response: {
          ...shell, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [msg], service_tier: 'default',
          usage: { input_tokens: 9000, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 } },
        },
      },
    ].map((e) => JSON.stringify(e)));
    const { res, body } = assemble(frames);
    assert.deepEqual([res.stopReason, res.tier, res.usage.inputTokens, res.usage.outputTokens], ['max_tokens', 'standard', 9000, 3]);
    assert.deepEqual(res.blocks, [{ kind: 'text', text: 'Cut' }]);
    assert.equal(body!.status, 'incomplete');
    assert.equal(body!.instructions, instructions);
    assert.deepEqual(body!.output, [msg]);
  });

  test('a body relayed as one terminal event: the IR replays its output, the body is that response', () => {
    const done = { id: 'resp_one', object: 'response', status: 'completed', model: 'gpt-5.4', output: [
      { id: 'msg_9', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Whole', annotations: [] }] },
    ], usage: { input_tokens: 5, output_tokens: 1 } };
    const { res, body } = assemble(framesOf([JSON.stringify({ type: 'response.completed', response: done })]));
    assert.deepEqual(res.blocks, [{ kind: 'text', text: 'Whole' }]);
    assert.equal(res.usage.outputTokens, 1);
    assert.deepEqual(body, { ...done, service_tier: 'flex' }, 'the tier that served, where the provider did not say it');
  });

  test('a stream without its terminal event builds no body (the IR\'s encoding is the fallback)', () => {
    const lines = readFileSync(new URL('web-search-citations.chunks.txt', OWN), 'utf8').split('\n').filter((l) => l.trim());
    const { body } = assemble(framesOf(lines.slice(0, -1)));
    assert.equal(body, undefined);
  });
});
