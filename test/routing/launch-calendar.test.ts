// The hedges a process has planned, by time: hedges that fall on one instant are spread over the
// slots before it, at the process's measured cost per request; hedges that do not crowd keep
// their point (lib/routing/launch-calendar.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LaunchCalendar, LoopCost, SLOT_MS } from '../../lib/routing/launch-calendar.ts';
import { FlexScheduler, DEFAULT_FLEX_POLICY } from '../../lib/routing/flex-policy.ts';

/** A calendar whose slots hold `room` hedges (0.8 of a 50 ms slot, a hedge costing two requests). */
const calendar = (room: number) => new LaunchCalendar({ ms: () => (SLOT_MS * 0.8) / room / 2 });

test('a slot takes the launches the process can do in it; the rest go to the latest earlier slots with room', () => {
  const c = calendar(3);
  const at = 100_000 + 20;               // slot 2000, 20 ms into it
  const booked = Array.from({ length: 7 }, () => c.book(at, 90_000));
  assert.deepEqual(booked.map((b) => b.slot), [2000, 2000, 2000, 1999, 1999, 1999, 1998]);
  // Those in the hedge's own slot keep its point; earlier ones launch at the end of their slot.
  assert.deepEqual(booked.map((b) => b.at), [at, at, at, 99_999, 99_999, 99_999, 99_949]);
  assert.equal(c.size, 7);
  // A released launch frees its room: the next hedge at that point takes it.
  c.release(booked[0]!.slot);
  assert.deepEqual(c.book(at, 90_000), { slot: 2000, at });
});

test('never before the current slot: when every slot from now is full, the hedge launches now', () => {
  const c = calendar(1);
  const now = 100_010;
  assert.equal(c.book(100_120, now).at, 100_120);
  assert.equal(c.book(100_120, now).at, 100_099);
  assert.equal(c.book(100_120, now).at, 100_049);
  assert.deepEqual(c.book(100_120, now), { slot: 2000, at: now }, 'now\'s slot is full too: launch at once');
});

test('the cost per request is the event loop\'s busy time over a window of one to five seconds, per request sent', () => {
  let at = 0, active = 0, sent = 0;
  const cost = new LoopCost(() => sent, 0.5, { now: () => at, active: () => active });
  assert.equal(cost.ms(), 0.5, 'the prior, before any window');
  at = 1_000; active = 300; sent = 10;
  assert.equal(cost.ms(), 0.5, 'ten requests in the window: the idle process, not a request\'s cost');
  at = 1_500; active = 400; sent = 100;
  assert.equal(cost.ms(), 0.5, 'half a second since the last window: not measured yet');
  at = 2_100; active = 480; sent = 250;
  assert.equal(cost.ms(), 0.75, '180 ms busy over 240 requests');
  assert.equal(cost.lastMs, 0.75, 'read without closing a window');
  // The calendar's room follows it: 0.8 of a 50 ms slot, a hedge costing two requests.
  assert.equal(new LaunchCalendar(cost).room(), Math.floor(40 / 1.5));
  // After a quiet spell the first hedge closes a long window: its timers and flushes over the few
  // requests it saw are not a request's cost, and the estimate stands.
  at = 50_000; active = 600; sent = 280;
  assert.equal(cost.ms(), 0.75);
  // A minute without a window that measured: the prior again.
  at = 70_000; active = 700; sent = 285;
  assert.equal(cost.ms(), 0.5);
  // Bounded: at most 5 ms, at least 0.05.
  at = 71_500; active = 10_700; sent = 305;
  assert.equal(cost.ms(), 5);
  at = 73_000; active = 10_700; sent = 100_305;
  assert.equal(cost.ms(), 0.05);
});

test('a booking of a slot already forgotten is not given back twice (a clock set back)', () => {
  const c = calendar(1);
  const early = c.book(100_020, 100_000);            // slot 2000
  c.book(100_520, 100_500);                          // now at slot 2010: slots before 2009 forgotten
  assert.equal(c.size, 1);
  const again = c.book(100_020, 99_990);             // the clock went back: slot 2000 booked anew
  assert.equal(again.slot, early.slot);
  c.release(early.slot);                             // the first booking's owner gives its back late
  assert.equal(c.size, 2, 'the other request\'s booking of that slot stays');
});

test('hedges of a burst that arrived together are spread before their point; each ends its booking', () => {
  let now = 1_000_000;
  const bounds = { initial_lead_ms: 2_000, min_lead_ms: 200, max_lead_ms: 60_000 };
  const c = calendar(10);
  const advanced: number[] = [];
  const s = new FlexScheduler(DEFAULT_FLEX_POLICY, bounds, () => now, c, (_route, _model, ms) => advanced.push(ms));
  const deadline = now + 30_000, hedgeAt = deadline - 2_000;
  const advisors = Array.from({ length: 200 }, () => s.advisor('vendor_a', 'gpt-5.4', now, deadline));
  // Each request asks at arrival, then again at each wake-up it is given, in time order, until it
  // is told to launch (as the machines' timers would run them).
  const launches: number[] = [];
  let due = advisors.map((a) => ({ a, at: a.standardAt(now).at }));
  while (due.length) {
    due.sort((x, y) => x.at - y.at);
    const next = due.shift()!;
    now = next.at;
    const d = next.a.standardAt(now);
    if (d.at <= now) launches.push(now); else due.push({ a: next.a, at: d.at });
  }
  assert.equal(launches.length, 200);
  assert.ok(launches.every((t) => t <= hedgeAt), 'none later than the hedge point');
  assert.equal(launches.filter((t) => t === hedgeAt).length, 10, 'the hedge point\'s own slot: as many as it holds');
  const perSlot = new Map<number, number>();
  for (const t of launches) perSlot.set(Math.floor(t / SLOT_MS), (perSlot.get(Math.floor(t / SLOT_MS)) ?? 0) + 1);
  assert.deepEqual([...new Set(perSlot.values())], [10], 'twenty slots of ten: none holds more than its room');
  assert.equal(perSlot.size, 20);
  // Each hedge launched before its point is heard once, with how much earlier (the metrics).
  assert.equal(advanced.length, 190, 'all but the ten of the hedge point\'s own slot');
  assert.deepEqual(advanced.map((ms) => ms).sort((a, b) => b - a).slice(0, 1), [hedgeAt - launches.reduce((a, b) => Math.min(a, b))]);
  // A request told to launch holds no booking; one that ends while waiting gives its booking back.
  assert.equal(c.size, 0);
  now = 1_000_000;
  const waiting = s.advisor('vendor_a', 'gpt-5.4', now, deadline);
  assert.ok(waiting.standardAt(now).at > now);
  assert.equal(c.size, 1);
  waiting.done!();
  assert.equal(c.size, 0);
});

test('without a calendar every hedge keeps its own point', () => {
  let now = 1_000_000;
  const s = new FlexScheduler(DEFAULT_FLEX_POLICY, { initial_lead_ms: 2_000, min_lead_ms: 200, max_lead_ms: 60_000 }, () => now);
  const a = s.advisor('vendor_a', 'gpt-5.4', now, now + 30_000);
  const b = s.advisor('vendor_a', 'gpt-5.4', now, now + 30_000);
  now += 27_500;
  assert.equal(a.standardAt(now).at, 1_028_000);
  assert.equal(b.standardAt(now).at, 1_028_000);
});
