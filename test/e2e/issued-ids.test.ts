// On a managed route the gateway records which organization was handed each provider-held state
// id (lib/store/state-owners.ts) before the bytes carrying it are written: a stream's first event
// (Responses' response.created, Interactions' interaction.created). A stream that hands the id out
// and then does not end cleanly (the provider resets it, fails it inline, or the caller goes away)
// has still handed it out, and the provider still stored it: that org's follow-up naming the id is
// served, pinned to the issuing route, while any other org's is refused as an id never issued.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let owner: { key: string };
let other: { key: string };
let openai: OpenAI;
let genai: any;

before(async () => {
  t = await startTestGateway();
  owner = await t.newOrg({ balance: 100_000_000 });
  other = await t.newOrg({ balance: 100_000_000 });
  openai = new OpenAI({ apiKey: owner.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${owner.key}` } } });
});
after(() => t.close());

/** How the stream that hands the id out ends: never with its final event. */
const SHAPES = [
  { name: 'a reset stream', directive: { output_tokens: 50, reset_after_tokens: 5 }, abort: false },
  { name: 'an inline provider error', directive: { output_tokens: 50, error_after_tokens: 5 }, abort: false },
  { name: 'a caller that went away after the first event', directive: { output_tokens: 400, tokens_per_s: 20 }, abort: true },
];

/** Each stateful API: its first (streamed) request through its official SDK, yielding events, and
 *  how a follow-up names the id it handed out. */
const APIS = [
  {
    api: 'Responses', path: '/v1/responses', route: 'vendor_a', final: 'response.completed',
    stream: (input: string, signal: AbortSignal) => openai.responses.create({ model: 'gpt-5.4', input, stream: true, start_within: 'now' } as any, { signal }) as unknown as Promise<AsyncIterable<any>>,
    idOf: (ev: any): string | undefined => (ev.type === 'response.created' ? ev.response.id : undefined),
    eventOf: (ev: any): string => ev.type,
    followUp: (id: string) => ({ model: 'gpt-5.4', input: 'Go on.', previous_response_id: id, start_within: 'now' }),
  },
  {
    api: 'Interactions', path: '/v1/interactions', route: 'vendor_b', final: 'interaction.completed',
    stream: (input: string, signal: AbortSignal) => genai.interactions.create({ model: 'gemini-3.5-flash', input, stream: true, provider: ['vendor_b'], start_within: 'now' }, { maxRetries: 0, signal }) as Promise<AsyncIterable<any>>,
    idOf: (ev: any): string | undefined => (ev.event_type === 'interaction.created' ? ev.interaction.id : undefined),
    eventOf: (ev: any): string => ev.event_type,
    followUp: (id: string) => ({ model: 'gemini-3.5-flash', input: 'Go on.', previous_interaction_id: id, start_within: 'now' }),
  },
];

const post = (key: string, path: string, body: unknown): Promise<Response> => fetch(t.url + path, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
});

for (const a of APIS) {
  for (const shape of SHAPES) {
    test(`${a.api}, managed: an id handed out by ${shape.name} is the org's own (its follow-up served, pinned), no other org's`, async () => {
      const ac = new AbortController();
      let id: string | undefined;
      const events: string[] = [];
      try {
        for await (const ev of await a.stream(`Count. ${sim(shape.directive)}`, ac.signal)) {
          events.push(a.eventOf(ev));
          id ??= a.idOf(ev);
          if (id && shape.abort) ac.abort();
        }
      } catch { /* the broken stream's error, or the caller's own abort */ }
      assert.ok(id, `no id handed out: ${events.join(',')}`);
      assert.ok(!events.includes(a.final), `the stream ended cleanly: ${events.join(',')}`);
      // The first request has ended in the gateway (the abort case included) before the follow-ups.
      await waitFor(() => t.gw.services.inflight.size === 0, 'the first request to end');

      const own = await post(owner.key, a.path, a.followUp(id));
      assert.equal(own.status, 200, await own.clone().text());
      assert.equal(own.headers.get('x-service-routing-reason'), 'pinned');
      assert.equal(own.headers.get('x-service-served-provider'), a.route);
      await own.text();

      const foreign = await post(other.key, a.path, a.followUp(id));
      assert.equal(foreign.status, 404);
      assert.equal(((await foreign.json()) as any).error.code, 'provider_rejected');
    });
  }
}

test('Responses, managed: the id is the org\'s own from the first event on, while the stream that handed it out still runs', async () => {
  const ac = new AbortController();
  const stream = await openai.responses.create({ model: 'gpt-5.4', input: `Count. ${sim({ output_tokens: 400, tokens_per_s: 20 })}`, stream: true, start_within: 'now' } as any, { signal: ac.signal }) as unknown as AsyncIterable<any>;
  try {
    for await (const ev of stream) {
      if (ev.type !== 'response.created') continue;
      const own = await post(owner.key, '/v1/responses', { model: 'gpt-5.4', input: 'Go on.', previous_response_id: ev.response.id, start_within: 'now' });
      assert.equal(own.status, 200, await own.clone().text());
      assert.equal(own.headers.get('x-service-routing-reason'), 'pinned');
      await own.text();
      break;
    }
  } finally { ac.abort(); }
  await waitFor(() => t.gw.services.inflight.size === 0, 'the stream to end');
});
