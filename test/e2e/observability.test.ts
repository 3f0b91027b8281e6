// What operators read about a request: a drain that runs out answers what it stops as the gateway's
// own shutting_down (503 with Retry-After: 1, a stream's error event), never as a provider failure,
// and logs and counts it so; gateway_retries_total and gateway_fallbacks_total count every retry
// and fallback, of a request that then failed everywhere too, and its summary line names the
// fallback its answer's header names; an error line about a request carries its id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; text: string }

/** A POST whose answer is read to its end, however it ends (a stream cut by the drain included);
 *  `onData` hears each chunk. */
function post(t: TestGateway, path: string, key: string, body: unknown, onData?: (text: string) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(t.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; onData?.(text); });
      const done = (): void => resolve({ status: res.statusCode!, headers: res.headers, text });
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The request's one summary line (`request`, `refused` or `client_closed_request`). */
function summaryOf(t: TestGateway, id: string): Record<string, unknown> {
  const lines = t.logLines.map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.req === id && (l.msg === 'request' || l.msg === 'refused' || l.msg === 'client_closed_request'));
  assert.equal(lines.length, 1, `one summary line for ${id}`);
  return lines[0]!;
}

const metric = async (t: TestGateway, name: string): Promise<number> => {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
};

/** The SSE error event a stream ended with: its code (every format's error event names it). */
const lastErrorCode = (text: string): string | undefined => [...text.matchAll(/"code":"([a-z_]+)"/g)].at(-1)?.[1];

test('a drain that runs out answers what it stops as shutting_down: 503 with Retry-After: 1 for a request still waiting to start, streamed or not; a stream under way ends with a shutting_down error event; each summary line and count says so', async () => {
  const t = await startTestGateway({ drainMs: 300 });
  try {
    const org = await t.newOrg({ ownKeys: ['vendor_a'] });
    const started = { responses: false, messages: false };
    const long = sim({ output_tokens: 400, tokens_per_s: 20 });
    // Streams under way: a passthrough (Responses on vendor A) and a translated one (Messages on a GPT model).
    const streaming = post(t, '/v1/responses', org.key, { model: 'gpt-5.4-mini', input: long, start_within: 'now', stream: true },
      (s) => { started.responses ||= s.includes('output_text.delta'); });
    const translated = post(t, '/v1/messages', org.key, {
      model: 'gpt-5.4-mini', max_tokens: 2_000, start_within: 'now', stream: true, messages: [{ role: 'user', content: long }],
    }, (s) => { started.messages ||= s.includes('content_block_delta'); });
    // Flex races that cannot start before the drain runs out, non-streamed and streamed.
    const never = sim({ flex_start_ms: 60_000, standard_start_ms: 60_000 });
    const waiting = post(t, '/v1/responses', org.key, { model: 'gpt-5.4', input: never, start_within: '00h-00m-20s' });
    const waitingStream = post(t, '/v1/responses', org.key, { model: 'gpt-5.4', input: never, start_within: '00h-00m-20s', stream: true });
    await waitFor(() => started.responses && started.messages && [...t.gw.services.inflight].length === 4, 'two streams under way, two races waiting');
    const before503 = await metric(t, 'gateway_requests_total\\{endpoint="responses",status="503"\\}');

    await t.gw.close();
    for (const [name, answer] of [['non-streamed', await waiting], ['streamed', await waitingStream]] as const) {
      assert.equal(answer.status, 503, `${name}: ${answer.text}`);
      assert.equal(JSON.parse(answer.text).error.code, 'shutting_down', name);
      assert.equal(answer.headers['retry-after'], '1', name);
      const line = summaryOf(t, answer.headers['x-request-id'] as string);
      assert.equal(line.status, 503, name);
      assert.equal(line.code, 'shutting_down', name);
    }
    for (const [name, answer] of [['passthrough', await streaming], ['translated', await translated]] as const) {
      assert.equal(answer.status, 200, name);
      assert.equal(lastErrorCode(answer.text), 'shutting_down', `${name}: ${answer.text.slice(-300)}`);
      assert.doesNotMatch(answer.text, /provider_error/, name);
      assert.equal(summaryOf(t, answer.headers['x-request-id'] as string).code, 'shutting_down', name);
    }
    // The registry outlives the server: the two refusals were counted as 503s.
    const text = await t.gw.services.metrics.registry.metrics();
    const after503 = Number(/^gateway_requests_total\{endpoint="responses",status="503"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    assert.equal(after503 - before503, 2);
    assert.doesNotMatch(text, /gateway_requests_total\{endpoint="responses",status="502"\}/);
  } finally { await t.close(); }
});

test('a drain that runs out while a stream waits with its head already sent ends it with a shutting_down error event', async () => {
  const t = await startTestGateway({ drainMs: 300, config: { timeouts: { stream_head_ms: 100 } } as never });
  try {
    const org = await t.newOrg({ ownKeys: ['vendor_a'] });
    let head = false;
    const waiting = post(t, '/v1/responses', org.key, {
      model: 'gpt-5.4', input: sim({ flex_start_ms: 60_000, standard_start_ms: 60_000 }), start_within: '00h-00m-20s', stream: true,
    }, () => { head = true; });
    await waitFor(() => head, 'the early stream head');
    await t.gw.close();
    const answer = await waiting;
    assert.equal(answer.status, 200);
    assert.match(answer.text, /^: waiting for the provider/);
    assert.equal(lastErrorCode(answer.text), 'shutting_down', answer.text);
    assert.equal(summaryOf(t, answer.headers['x-request-id'] as string).code, 'shutting_down');
  } finally { await t.close(); }
});

test('gateway_retries_total and gateway_fallbacks_total count every retry and fallback, of a request that then failed everywhere too; its summary line says fallback, as its header does', async () => {
  const t = await startTestGateway();
  try {
    const org = await t.newOrg({ ownKeys: ['vendor_c', 'cloud_b'] });
    const send = (id: string, fail: number[]) => post(t, '/v1/messages', org.key, {
      model: 'claude-sonnet-4-6', max_tokens: 20, start_within: 'now', provider: ['vendor_c', 'cloud_b'],
      retry: { count: 1, backoff: 'linear', jitter: false }, messages: [{ role: 'user', content: sim({ fail, id }) }],
    });
    for (const [name, fail, status] of [
      ['fails on every route', [503, 503, 503, 503, 503, 503], 502],
      ['commits on the fallback\'s retry', [503, 503, 503], 200],
    ] as const) {
      const [retries, fallbacks] = [await metric(t, 'gateway_retries_total'), await metric(t, 'gateway_fallbacks_total')];
      const answer = await send(name, [...fail]);
      assert.equal(answer.status, status, `${name}: ${answer.text}`);
      assert.equal(answer.headers['x-service-retries'], '2', name);
      assert.equal(answer.headers['x-service-routing-reason'], 'fallback', name);
      // Counted once, when the request ended (a commit's setImmediate has long run by the scrape).
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await metric(t, 'gateway_retries_total') - retries, 2, `${name}: retries`);
      assert.equal(await metric(t, 'gateway_fallbacks_total') - fallbacks, 1, `${name}: fallbacks`);
      const line = summaryOf(t, answer.headers['x-request-id'] as string);
      assert.equal(line.reason, 'fallback', name);
      assert.equal(answer.headers['x-service-flex-reason'], 'fallback', name);
      assert.deepEqual([line.retries, line.fallbacks], [2, 1], name);
    }
  } finally { await t.close(); }
});

test('an error line about a request carries its id: the ledger unreadable at admission, the state owners unreadable', async () => {
  const t = await startTestGateway();
  try {
    const org = await t.newOrg({ balance: 5_000_000 });
    const errorLine = (msg: string): Record<string, unknown> => {
      const lines = t.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);
      assert.equal(lines.length, 1, msg);
      return lines[0]!;
    };
    const ledger = t.gw.services.ledger;
    const admit = ledger.admit;
    ledger.admit = async () => { throw new Error('SQLITE_BUSY: database is locked'); };
    try {
      const answer = await post(t, '/v1/responses', org.key, { model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' });
      assert.equal(answer.status, 503);
      assert.equal(errorLine('ledger unreadable at admission').req, answer.headers['x-request-id']);
    } finally { ledger.admit = admit; }

    const owners = t.gw.services.store.stateOwners;
    const ownerOf = owners.ownerOf;
    owners.ownerOf = async () => { throw new Error('SQLITE_BUSY: database is locked'); };
    try {
      const answer = await post(t, '/v1/responses', org.key, { model: 'gpt-5.4-mini', input: 'hi', start_within: 'now', previous_response_id: 'resp_abc' });
      assert.equal(answer.status, 503, answer.text);
      assert.equal(errorLine('state owners unreadable').req, answer.headers['x-request-id']);
    } finally { owners.ownerOf = ownerOf; }
  } finally { await t.close(); }
});
