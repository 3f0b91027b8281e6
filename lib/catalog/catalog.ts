// The model catalog: which family a model belongs to, which routes serve it, whether it can race
// flex, and its prices per tier. Built once at start (from defaults or the config file).
import type { IRUsage } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';

export type Family = 'vendor_a' | 'vendor_b' | 'vendor_c';

/** USD per 1M tokens, stored as integer micro-USD per 1M tokens (USD 2.50 → 2_500_000). */
export interface Price {
  input: number;
  cached_input: number;
  cache_write?: number;        // defaults to input
  output: number;
}

export interface ModelEntry {
  id: string;
  family: Family;
  routes: RouteName[];                 // routes that can serve it; routes[0] is the native route
  flex: boolean;                       // can race the flex tier
  prices: { standard: Price; flex?: Price };
  /** The model id a route expects when it differs (Bedrock ids). */
  route_model_ids?: Partial<Record<RouteName, string>>;
}

const toMicro = (usd: number): number => Math.round(usd * 1_000_000);
/** A price from list prices in USD per 1M tokens. */
const usdPerM = (input: number, cached: number, output: number, cacheWrite?: number): Price => ({
  input: toMicro(input), cached_input: toMicro(cached), output: toMicro(output),
  ...(cacheWrite === undefined ? {} : { cache_write: toMicro(cacheWrite) }),
});

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
  { id: 'gemini-3.8-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: { standard: usdPerM(0.75, 0.075, 3.75), flex: usdPerM(0.375, 0.0375, 1.875) } },
  { id: 'gemini-3.1-pro-preview', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: { standard: usdPerM(2, 0.2, 12), flex: usdPerM(1, 0.1, 6) } },
  { id: 'gemini-2.5-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true,
    prices: { standard: usdPerM(0.3, 0.03, 2.5), flex: usdPerM(0.15, 0.015, 1.25) } },
  { id: 'gemini-2.0-flash', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: false,
    prices: { standard: usdPerM(0.1, 0.025, 0.4) } },
  { id: 'claude-opus-4-8', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false,
    prices: { standard: usdPerM(5, 0.5, 25, 6.25) },
    route_model_ids: { cloud_b: 'anthropic.claude-opus-4-8-v1:0' } },
  { id: 'claude-sonnet-4-6', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false,
    prices: { standard: usdPerM(3, 0.3, 15, 3.75) },
    route_model_ids: { cloud_b: 'anthropic.claude-sonnet-4-6-v1:0' } },
  { id: 'claude-haiku-4-5', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false,
    prices: { standard: usdPerM(1, 0.1, 5, 1.25) },
    route_model_ids: { cloud_b: 'anthropic.claude-haiku-4-5-v1:0' } },
];

export class Catalog {
  private readonly byId: Map<string, ModelEntry>;
  constructor(readonly models: ModelEntry[]) {
    this.byId = new Map(models.map((entry) => [entry.id, entry]));
  }
  get(id: string): ModelEntry | undefined { return this.byId.get(id); }

  /** Price for the tier that ran; flex falls back to standard when the model has no flex price. */
  priceOf(entry: ModelEntry, tier: Tier): Price {
    return (tier === 'flex' && entry.prices.flex) || entry.prices.standard;
  }
}

/** cost = Σ over token kinds ⌈tokens × price / 1,000,000⌉, integer micro-USD (each part rounded up:
 *  never charged less than used; integers: no float drift in balances). */
export function costOf(price: Price, usage: IRUsage): number {
  const part = (tokens: number, perM: number): number => (tokens > 0 ? Math.ceil((tokens * perM) / 1_000_000) : 0);
  const uncached = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return part(uncached, price.input) + part(usage.cachedInputTokens, price.cached_input)
    + part(usage.cacheWriteTokens, price.cache_write ?? price.input) + part(usage.outputTokens, price.output);
}
