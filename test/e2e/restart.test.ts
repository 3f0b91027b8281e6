// Restarts end to end (a hold is released also when the process goes away, or money stays locked):
// a gateway closed with streams in flight drains, aborts what is left and settles every hold, and a
// new gateway on the same data folder sees the same balances, spend and keys; a hold left by a
// process that died is released by the next gateway's lease sweep, while live holds are renewed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { DEFAULT_LEDGER } from '../../lib/config.ts';
import { startTestGateway, waitFor, sim, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

type Instance = TestGateway;

/** A gateway on a given data folder, which it keeps. */
const startOn = (dataDir: string, opts: Omit<TestGatewayOptions, 'dataDir'> = {}): Promise<Instance> => startTestGateway({ ...opts, dataDir });

async function newOrg(g: Instance, cash: number): Promise<{ orgId: string; key: string }> {
  const orgId = (await g.admin('POST', '/admin/v1/orgs', { name: 'restart' })).json.id as string;
  await g.admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: cash });
  const key = (await g.admin('POST', `/admin/v1/orgs/${orgId}/keys`, {})).json.key as string;
  return { orgId, key };
}

const ledgerOf = async (g: Instance, orgId: string): Promise<{ snapshot: any; entries: any[] }> => (await g.admin('GET', `/admin/v1/orgs/${orgId}/ledger`)).json;
const limitsOf = async (g: Instance, key: string): Promise<any> => (await fetch(`${g.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } })).json();
const settles = (entries: any[]): any[] => entries.filter((e) => e.kind === 'settle' || e.kind === 'settle_after_expiry');

const post = (g: Instance, key: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
  fetch(`${g.url}/v1/responses`, { method: 'POST', signal, body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', ...body }), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });

/** Reads a streamed body to its end (or until the connection is cut); returns the text. */
async function drain(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) { const r = await reader.read(); if (r.done) break; text += dec.decode(r.value, { stream: true }); }
  } catch { /* the gateway went away */ }
  return text;
}

test('close with streams in flight: drained or aborted, every hold settled; a new gateway on the same folder sees the same money', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-restart-'));
  try {
    const a = await startOn(dataDir, { drainMs: 1_500 });
    const org = await newOrg(a, 5_000_000);
    const done = await post(a, org.key, { input: `one ${sim({ output_tokens: 6 })}` });
    const doneCost = Number(done.headers.get('x-service-cost'));
    await done.arrayBuffer();

    // Three 10 s streams (aborted at the end of the drain) and one of ~0.5 s (finishes within it).
    const long = await Promise.all([1, 2, 3].map(() => post(a, org.key, { input: `long ${sim({ output_tokens: 200, tokens_per_s: 20 })}`, stream: true })));
    const short = await post(a, org.key, { input: `short ${sim({ output_tokens: 10, tokens_per_s: 20 })}`, stream: true, include_cost: true });
    assert.ok([...long, short].every((r) => r.status === 200));
    const texts = [...long, short].map(drain);
    const inflight = (await ledgerOf(a, org.orgId)).snapshot;
    assert.equal(inflight.inFlight, 4);
    assert.ok(inflight.reservedMicroUsd > 0);

    await a.gw.close();
    const [l1, l2, l3, s] = await Promise.all(texts);
    for (const text of [l1!, l2!, l3!]) {
      assert.match(text, /event: error\n/, 'an aborted stream ends with the format\'s error event, not a clean end');
      assert.doesNotMatch(text, /response\.completed/);
    }
    const completed = s!.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((e) => e.type === 'response.completed');
    assert.ok(completed, 'the short stream finished during the drain');
    const shortCost = completed.response.usage.cost.total_micro_usd as number;

    const b = await startOn(dataDir);
    try {
      const { snapshot, entries } = await ledgerOf(b, org.orgId);
      assert.equal(snapshot.reservedMicroUsd, 0, 'nothing reserved after the restart');
      assert.equal(snapshot.inFlight, 0);
      const amounts = settles(entries).map((e) => e.amount_micro_usd as number);
      assert.equal(amounts.length, 5, 'every request settled exactly once');
      assert.ok(amounts.includes(doneCost) && amounts.includes(shortCost));
      assert.ok(amounts.every((x) => x > 0), 'the aborted streams are charged their estimate');
      const total = amounts.reduce((x, y) => x + y, 0);
      assert.equal(snapshot.cashMicroUsd, 5_000_000 - total);
      assert.equal(snapshot.dailyUsedMicroUsd, total);
      assert.equal(entries.filter((e) => e.kind === 'lease_expired').length, 0);

      const l = await limitsOf(b, org.key);                      // the API key survived the restart
      assert.equal(l.managed.balance.remaining_micro_usd, 5_000_000 - total);
      assert.equal(l.managed.spend_remaining_micro_usd, 5_000_000 - total);
      assert.equal(l.managed.ramp_week, 1, 'the first top-up date is kept');
      const again = await post(b, org.key, { input: `after ${sim({ output_tokens: 2 })}` });
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('x-service-spend-remaining'), String(5_000_000 - total));
      await again.arrayBuffer();
    } finally { await b.gw.close(); }
  } finally { rmSync(dataDir, { recursive: true, force: true }); }
});

test('a hold left by a dead process counts until its lease runs out, then the next gateway\'s sweep releases it without charge', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-restart-'));
  const config = { ledger: { ...DEFAULT_LEDGER, hold_lease_ms: 1_000 } };
  try {
    const clockA = new SimulatedClock();
    clockA.set(T0);
    const a = await startOn(dataDir, { config, clock: clockA });
    const org = await newOrg(a, 1_000_000);
    const admitted = await a.gw.services.ledger.admit({ orgId: org.orgId, holdMicroUsd: 250_000, route: 'vendor_a', nowMs: T0 });
    assert.ok(admitted.ok);
    await a.gw.close();                                          // the hold was never settled: a crash

    const clockB = new SimulatedClock();
    clockB.set(T0 + 500);
    const b = await startOn(dataDir, { config, clock: clockB });
    try {
      let l = await limitsOf(b, org.key);
      assert.equal(l.managed.balance.reserved_micro_usd, 250_000, 'the dead process\'s hold still counts within its lease');
      assert.equal(l.managed.daily_spend.used_micro_usd, 250_000);

      clockB.set(T0 + 1_000);                                     // the lease runs out
      await waitFor(async () => (await b.gw.services.ledger.entries(org.orgId, 10)).some((e) => e.kind === 'lease_expired'), 'the lease sweep', 3_500);
      const { snapshot, entries } = await ledgerOf(b, org.orgId);
      const expired = entries.find((e) => e.kind === 'lease_expired');
      assert.equal(expired.hold_id, admitted.ok ? admitted.holdId : '');
      assert.equal(expired.amount_micro_usd, 250_000);
      assert.equal(snapshot.reservedMicroUsd, 0);
      assert.equal(snapshot.inFlight, 0);
      assert.equal(snapshot.cashMicroUsd, 1_000_000, 'a released hold costs nothing');
      assert.equal(snapshot.dailyUsedMicroUsd, 0);
      l = await limitsOf(b, org.key);
      assert.equal(l.managed.spend_remaining_micro_usd, 1_000_000);
    } finally { await b.gw.close(); }
  } finally { rmSync(dataDir, { recursive: true, force: true }); }
});

test('the sweep renews the holds of live requests: a stream outliving its first lease is not released, and settles normally', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-restart-'));
  try {
    const clock = new SimulatedClock();
    clock.set(T0);
    const g = await startOn(dataDir, { config: { ledger: { ...DEFAULT_LEDGER, hold_lease_ms: 2_000 } }, clock, drainMs: 100 });
    try {
      const org = await newOrg(g, 1_000_000);
      const ac = new AbortController();
      const res = await post(g, org.key, { input: `long ${sim({ output_tokens: 200, tokens_per_s: 20 })}`, stream: true }, ac.signal);
      assert.equal(res.status, 200);
      const body = drain(res);
      // 3,200 ms of lease time (lease 2,000 ms) in steps of 800 ms, a sweep (every 1 s) between steps.
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 1_050));
        clock.increment(800);
      }
      await new Promise((r) => setTimeout(r, 1_050));
      let { snapshot, entries } = await ledgerOf(g, org.orgId);
      assert.equal(snapshot.inFlight, 1, 'still held');
      assert.ok(snapshot.reservedMicroUsd > 0);
      assert.equal(entries.filter((e) => e.kind === 'lease_expired').length, 0);
      ac.abort();
      await body;
      await waitFor(() => g.gw.services.inflight.size === 0, 'the request to end');
      ({ snapshot, entries } = await ledgerOf(g, org.orgId));
      assert.equal(snapshot.reservedMicroUsd, 0);
      assert.deepEqual(entries.filter((e) => e.kind.startsWith('settle')).map((e) => e.kind), ['settle']);
    } finally { await g.gw.close(); }
  } finally { rmSync(dataDir, { recursive: true, force: true }); }
});

/** Makes `g`'s ledger answer every admission `ms` late (a busy shared ledger); resolves when the
 *  first admission has been asked. */
function delayAdmissions(g: { gw: { services: { ledger: unknown } } }, ms: number): Promise<void> {
  const ledger = g.gw.services.ledger as { admit: (...args: unknown[]) => Promise<unknown> };
  const admit = ledger.admit;
  let admitting!: () => void;
  const admitted = new Promise<void>((resolve) => { admitting = resolve; });
  ledger.admit = async (...args) => { admitting(); await new Promise((r) => setTimeout(r, ms)); return admit.apply(ledger, args); };
  return admitted;
}

test('close while a request awaits its admission: the gateway waits for it, its hold is settled before the ledger closes, and the next gateway finds nothing left', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-restart-'));
  try {
    const a = await startOn(dataDir, { drainMs: 3_000 });
    const org = await newOrg(a, 5_000_000);
    // The ledger answers this admission 300 ms late (a busy shared ledger); close() starts at once.
    const admitted = delayAdmissions(a, 300);
    const pending = post(a, org.key, { input: `late ${sim({ output_tokens: 5 })}` });
    await admitted;
    await a.close();
    const res = await pending;
    assert.equal(res.status, 200, 'served within the drain');
    await res.arrayBuffer();
    assert.ok(!a.logLines.some((l) => /settlement (failed|deferred)|not written/.test(l)), 'every settlement written before the ledger closed');

    const b = await startOn(dataDir);
    try {
      assert.ok(!b.logLines.some((l) => l.includes('hold of a previous process released at start')), 'no hold left behind');
      const { snapshot, entries } = await ledgerOf(b, org.orgId);
      assert.equal(snapshot.inFlight, 0);
      assert.equal(settles(entries).length, 1);
      assert.ok(settles(entries)[0].amount_micro_usd > 0, 'charged what it cost');
    } finally { await b.close(); }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('while draining, no connection is kept: an answer under way closes its connection when it ends, a request arriving on a kept connection gets 503 shutting_down with Retry-After and Connection: close', async () => {
  const g = await startTestGateway({ drainMs: 8_000 });
  try {
    const org = await newOrg(g, 5_000_000);
    const request = (input: string, stream: boolean): string => {
      const body = JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', stream, input });
      return `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    const open = async () => {
      const socket = connect(g.gw.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      const c = { socket, text: '', closedAt: 0 };
      socket.on('data', (d: Buffer) => { c.text += d.toString('latin1'); });
      socket.on('close', () => { c.closedAt = Date.now(); });
      return c;
    };
    // A: a stream of ~1 s, under way when the drain starts. B: one of ~4 s, which keeps the drain
    // going. C: a kept connection whose next request is half sent when the drain starts.
    const a = await open();
    const b = await open();
    const c = await open();
    a.socket.write(request(`a ${sim({ output_tokens: 20, tokens_per_s: 20 })}`, true));
    b.socket.write(request(`b ${sim({ output_tokens: 80, tokens_per_s: 20 })}`, true));
    c.socket.write(request(`c ${sim({ output_tokens: 2 })}`, false));
    await waitFor(() => a.text.includes('\r\n\r\n') && b.text.includes('\r\n\r\n') && /"status":"completed"/.test(c.text), 'the answers to start');
    const next = request(`c2 ${sim({ output_tokens: 2 })}`, false);
    c.socket.write(next.slice(0, 20));
    await new Promise((r) => setTimeout(r, 50));
    const closing = g.gw.close();
    await new Promise((r) => setTimeout(r, 100));
    c.socket.write(next.slice(20));
    await waitFor(() => c.closedAt > 0, 'the kept connection to be answered and closed', 3_000);
    const answer = c.text.slice(c.text.lastIndexOf('HTTP/1.1 '));
    assertShuttingDown(answer);

    // A's stream ends about 1 s in; its connection is closed then, not kept for keep-alive's 65 s.
    await waitFor(() => /response\.completed/.test(a.text), 'A\'s stream to end', 3_000);
    const ended = Date.now();
    await waitFor(() => a.closedAt > 0, 'A\'s connection to be closed after its answer', 1_000);
    assert.ok(a.closedAt - ended < 500, `A closed ${a.closedAt - ended} ms after its answer`);
    assert.equal(b.closedAt, 0, 'B still streams');
    await closing;
  } finally { await g.close(); }
});

/** A raw connection that keeps what it receives and when it closed. */
async function rawClient(port: number): Promise<{ socket: Socket; text: string; closedAt: number }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  const c = { socket, text: '', closedAt: 0 };
  socket.on('data', (d: Buffer) => { c.text += d.toString('latin1'); });
  socket.on('close', () => { c.closedAt = Date.now(); });
  return c;
}

const requestHead = (key: string, body: string): string =>
  `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;

/** The request summary lines a gateway wrote. */
const summaries = (g: TestGateway): any[] => g.logLines.map((l) => JSON.parse(l)).filter((l) => l.req && 'status' in l && l.endpoint);

function assertShuttingDown(text: string): void {
  assert.match(text, /^HTTP\/1\.1 503 /);
  assert.match(text, /\r\nretry-after: 1\r\n/i);
  assert.match(text, /\r\nconnection: close\r\n/i);
  assert.match(text, /"code":"shutting_down"/);
}

/** A request the drain refused before it went upstream: its connection closed after a 503
 *  shutting_down, nothing sent to the provider, one summary line saying so. */
async function assertRefusedByDrain(g: TestGateway, c: { text: string; closedAt: number }): Promise<void> {
  await waitFor(() => c.closedAt > 0, 'the connection to be closed', 1_000);
  assertShuttingDown(c.text);
  assert.equal(g.gw.simulator!.stats.requests, 0, 'nothing sent upstream');
  assert.deepEqual(summaries(g).map((s) => `${s.status} ${s.code}`), ['503 shutting_down']);
}

test('close while a body trickles in (1 byte a second): the drain does not wait for it; past drainMs it is answered 503 shutting_down and close() resolves', async () => {
  const drainMs = 500;
  const g = await startTestGateway({ drainMs });
  const org = await newOrg(g, 5_000_000);
  const c = await rawClient(g.gw.port);
  const body = JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', input: 'x'.repeat(200) });
  c.socket.write(requestHead(org.key, body));
  let sent = 0;
  const trickle = setInterval(() => { if (!c.socket.destroyed) c.socket.write(body[sent++]!); }, 1_000);
  try {
    await waitFor(() => g.gw.services.open.size === 1, 'the request to be open');
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await g.gw.close();
    const took = Date.now() - t0;
    assert.ok(took < drainMs + 1_000, `close() took ${took} ms with drainMs ${drainMs}`);
    await waitFor(() => c.closedAt > 0, 'the connection to be closed', 1_000);
    assertShuttingDown(c.text);
    assert.ok(sent < body.length, 'the body was still arriving');
    const [summary, ...more] = summaries(g);
    assert.equal(more.length, 0, 'one summary line');
    assert.equal(summary.status, 503);
    assert.equal(summary.code, 'shutting_down');
    assert.equal(g.gw.simulator!.stats.requests, 0, 'nothing sent upstream');
  } finally {
    clearInterval(trickle);
    c.socket.destroy();
    await g.close();
  }
});

test('close while a body is half sent, the rest arriving after the drain ran out: no upstream request, 503 shutting_down, close() resolves within the drain', async () => {
  const drainMs = 300;
  const g = await startTestGateway({ drainMs });
  const org = await newOrg(g, 5_000_000);
  const c = await rawClient(g.gw.port);
  const body = JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', stream: true, input: `late ${sim({ output_tokens: 300, tokens_per_s: 20 })}` });
  try {
    c.socket.write(requestHead(org.key, body) + body.slice(0, 20));
    await waitFor(() => g.gw.services.open.size === 1, 'the request to be open');
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    let closedAfter = 0;
    const closing = g.gw.close().then(() => { closedAfter = Date.now() - t0; });
    await new Promise((r) => setTimeout(r, drainMs + 300));
    if (!c.socket.destroyed) c.socket.write(body.slice(20));   // the rest, after the drain ran out
    await closing;
    assert.ok(closedAfter < drainMs + 1_000, `close() took ${closedAfter} ms with drainMs ${drainMs}`);
    await assertRefusedByDrain(g, c);
  } finally {
    c.socket.destroy();
    await g.close();
  }
});

test('close while a request awaits an admission that outlasts the drain: refused 503 shutting_down before anything goes upstream, its hold released', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-restart-'));
  try {
    const drainMs = 300;
    const a = await startOn(dataDir, { drainMs });
    const org = await newOrg(a, 5_000_000);
    // The ledger answers this admission 800 ms late, past the drain's end.
    const admitted = delayAdmissions(a, 800);
    const pending = post(a, org.key, { input: `late ${sim({ output_tokens: 5 })}` });
    await admitted;
    const t0 = Date.now();
    await a.close();
    assert.ok(Date.now() - t0 < 800 + 1_000, 'close() waited only for the admission under way');
    const res = await pending;
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.equal(((await res.json()) as any).error.code, 'shutting_down');
    assert.equal(a.gw.simulator!.stats.requests, 0, 'nothing sent upstream');
    assert.deepEqual(summaries(a).map((s) => `${s.status} ${s.code}`), ['503 shutting_down']);

    const b = await startOn(dataDir);
    try {
      assert.ok(!b.logLines.some((l) => l.includes('hold of a previous process released at start')), 'no hold left behind');
      const { snapshot } = await ledgerOf(b, org.orgId);
      assert.equal(snapshot.inFlight, 0);
      assert.equal(snapshot.reservedMicroUsd, 0);
      assert.equal(snapshot.cashMicroUsd, 5_000_000, 'a refused request costs nothing');
    } finally { await b.close(); }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('close while a request awaits its key past the drain, its body still to come: refused 503 shutting_down without waiting for the body', async () => {
  const drainMs = 300;
  const g = await startTestGateway({ drainMs });
  const org = await newOrg(g, 5_000_000);
  // The key is looked up 800 ms late (a slow store), past the drain's end; no body byte is sent.
  const orgs = g.gw.services.orgs as unknown as { findKey: (...args: unknown[]) => Promise<unknown> };
  const findKey = orgs.findKey;
  let looking!: () => void;
  const lookedUp = new Promise<void>((resolve) => { looking = resolve; });
  orgs.findKey = async (...args) => { looking(); await new Promise((r) => setTimeout(r, 800)); return findKey.apply(orgs, args); };
  const c = await rawClient(g.gw.port);
  const body = JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', input: `x ${sim({ output_tokens: 5 })}` });
  try {
    c.socket.write(requestHead(org.key, body));
    await lookedUp;
    const t0 = Date.now();
    await g.gw.close();
    const took = Date.now() - t0;
    assert.ok(took < 800 + 1_000, `close() took ${took} ms with drainMs ${drainMs}`);
    await assertRefusedByDrain(g, c);
  } finally {
    c.socket.destroy();
    await g.close();
  }
});
