// Catalog prices: Anthropic's 1-hour cache writes at their own rate, Gemini Pro's long-context
// tier (the whole request at the higher rates above 200k input tokens), and a price that changes
// on a date (a request pays the prices in force when it started). References: wire-formats §7.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog, costOf, DEFAULT_MODELS, pricesAt, type ModelEntry } from '../../lib/catalog/catalog.ts';
import { loadConfig } from '../../lib/config.ts';
import { zeroUsage, type IRUsage } from '../../lib/ir.ts';
import { recordOf } from '../../lib/usage/record.ts';

const catalog = new Catalog(DEFAULT_MODELS);
const model = (id: string): ModelEntry => catalog.get(id)!;
const usage = (u: Partial<IRUsage>): IRUsage => ({ ...zeroUsage(), ...u });
/** ⌈tokens × USD per 1M⌉ in micro-USD, the way costOf rounds each part. */
const part = (tokens: number, usdPerM: number): number => Math.ceil(tokens * usdPerM);

// ── Anthropic 1-hour cache writes ──────────────────────────────────────────────────────────────

test('every Anthropic-family model, on vendor C and on Bedrock alike, prices 5-minute and 1-hour cache writes apart', () => {
  // Reference: 5m write / 1h write, USD per 1M.
  const writes: Record<string, [number, number]> = {
    'claude-opus-4-8': [6.25, 10], 'claude-sonnet-4-6': [3.75, 6], 'claude-haiku-4-5': [1.25, 2],
  };
  const family = DEFAULT_MODELS.filter((m) => m.family === 'vendor_c');
  assert.deepEqual(family.map((m) => m.id).sort(), Object.keys(writes).sort());
  for (const m of family) {
    assert.deepEqual(m.routes, ['vendor_c', 'cloud_b'], `${m.id}: one entry prices both routes`);
    const price = catalog.priceOf(m, 'standard', Date.UTC(2026, 10, 1));
    assert.equal(price.cache_write, writes[m.id]![0] * 1e6, m.id);
    assert.equal(price.cache_write_1h, writes[m.id]![1] * 1e6, m.id);
  }
});

test('costOf: the 1-hour part of the cache writes pays cache_write_1h, the rest cache_write', () => {
  const sonnet = catalog.priceOf(model('claude-sonnet-4-6'), 'standard', Date.UTC(2026, 10, 1));
  // 12 uncached + 40,000 5-minute writes + 60,000 1-hour writes, 29 out.
  const u = usage({ inputTokens: 100_012, cacheWriteTokens: 100_000, cacheWrite1hTokens: 60_000, outputTokens: 29 });
  assert.equal(costOf(sonnet, u), part(12, 3) + part(40_000, 3.75) + part(60_000, 6) + part(29, 15));
  // All of them 1-hour: the reviewer's fixture (anthropic-1h.json).
  const all1h = usage({ inputTokens: 100_012, cacheWriteTokens: 100_000, cacheWrite1hTokens: 100_000, outputTokens: 29 });
  assert.equal(costOf(sonnet, all1h), 600_471);
  // No 1-hour count (every other wire): all writes at the 5-minute rate, as before.
  assert.equal(costOf(sonnet, usage({ inputTokens: 100_012, cacheWriteTokens: 100_000, outputTokens: 29 })), 375_471);
  // A 1-hour count above the total (a malformed wire) is capped by the total.
  assert.equal(costOf(sonnet, usage({ inputTokens: 100_012, cacheWriteTokens: 100_000, cacheWrite1hTokens: 200_000, outputTokens: 29 })), 600_471);
});

test('costOf: a price without cache_write_1h charges 1-hour writes at cache_write, and without cache_write at input', () => {
  const u = usage({ inputTokens: 1_000, cacheWriteTokens: 1_000, cacheWrite1hTokens: 1_000 });
  assert.equal(costOf({ input: 2_000_000, cached_input: 0, cache_write: 3_000_000, output: 0 }, u), 3_000);
  assert.equal(costOf({ input: 2_000_000, cached_input: 0, output: 0 }, u), 2_000);
});

// ── Gemini 3.1 Pro long context ─────────────────────────────────────────────────────────────────

test('gemini-3.1-pro-preview: a prompt above 200k tokens bills the whole request at 4.00 / 18.00 (flex 2.00 / 9.00), one at 200k the ≤200k price', () => {
  const pro = model('gemini-3.1-pro-preview');
  const at = Date.UTC(2026, 10, 1);
  const std = catalog.priceOf(pro, 'standard', at);
  const flex = catalog.priceOf(pro, 'flex', at);
  const cost = (input: number, cached: number, output: number, price = std) =>
    costOf(price, usage({ inputTokens: input, cachedInputTokens: cached, outputTokens: output, reasoningTokens: 0 }));
  // The reviewer's fixture (gemini-long.json): 250,000 in, 51 out (19 + 32 thought).
  assert.equal(cost(250_000, 0, 51), part(250_000, 4) + part(51, 18));
  assert.equal(cost(250_000, 0, 51), 1_000_918);
  assert.equal(cost(200_000, 0, 51), part(200_000, 2) + part(51, 12), 'exactly 200k is ≤200k');
  assert.equal(cost(200_001, 0, 51), part(200_001, 4) + part(51, 18), 'one token over: every token at the long rates');
  // Cached input keeps the model's ratio (10 % of input): 0.40 long, 0.20 below.
  assert.equal(cost(250_000, 100_000, 0), part(150_000, 4) + part(100_000, 0.4));
  assert.equal(cost(150_000, 100_000, 0), part(50_000, 2) + part(100_000, 0.2));
  // Flex is half, long context included.
  assert.equal(cost(250_000, 100_000, 51, flex), part(150_000, 2) + part(100_000, 0.2) + part(51, 9));
  assert.equal(cost(150_000, 0, 51, flex), part(150_000, 1) + part(51, 6));
});

test('the hold estimate follows the same rule: a 250k-token input estimate is held at the long-context price', () => {
  // The pipeline's admission estimate is costOf(standard price at t0, {input estimate, output cap}).
  const std = catalog.priceOf(model('gemini-3.1-pro-preview'), 'standard', Date.UTC(2026, 10, 1));
  const hold = (inputTokens: number) => costOf(std, usage({ inputTokens, outputTokens: 4_096 }));
  assert.equal(hold(250_000), part(250_000, 4) + part(4_096, 18));
  assert.equal(hold(200_000), part(200_000, 2) + part(4_096, 12));
});

test('no other model has a long-context tier (the reference gives no >200k price for them)', () => {
  const withTier = DEFAULT_MODELS.filter((m) => m.prices.standard.long_context || m.prices.flex?.long_context).map((m) => m.id);
  assert.deepEqual(withTier, ['gemini-3.1-pro-preview']);
});

// ── prices that change on a date ────────────────────────────────────────────────────────────────

test('gemini-3.8-flash: the promo price through 2026-12-31, 1.50 / 7.50 (flex 0.75 / 3.75) from 2027-01-01T00:00:00Z', () => {
  const flash = model('gemini-3.8-flash');
  const lastPromoMs = Date.parse('2026-12-31T23:59:59.999Z');
  const newPriceMs = Date.parse('2027-01-01T00:00:00Z');
  const u = usage({ inputTokens: 1_000_000, cachedInputTokens: 100_000, outputTokens: 1_000_000 });
  const cost = (tier: 'standard' | 'flex', at: number) => costOf(catalog.priceOf(flash, tier, at), u);
  assert.equal(cost('standard', lastPromoMs), part(900_000, 0.75) + part(100_000, 0.075) + part(1_000_000, 3.75));
  assert.equal(cost('flex', lastPromoMs), part(900_000, 0.375) + part(100_000, 0.0375) + part(1_000_000, 1.875));
  assert.equal(cost('standard', newPriceMs), part(900_000, 1.5) + part(100_000, 0.15) + part(1_000_000, 7.5));
  assert.equal(cost('flex', newPriceMs), part(900_000, 0.75) + part(100_000, 0.075) + part(1_000_000, 3.75));
  assert.equal(pricesAt(flash, Date.UTC(2030, 0, 1)), pricesAt(flash, newPriceMs), 'the last change stays in force');
  assert.equal(pricesAt(flash, Date.UTC(2026, 0, 1)), flash.prices);
});

test('price changes: several in order, the last that started wins; a model without changes always has its own prices', () => {
  const rates = (input: number) => ({ input, cached_input: 0, output: 0 });
  const entry: ModelEntry = {
    id: 'm', family: 'vendor_a', routes: ['vendor_a'], flex: false, prices: { standard: rates(1) },
    price_changes: [{ from: '2027-01-01', standard: rates(2) }, { from: '2027-06-01T12:00:00Z', standard: rates(3) }],
  };
  const c = new Catalog([entry]);
  const input = (at: string) => c.priceOf(entry, 'flex', Date.parse(at)).input;   // no flex price: standard
  assert.equal(input('2026-12-31T23:59:59Z'), 1);
  assert.equal(input('2027-01-01T00:00:00Z'), 2);
  assert.equal(input('2027-06-01T11:59:59Z'), 2);
  assert.equal(input('2027-06-01T12:00:00Z'), 3);
  const gpt = model('gpt-5.4');
  assert.equal(catalog.priceOf(gpt, 'flex', Date.UTC(2099, 0, 1)), gpt.prices.flex);
});

test('a price change whose date is not a UTC date, or out of order, stops the catalog at start', () => {
  const rates = { input: 1, cached_input: 0, output: 0 };
  const entry = (...from: string[]): ModelEntry => ({
    id: 'm', family: 'vendor_a', routes: ['vendor_a'], flex: false, prices: { standard: rates },
    price_changes: from.map((f) => ({ from: f, standard: rates })),
  });
  assert.throws(() => new Catalog([entry('2027-01-01T00:00:00')]), /not a UTC date/, 'a time without Z is local time');
  assert.throws(() => new Catalog([entry('January 1, 2027')]), /not a UTC date/);
  assert.throws(() => new Catalog([entry('2027-02-30')]), /not a UTC date/, 'not on the calendar (Date.parse reads 2 March)');
  assert.throws(() => new Catalog([entry('2027-04-31T00:00:00Z')]), /not a UTC date/);
  assert.throws(() => new Catalog([entry('2027-06-01', '2027-01-01')]), /not in date order/);
  assert.doesNotThrow(() => new Catalog([entry('2027-01-01', '2027-01-01T00:00:01.5Z')]));
});

// ── the config's models ─────────────────────────────────────────────────────────────────────────

test('config models: the built-in catalog, a config without the new fields, and one with them all load; a malformed date is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-config-'));
  const load = (models: unknown) => {
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ models }));
    return loadConfig(path);
  };
  try {
    assert.deepEqual(load(DEFAULT_MODELS).models, JSON.parse(JSON.stringify(DEFAULT_MODELS)));
    const plain = { id: 'x', family: 'vendor_a', routes: ['vendor_a'], flex: true,
      prices: { standard: { input: 2_500_000, cached_input: 250_000, output: 15_000_000 }, flex: { input: 1_250_000, cached_input: 125_000, output: 7_500_000 } } };
    assert.equal(load([plain]).models[0]!.id, 'x');
    const dated = { ...plain, price_changes: [{ from: '2027-01-01', standard: { input: 1, cached_input: 1, output: 1 } }] };
    assert.equal(load([dated]).models[0]!.price_changes![0]!.from, '2027-01-01');
    assert.throws(() => load([{ ...dated, price_changes: [{ ...dated.price_changes[0], from: '2027-01-01T00:00:00' }] }]), /price_changes\/0\/from/);
    assert.throws(() => load([{ ...plain, prices: { standard: { ...plain.prices.standard, long_context: { input: 1, cached_input: 1, output: 1 } } } }]), /above_input_tokens/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test("a usage record's standard-tier equivalent of a flex request is priced as of the request's start", () => {
  const flash = model('gemini-3.8-flash');
  const tokens = usage({ inputTokens: 1_000, outputTokens: 1_000 });
  for (const startedAt of [Date.UTC(2026, 11, 31, 23, 59, 59), Date.UTC(2027, 0, 1)]) {
    const prices = pricesAt(flash, startedAt);
    const record = recordOf({
      id: 'r', orgId: 'o', keyId: 'k', startedAt, endedAt: startedAt + 1_000, format: 'responses', model: flash, tier: 'flex',
      status: 200, errorCode: null, usage: tokens, costMicroUsd: costOf(prices.flex!, tokens), clientClosed: false,
    });
    assert.equal(record.standard_cost_micro_usd, costOf(prices.standard, tokens));
    assert.equal(record.standard_cost_micro_usd, 2 * record.cost_micro_usd, 'flex is half of standard on either side of the change');
  }
});
