// Output is generated as the socket takes it: a reader that stops reading leaves the simulator's
// writer waiting on 'drain' (counted in stats.streams) with a small part of the answer written,
// and reading again delivers the rest, word for word what an eager generation would have sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { Rng } from '../../lib/simulator/rng.ts';
import { generateTokens, VOCABULARY } from '../../lib/simulator/words.ts';
import { directive, eventually, parseSSE, start } from './helpers.ts';

const TOKENS = 100_000;   // the directive's bound: ≈ 23 MB of Responses events

test('Rng.skip(n) lands where n draws would; generated tokens replay the same words each time they are read', () => {
  const a = new Rng(42);
  const b = new Rng(42);
  for (let i = 0; i < 1_000; i++) a.next();
  b.skip(1_000);
  assert.equal(a.next(), b.next());

  const rng = new Rng(7);
  const tokens = generateTokens(rng, 5);
  const eager = new Rng(7);
  const words = Array.from({ length: 5 }, () => eager.pick(VOCABULARY));
  assert.equal(rng.next(), eager.next(), 'the caller\'s generator moved past the five words');
  assert.deepEqual([...tokens], [...tokens]);
  assert.deepEqual([...tokens], words.map((w, i) => (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : ' ' + w) + (i === 4 ? '.' : '')));
  assert.equal(tokens.text(), [...tokens].join(''));
  assert.equal(tokens.count, 5);
});

test('a reader that stops: the writer waits on drain having written a part; reading again gets every token', async () => {
  const sim = await start();
  try {
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
      const req = request(`${sim.url}/v1/responses`, { method: 'POST', headers }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', stream: true, input: `long ${directive({ output_tokens: TOKENS })}` }));
    });
    res.pause();
    const { streams } = sim.stats;
    await eventually(() => streams.paused === 1, 10_000);
    const written = streams.bytesWritten;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(streams.bytesWritten, written, 'nothing more is generated while the reader reads nothing');
    assert.ok(streams.drainWaits >= 1);

    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.resume();
    await once(res, 'end');
    const body = Buffer.concat(chunks);
    assert.equal(streams.bytesWritten, body.length);
    assert.ok(written < body.length / 2, `${written} of ${body.length} bytes were written before the reader stopped`);
    const events = parseSSE(body.toString('utf8'));
    const deltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => JSON.parse(e.data).delta as string);
    assert.equal(deltas.length, TOKENS);
    const done = JSON.parse(events.find((e) => e.event === 'response.output_text.done')!.data);
    assert.equal(done.text, deltas.join(''));
    assert.equal(JSON.parse(events.at(-1)!.data).response.usage.output_tokens, TOKENS);
    assert.equal(streams.paused, 0);
  } finally {
    await sim.close();
  }
});
