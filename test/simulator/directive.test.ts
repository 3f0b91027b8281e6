// Parsing `#sim{...}`: balanced braces (string-aware), typed keys, clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDirective } from '../../lib/simulator/directive.ts';

test('no directive → undefined; nested JSON and braces inside strings', () => {
  assert.deepEqual(parseDirective('plain text'), { ok: true, directive: undefined });
  const r = parseDirective('before #sim{"id":"a}{b","fail":[429,503],"retry_after_s":1} after }');
  assert.deepEqual(r, { ok: true, directive: { id: 'a}{b', fail: [429, 503], retry_after_s: 1 } });
});

test('every documented key', () => {
  const d = {
    flex_start_ms: 10, flex_refuse: true, standard_start_ms: 5, output_tokens: 3, tokens_per_s: 50,
    fail: [500], retry_after_s: 2, reset_after_tokens: 4, error_after_tokens: 6, id: 'x', tool_call: 'f',
    replay: 'a/b.chunks.txt', reasoning_tokens: 7, tool_args: { cmd: 'echo hi', n: 2 },
  };
  assert.deepEqual(parseDirective(`#sim${JSON.stringify(d)}`), { ok: true, directive: d });
});

test('errors: unbalanced, invalid JSON, wrong types', () => {
  for (const text of ['#sim{"a":1', '#sim{oops}', '#sim{"output_tokens":"3"}', '#sim{"fail":[200]}', '#sim{"id":3}', '#sim{"tool_args":[1]}']) {
    const r = parseDirective(text);
    assert.equal(r.ok, false, text);
  }
});

test('a directive quoted inside a JSON string (a client quoting the user text) is read unescaped', () => {
  const quoted = JSON.stringify(`Say hello #sim${JSON.stringify({ output_tokens: 12, tool_args: { cmd: 'echo "x"' } })}`);
  assert.deepEqual(parseDirective(quoted), { ok: true, directive: { output_tokens: 12, tool_args: { cmd: 'echo "x"' } } });
});
