// Everything a request needs, built once at start (no per-request setup cost) and passed down the
// request path.
import type { FormatName } from './ir.ts';
import type { RouteName } from './routes.ts';
import type { Clock } from './clock.ts';
import type { GatewayConfig } from './config.ts';
import type { Catalog } from './catalog/catalog.ts';
import type { OrgStore } from './store/orgs.ts';
import type { Ledger } from './ledger/types.ts';
import type { AbuseLimiter } from './limits/abuse.ts';
import type { RouteAdapter } from './providers/types.ts';
import type { FormatCodec } from './formats/types.ts';
import type { Pools } from './stream/pools.ts';
import type { FlexScheduler } from './routing/flex-policy.ts';
import type { FlexSlotCounter } from './routing/flex-slots.ts';
import type { Store } from './store/store.ts';
import type { TimerClock } from './machine/request-machine.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import type { Usage } from './usage/service.ts';

/** A request in flight: shutdown drains it; the lease sweep renews its hold with `delivered`, the
 *  cost of the output sent so far (what a crash is charged). */
export interface InFlight { abort(): void; holdId?: string; delivered?: () => number }

/** The requests in flight. A request leaves it when it has finished (its hold settled); shutdown
 *  waits for it to empty, with one promise for all of them rather than one per request. */
export class InFlightSet {
  private readonly entries = new Set<InFlight>();
  private emptied: (() => void)[] = [];

  get size(): number { return this.entries.size; }
  [Symbol.iterator](): IterableIterator<InFlight> { return this.entries.values(); }
  add(entry: InFlight): void { this.entries.add(entry); }

  delete(entry: InFlight): void {
    if (!this.entries.delete(entry) || this.entries.size || !this.emptied.length) return;
    const waiting = this.emptied;
    this.emptied = [];
    for (const resolve of waiting) resolve();
  }

  /** Resolves when no request is in flight (at once when none is). */
  whenEmpty(): Promise<void> {
    return this.entries.size ? new Promise((resolve) => { this.emptied.push(resolve); }) : Promise.resolve();
  }
}

export interface Services {
  config: GatewayConfig;
  clock: Clock;
  /** Timer source for the request machine (xstate SimulatedClock in tests); real timers if absent. */
  timerClock?: TimerClock;
  random: () => number;
  catalog: Catalog;
  /** The storage adapter (SQLite or PostgreSQL); orgs, ledger and flexSlots are its parts. */
  store: Store;
  orgs: OrgStore;
  ledger: Ledger;
  abuse: AbuseLimiter;
  adapters: Record<RouteName, RouteAdapter>;
  codecs: Record<FormatName, FormatCodec>;
  pools: Pools;
  scheduler: FlexScheduler;
  flexSlots: FlexSlotCounter;
  log: Logger;
  metrics: Metrics;
  /** Usage records: push() one per ended request; the store behind it answers the usage API. */
  usage: Usage;
  /** Requests in flight, so shutdown can drain them and settle their holds. */
  /** The client's address for per-address limits (trust_proxy decides when X-Forwarded-For counts). */
  clientIp: (req: import('node:http').IncomingMessage) => string;
  inflight: InFlightSet;
  shuttingDown: boolean;
}
