// A passthrough body is the caller's own bytes: members the route does not set are forwarded as
// written (a number's spelling, an escaped character, whitespace inside a value), the gateway's
// own fields and those the route sets are cut, and the route's members are added.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vendorA } from '../../lib/providers/openai.ts';
import { vendorC } from '../../lib/providers/anthropic.ts';

const raw = Buffer.from('{"model":"gpt-5.4-mini","input":[{"role":"user","content":"caf\\u00e9 1.50"}],"temperature":1.0,'
  + '"start_within":"00h-00m-30s","stream":false,"metadata":{ "k" : "v" },"include_cost":true}');
// What validation leaves of it: the gateway's fields removed.
const checked = { model: 'gpt-5.4-mini', input: [{ role: 'user', content: 'café 1.50' }], temperature: 1, stream: false, metadata: { k: 'v' } };

test('vendor A forwards the caller\'s bytes with model, stream and the tier set by the route', async () => {
  const req = await vendorA('http://upstream').build({ wire: 'responses', body: checked, raw, model: 'gpt-5.4-mini', tier: 'flex', stream: true, credential: 'k', translated: false });
  assert.equal(req.body.toString(), '{"input":[{"role":"user","content":"caf\\u00e9 1.50"}],"temperature":1.0,"metadata":{ "k" : "v" },'
    + '"model":"gpt-5.4-mini","stream":true,"service_tier":"flex"}');
});

test('a translated body is serialized; a standard tier drops service_tier', async () => {
  const req = await vendorC('http://upstream', 4096).build({ wire: 'messages', body: { messages: [], service_tier: 'auto' }, model: 'claude-x', tier: 'standard', stream: true, credential: 'k', translated: true });
  assert.deepEqual(JSON.parse(req.body.toString()), { messages: [], model: 'claude-x', stream: true, max_tokens: 4096 });
});
