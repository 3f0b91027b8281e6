// The model catalog: which family a model belongs to, which routes serve it, whether it can race
// flex, and its prices per tier. Built once at start (from defaults or the config file).
//
// Three pricing rules beyond "tokens × rate": Anthropic's 1-hour cache writes have their own rate
// (cache_write_1h); a price may have a long-context tier (Gemini Pro: a prompt above 200k tokens
// bills the whole request at other rates); and a model's prices may change on a date
// (price_changes), a request paying the prices in force when it started.
import type { IRUsage } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';

export type Family = 'vendor_a' | 'vendor_b' | 'vendor_c';

/** USD per 1M tokens, stored as integer micro-USD per 1M tokens (USD 2.50 → 2_500_000). */
export interface Rates {
  input: number;
  cached_input: number;
  cache_write?: number;        // defaults to input (Anthropic: the 5-minute write)
  cache_write_1h?: number;     // Anthropic's 1-hour write; defaults to cache_write
  output: number;
}

export interface Price extends Rates {
  /** A request whose input tokens (cache reads and writes included) exceed above_input_tokens is
   *  billed whole, every token kind, at these rates instead. */
  long_context?: Rates & { above_input_tokens: number };
}

export interface Prices { standard: Price; flex?: Price }

/** Prices in force from `from` on: an ISO 8601 UTC date ("2027-01-01", its midnight) or instant
 *  ("2027-01-01T00:00:00Z"). */
export interface PriceChange extends Prices { from: string }

export interface ModelEntry {
  id: string;
  family: Family;
  routes: RouteName[];                 // routes that can serve it; routes[0] is the native route
  flex: boolean;                       // can race the flex tier
  prices: Prices;                      // in force until the first price change
  /** Later prices, in date order; each replaces the prices before it (a tier it leaves out is
   *  priced at its standard, as on the entry). */
  price_changes?: PriceChange[];
  /** The model id a route expects when it differs (Bedrock ids). */
  route_model_ids?: Partial<Record<RouteName, string>>;
}

const toMicro = (usd: number): number => Math.round(usd * 1_000_000);
/** A price from list prices in USD per 1M tokens. */
const usdPerM = (input: number, cached: number, output: number, cacheWrite?: number, cacheWrite1h?: number): Price => ({
  input: toMicro(input), cached_input: toMicro(cached), output: toMicro(output),
  ...(cacheWrite === undefined ? {} : { cache_write: toMicro(cacheWrite) }),
  ...(cacheWrite1h === undefined ? {} : { cache_write_1h: toMicro(cacheWrite1h) }),
});
/** `price`, with `long` for a prompt above `tokens` input tokens. */
const longAbove = (price: Price, tokens: number, long: Rates): Price => ({ ...price, long_context: { ...long, above_input_tokens: tokens } });

/** Realistic defaults (list prices, USD per 1M tokens, late 2026); a config file may replace them. */
export const DEFAULT_MODELS: ModelEntry[] = [
  { id: 'gpt-5.5', family: 'vendor_a', routes: ['vendor_a'], flex: true,
    prices: { standard: usdPerM(5, 0.5, 30), flex: usdPerM(2.5, 0.25, 15) } },
  { id: 'gpt-5.4', family: 'vendor_a', routes: ['vendor_a'], flex: true,
    prices: { standard: usdPerM(2.5, 0.25, 15), flex: usdPerM(1.25, 0.125, 7.5) } },
  { id: 'gpt-5.4-mini', family: 'vendor_a', routes: ['vendor_a'], flex: true,
    prices: { standard: usdPerM(0.75, 0.075, 4.5), flex: usdPerM(0.375, 0.0375, 2.25) } },
  { id: 'gpt-5.4-nano', family: 'vendor_a', routes: ['vendor_a'], flex: false,
    prices: { standard: usdPerM(0.2, 0.02, 1.25) } },
  { id: 'gemini-3.5-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: { standard: usdPerM(1.5, 0.15, 9), flex: usdPerM(0.75, 0.075, 4.5) } },
  // A launch promotion through 2026-12-31.
  { id: 'gemini-3.8-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: { standard: usdPerM(0.75, 0.075, 3.75), flex: usdPerM(0.375, 0.0375, 1.875) },
    price_changes: [{ from: '2027-01-01', standard: usdPerM(1.5, 0.15, 7.5), flex: usdPerM(0.75, 0.075, 3.75) }] },
  { id: 'gemini-3.1-pro-preview', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: {
      standard: longAbove(usdPerM(2, 0.2, 12), 200_000, usdPerM(4, 0.4, 18)),
      flex: longAbove(usdPerM(1, 0.1, 6), 200_000, usdPerM(2, 0.2, 9)),
    } },
  { id: 'gemini-2.5-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: { standard: usdPerM(0.3, 0.03, 2.5), flex: usdPerM(0.15, 0.015, 1.25) } },
  { id: 'gemini-2.0-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: false,
    prices: { standard: usdPerM(0.1, 0.025, 0.4) } },
  { id: 'claude-opus-4-8', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false,
    prices: { standard: usdPerM(5, 0.5, 25, 6.25, 10) },
    route_model_ids: { cloud_b: 'anthropic.claude-opus-4-8-v1:0' } },
  { id: 'claude-sonnet-4-6', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false,
    prices: { standard: usdPerM(3, 0.3, 15, 3.75, 6) },
    route_model_ids: { cloud_b: 'anthropic.claude-sonnet-4-6-v1:0' } },
  { id: 'claude-haiku-4-5', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false,
    prices: { standard: usdPerM(1, 0.1, 5, 1.25, 2) },
    route_model_ids: { cloud_b: 'anthropic.claude-haiku-4-5-v1:0' } },
];

export class Catalog {
  private readonly byId: Map<string, ModelEntry>;
  constructor(readonly models: ModelEntry[]) {
    this.byId = new Map(models.map((entry) => [entry.id, entry]));
    for (const entry of models) changeStarts(entry);   // a bad date stops the start, not a request
  }
  get(id: string): ModelEntry | undefined { return this.byId.get(id); }

  /** Price for the tier that ran, as in force at `atMs` (the request's start); flex falls back to
   *  standard when the model has no flex price. */
  priceOf(entry: ModelEntry, tier: Tier, atMs: number): Price {
    const prices = pricesAt(entry, atMs);
    return (tier === 'flex' && prices.flex) || prices.standard;
  }
}

/** The prices in force at `atMs`: the last change that started by then, else the entry's own. */
export function pricesAt(entry: ModelEntry, atMs: number): Prices {
  const changes = entry.price_changes;
  if (!changes) return entry.prices;
  const starts = changeStarts(entry);
  for (let i = starts.length - 1; i >= 0; i--) if (atMs >= starts[i]!) return changes[i]!;
  return entry.prices;
}

/** Each entry's price change dates as epoch ms, parsed once (the Catalog parses them at start). */
const parsedStarts = new WeakMap<ModelEntry, number[]>();
/** Date-only or instant with Z: Date.parse reads a time without a zone as local time. */
const UTC_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?Z)?$/;

function changeStarts(entry: ModelEntry): number[] {
  let starts = parsedStarts.get(entry);
  if (starts) return starts;
  starts = (entry.price_changes ?? []).map((change) => {
    const ms = UTC_DATE.test(change.from) ? Date.parse(change.from) : NaN;
    // Date.parse rolls a day that is not on the calendar (2027-02-30) into the next month.
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== change.from.slice(0, 10)) throw new Error(`model ${entry.id}: price change from "${change.from}" is not a UTC date (2027-01-01 or 2027-01-01T00:00:00Z)`);
    return ms;
  });
  for (let i = 1; i < starts.length; i++) {
    if (starts[i]! <= starts[i - 1]!) throw new Error(`model ${entry.id}: price changes are not in date order`);
  }
  parsedStarts.set(entry, starts);
  return starts;
}

/** cost = Σ over token kinds ⌈tokens × rate / 1,000,000⌉, integer micro-USD (each part rounded up:
 *  never charged less than used; integers: no float drift in balances). The rates are the price's
 *  long-context ones when the input is above their threshold; 1-hour cache writes (a part of the
 *  cache writes) pay cache_write_1h, the other writes cache_write. */
export function costOf(price: Price, usage: IRUsage): number {
  const part = (tokens: number, perM: number): number => (tokens > 0 ? Math.ceil((tokens * perM) / 1_000_000) : 0);
  const long = price.long_context;
  const rates: Rates = long && usage.inputTokens > long.above_input_tokens ? long : price;
  const uncached = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  const write = rates.cache_write ?? rates.input;
  const write1h = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  return part(uncached, rates.input) + part(usage.cachedInputTokens, rates.cached_input)
    + part(usage.cacheWriteTokens - write1h, write) + part(write1h, rates.cache_write_1h ?? write)
    + part(usage.outputTokens, rates.output);
}
