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

/** An entry of a LinkedSet: its neighbours in the set's list while it is there, cleared when it
 *  leaves. */
export interface Linked<T> {
  prev: T | undefined;
  next: T | undefined;
}

/** A set of the requests under way, as a list linked through its entries, not a Set: a Set that
 *  lives as long as the process, with an entry added and deleted per request, kept every request's
 *  whole graph alive until the next full GC. V8 rebuilds a Set's table as deleted entries pile up,
 *  and the table it leaves behind keeps its entries and a link to its successor (for iterators
 *  still on it); once one table had been promoted, that dead table held every later one, so each
 *  request's context, plan, machine and response survived its scavenges and was promoted: 16 % of
 *  what the gateway allocated, against 3 % with no set (bench/README.md, "The in-flight set"). An
 *  entry's links are cleared when it leaves, so nothing dead points at anything young. */
export class LinkedSet<T extends Linked<T>> {
  private head: T | undefined = undefined;
  private tail: T | undefined = undefined;
  private count = 0;

  get size(): number { return this.count; }

  /** The entries in the order they came; one that leaves during the walk does not end it. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let entry = this.head; entry;) {
      const next = entry.next;
      yield entry;
      entry = next;
    }
  }

  add(entry: T): void {
    if (entry.prev || this.head === entry) return;
    entry.prev = this.tail;
    if (this.tail) this.tail.next = entry; else this.head = entry;
    this.tail = entry;
    this.count++;
  }

  delete(entry: T): void {
    if (!entry.prev && this.head !== entry) return;   // not in the set
    if (entry.prev) entry.prev.next = entry.next; else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev; else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
    this.count--;
  }
}

/** A request in flight: shutdown drains it; the lease sweep renews its hold with `delivered`, the
 *  cost of the output sent so far (what a crash is charged). */
export class InFlight implements Linked<InFlight> {
  delivered: (() => number) | undefined = undefined;
  /** Its neighbours in InFlightSet's list while it is there, cleared when it leaves. */
  prev: InFlight | undefined = undefined;
  next: InFlight | undefined = undefined;
  constructor(readonly abort: () => void, readonly holdId: string | undefined) {}
}

/** The requests in flight (racing or streaming). A request leaves it when it has finished (its
 *  hold settled); shutdown aborts those still there after its drain time (OpenRequests says when
 *  every request has ended). */
export class InFlightSet extends LinkedSet<InFlight> {
  /** Requests that reached the request machine (sent upstream) since the process started: the
   *  flex policy's loop cost per request counts them (lib/routing/launch-calendar.ts). */
  total = 0;

  override add(entry: InFlight): void {
    this.total++;
    super.add(entry);
  }
}

/** An inference request as OpenRequests holds it: its own context (lib/http/pipeline.ts), linked
 *  in, so the drain reaches it without anything made per request. */
export interface OpenRequest extends Linked<OpenRequest> {
  readonly req: import('node:http').IncomingMessage;
}

/** The inference requests between arrival and their end (finish()), racing or not: shutdown waits
 *  for them all, so one still awaiting its key, body or admission when it began settles its hold
 *  before the ledger closes; and when its drain time runs out it walks them to end the body reads
 *  still under way (lib/app.ts close). One begun without an entry is only counted. */
export class OpenRequests {
  private count = 0;
  private ended: (() => void)[] = [];
  private readonly list = new LinkedSet<OpenRequest>();

  get size(): number { return this.count; }

  /** The requests begun with their entry, in the order they came. */
  [Symbol.iterator](): IterableIterator<OpenRequest> { return this.list[Symbol.iterator](); }

  begin(entry?: OpenRequest): void {
    this.count++;
    if (entry) this.list.add(entry);
  }

  end(entry?: OpenRequest): void {
    if (entry) this.list.delete(entry);
    if (--this.count || !this.ended.length) return;
    const waiting = this.ended;
    this.ended = [];
    for (const resolve of waiting) resolve();
  }

  /** Resolves when none is open (at once when none is). */
  whenNone(): Promise<void> {
    return this.count ? new Promise((resolve) => { this.ended.push(resolve); }) : Promise.resolve();
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
  /** The client's address for per-address limits (trust_proxy decides when X-Forwarded-For counts). */
  clientIp: (req: import('node:http').IncomingMessage) => string;
  /** Requests racing or streaming: shutdown aborts those still there after its drain time, and
   *  the lease sweep renews their holds. */
  inflight: InFlightSet;
  /** Every request from arrival to its end: shutdown waits for them. */
  open: OpenRequests;
  shuttingDown: boolean;
  /** Shutdown's drain time ran out: a request not yet racing is refused (shutting_down) before it
   *  reads its body or sends anything upstream. */
  drainOver: boolean;
}
