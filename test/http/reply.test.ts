// Error envelopes (lib/http/reply.ts sendError over each format codec's errorBody), read off a real
// server: each caller format gets its own provider's envelope, the spec's code string, the status,
// and Retry-After when the error carries one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendError, asGatewayError, setRequestId } from '../../lib/http/reply.ts';
import { GatewayError, type ErrorCode } from '../../lib/errors.ts';
import type { FormatName } from '../../lib/ir.ts';

let server: Server;
let url: string;
before(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const code = u.searchParams.get('code') as ErrorCode;
    const retry = u.searchParams.get('retry');
    const err = new GatewayError(code, undefined, { param: u.searchParams.get('param') ?? undefined, retryAfterS: retry ? Number(retry) : undefined });
    const rid = u.searchParams.get('rid');
    if (u.searchParams.has('set')) setRequestId(res, 'set-id');
    sendError(res, u.searchParams.get('format') as FormatName | 'plain', err, { 'x-extra': 'kept', ...(rid ? { 'x-request-id': rid } : {}) });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const get = async (format: string, code: string, extra = '') => {
  const res = await fetch(`${url}/?format=${format}&code=${code}${extra}`);
  return { status: res.status, headers: res.headers, body: await res.json() as any };
};

test('OpenAI formats (responses, chat, plain): {error: {message, type, param, code}}', async () => {
  for (const format of ['responses', 'chat', 'plain']) {
    const r = await get(format, 'invalid_start_within', '&param=start_within');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: { message: new GatewayError('invalid_start_within').message, type: 'invalid_request_error', param: 'start_within', code: 'invalid_start_within' } });
    assert.equal(r.headers.get('x-extra'), 'kept');
    assert.equal(r.headers.get('content-type'), 'application/json');
  }
  assert.equal((await get('chat', 'invalid_api_key')).body.error.type, 'authentication_error');
  assert.equal((await get('chat', 'invalid_api_key')).body.error.param, null);
  assert.equal((await get('chat', 'model_not_found')).body.error.type, 'not_found_error');
});

test('Messages: {type: "error", error: {type, message, code}} with Anthropic\'s error types', async () => {
  const r = await get('messages', 'request_too_large');
  assert.equal(r.status, 413);
  assert.deepEqual(r.body, { type: 'error', error: { type: 'request_too_large', message: new GatewayError('request_too_large').message, code: 'request_too_large' } });
  assert.equal((await get('messages', 'invalid_api_key')).body.error.type, 'authentication_error');
  assert.equal((await get('messages', 'model_not_found')).body.error.type, 'not_found_error');
  assert.equal((await get('messages', 'invalid_json')).body.error.type, 'invalid_request_error');
});

test('Interactions and Vertex: {error: {code, message, status}} with Google status names', async () => {
  for (const format of ['interactions', 'vertex']) {
    const r = await get(format, 'invalid_api_key');
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, { error: { code: 'invalid_api_key', message: new GatewayError('invalid_api_key').message, status: 'UNAUTHENTICATED' } });
    assert.equal((await get(format, 'model_not_found')).body.error.status, 'NOT_FOUND');
    assert.equal((await get(format, 'invalid_json')).body.error.status, 'INVALID_ARGUMENT');
  }
});

test('Retry-After is sent when the error carries one, and only then', async () => {
  const limited = await get('responses', 'invalid_api_key', '&retry=7');
  assert.equal(limited.headers.get('retry-after'), '7');
  assert.equal((await get('responses', 'invalid_api_key')).headers.get('retry-after'), null);
});

test('Messages errors carry request-id (what the Anthropic SDKs read) equal to x-request-id: the one given, the one set on the answer, or a fresh one; other formats do not', async () => {
  const given = await get('messages', 'invalid_json', '&rid=req-1');
  assert.equal(given.headers.get('request-id'), 'req-1');
  assert.equal(given.headers.get('x-request-id'), 'req-1');
  const set = await get('messages', 'invalid_json', '&set=1');
  assert.equal(set.headers.get('request-id'), 'set-id');
  assert.equal(set.headers.get('x-request-id'), 'set-id');
  const fresh = await get('messages', 'method_not_allowed');
  assert.match(fresh.headers.get('request-id') ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(fresh.headers.get('x-request-id'), fresh.headers.get('request-id'));
  for (const format of ['responses', 'chat', 'interactions', 'plain']) {
    const other = await get(format, 'invalid_json', '&rid=req-2');
    assert.equal(other.headers.get('request-id'), null, format);
    assert.equal(other.headers.get('x-request-id'), 'req-2', format);
  }
});

test('shutting_down carries Retry-After: 1; unsupported_content_encoding carries Accept-Encoding: identity', async () => {
  assert.equal((await get('responses', 'shutting_down')).headers.get('retry-after'), '1');
  assert.equal((await get('responses', 'shutting_down', '&retry=5')).headers.get('retry-after'), '5');
  const coded = await get('messages', 'unsupported_content_encoding');
  assert.equal(coded.status, 415);
  assert.equal(coded.headers.get('accept-encoding'), 'identity');
  assert.equal(coded.body.error.type, 'invalid_request_error');
});

test('asGatewayError keeps a GatewayError and turns anything else into internal_error', () => {
  const e = new GatewayError('invalid_json');
  assert.equal(asGatewayError(e), e);
  const other = asGatewayError(new TypeError('boom'));
  assert.equal(other.code, 'internal_error');
  assert.equal(other.status, 500);
  assert.ok(!other.message.includes('boom'), 'the internal message is not shown to callers');
});
