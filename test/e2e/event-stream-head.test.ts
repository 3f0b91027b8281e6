// Every event stream the gateway answers, in each caller format, carries the head a reverse proxy
// needs to pass it on as it is written: nginx buffers an upstream answer unless told not to
// (X-Accel-Buffering: no), and a stream then reached the caller in 4–8 KB bursts (README "Behind
// nginx"). The stream held open before commit is checked in flex-race.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let key: string;
before(async () => {
  t = await startTestGateway();
  key = (await t.newOrg({ ownKeys: ['vendor_a', 'vendor_b', 'vendor_c'] })).key;
});
after(() => t.close());

const calls: Array<[string, string, Record<string, unknown>]> = [
  ['responses', '/v1/responses', { model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 3 })}` }],
  ['chat', '/v1/chat/completions', { model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `hi ${sim({ output_tokens: 3 })}` }] }],
  ['messages', '/v1/messages', { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: `hi ${sim({ output_tokens: 3 })}` }] }],
  ['interactions', '/v1/interactions', { model: 'gemini-3.5-flash', input: `hi ${sim({ output_tokens: 3 })}` }],
];

for (const [format, path, body] of calls) {
  test(`${format}: the stream head says text/event-stream, no-cache, x-accel-buffering: no`, async () => {
    const res = await fetch(t.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true, start_within: 'now' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    assert.ok((await res.text()).length > 0);
  });
}
