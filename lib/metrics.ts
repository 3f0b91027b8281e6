// Prometheus metrics (prom-client): requests, status codes, flex outcomes, time to commit,
// deadline misses, retries, fallbacks, spend. One registry per gateway instance.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type CounterConfiguration } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Counted on every request (or race): tallied in plain numbers, added to the counter at each scrape.
  const requests = talliedCounter({
    name: 'gateway_requests_total', help: 'Inference requests by endpoint and status',
    labelNames: ['endpoint', 'status'], registers: [registry],
  });
  const outcomes = talliedCounter({
    name: 'gateway_routing_outcomes_total', help: 'Routing reasons of committed requests',
    labelNames: ['reason', 'route', 'tier'], registers: [registry],
  });
  const spend = talliedCounter({
    name: 'gateway_spend_micro_usd_total', help: 'Cost of served requests, micro-USD',
    labelNames: ['mode'], registers: [registry],
  });
  const deadlineMisses = talliedCounter({
    name: 'gateway_deadline_misses_total',
    help: 'Flex races committed after their start_within deadline, by route, model and routing reason',
    labelNames: ['route', 'model', 'reason'], registers: [registry],
  });
  const flexRaces = talliedCounter({
    name: 'gateway_flex_races_total',
    help: 'Committed flex races by route, model and the tier that served (flex share = tier="flex" / all)',
    labelNames: ['route', 'model', 'tier'], registers: [registry],
  });
  const hedgesAdvanced = talliedCounter({
    name: 'gateway_hedges_advanced_total',
    help: 'Hedges launched before their policy point because this process had planned too many at that point (the hedge calendar), by route and model',
    labelNames: ['route', 'model'], registers: [registry],
  });
  const hedgeAdvance = talliedCounter({
    name: 'gateway_hedge_advance_seconds_total',
    help: 'How much earlier than their policy point those hedges launched, summed, by route and model',
    labelNames: ['route', 'model'], registers: [registry],
  });
  const metrics = {
    requests: requests.counter,
    outcomes: outcomes.counter,
    timeToCommit: new Histogram({
      name: 'gateway_time_to_commit_seconds',
      help: 'From arrival to the committed tier\'s first event, by route, model, tier and routing reason',
      labelNames: ['route', 'model', 'tier', 'reason'],
      buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    deadlineMisses: deadlineMisses.counter,
    flexRaces: flexRaces.counter,
    retries: new Counter({ name: 'gateway_retries_total', help: 'Retries of upstream attempts, counted when the request ends, whether or not a tier committed', registers: [registry] }),
    fallbacks: new Counter({ name: 'gateway_fallbacks_total', help: 'Fallback routes tried, counted when the request ends, whether or not a tier committed', registers: [registry] }),
    timeouts: new Counter({
      name: 'gateway_timeouts_total',
      help: 'Timeouts by edge: request_headers, request_body, request_body_idle, upstream_connect, upstream_first_byte, '
        + 'upstream_idle, upstream_nonstream, caller_idle',
      labelNames: ['edge'], registers: [registry],
    }),
    capacityRefusals: new Counter({
      name: 'gateway_capacity_refusals_total',
      help: 'Upstream connection slots refused, by route and reason (org_share, queue_full, wait_timeout, busy)',
      labelNames: ['route', 'reason'], registers: [registry],
    }),
    spend: spend.counter,
    usageDropped: new Counter({
      name: 'gateway_usage_records_dropped_total', help: 'Usage records dropped (queue full or store unwritable)',
      registers: [registry],
    }),
    usageWritten: new Counter({
      name: 'gateway_usage_records_written_total', help: 'Usage records written to the store',
      registers: [registry],
    }),
    usageQueueDepth: new Gauge({ name: 'gateway_usage_queue_depth', help: 'Usage records waiting to be written', registers: [registry] }),
  };
  /** Gauges of what the process holds now, read at each scrape from `read` (watch()): nothing is
   *  counted on the request path. */
  function watch(read: LoadReader): void {
    new Gauge({
      name: 'gateway_requests_open', help: 'Inference requests between arrival and their end (waiting for a tier, racing or streaming)',
      registers: [registry], collect() { this.set(read.open()); },
    });
    new Gauge({
      name: 'gateway_requests_in_flight', help: 'Inference requests racing or streaming (past admission)',
      registers: [registry], collect() { this.set(read.inFlight()); },
    });
    new Gauge({
      name: 'gateway_upstream_connections', help: 'Upstream connection slots of each route: in use (flex: held by flex attempts), queued for one',
      labelNames: ['route', 'state'], registers: [registry],
      collect() {
        for (const r of read.routes()) {
          this.set({ route: r.route, state: 'in_use' }, r.inUse);
          this.set({ route: r.route, state: 'flex' }, r.flexInUse);
          this.set({ route: r.route, state: 'queued' }, r.queued);
        }
      },
    });
  }
  const timeToCommitBy = labelled(metrics.timeToCommit);
  return {
    registry,
    ...metrics,
    watch,
    /** A caller cut off for reading nothing (timeouts.caller_idle_ms). */
    callerIdle(): void { metrics.timeouts.inc({ edge: 'caller_idle' }); },
    /** A hedge the calendar launched `ms` before its policy point (lib/routing/launch-calendar.ts). */
    hedgeAdvanced(route: string, model: string, ms: number): void {
      hedgesAdvanced.by(route, model).inc();
      hedgeAdvance.by(route, model).inc(ms / 1000);
    },
    /** Hot-path counts, by label values in labelNames order. */
    requestsBy: requests.by,
    outcomesBy: outcomes.by,
    spendBy: spend.by,
    /** One committed request: time to commit; for a flex race also its tier and a missed deadline. */
    observeCommit(
      labels: { route: string; model: string; tier: string; reason: string }, ms: number, race: boolean, missed: boolean,
    ): void {
      timeToCommitBy(labels.route, labels.model, labels.tier, labels.reason).observe(ms / 1000);
      // A deadline missed counts whether or not flex raced (a request sent to standard at once
      // because its org's race slots were full has a deadline too).
      if (missed) deadlineMisses.by(labels.route, labels.model, labels.reason).inc();
      if (race) flexRaces.by(labels.route, labels.model, labels.tier).inc();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** What the load gauges read at a scrape (lib/app.ts gives the services' counts). */
export interface LoadReader {
  open(): number;
  inFlight(): number;
  routes(): Array<{ route: string; inUse: number; flexInUse: number; queued: number }>;
}

/** A labelled metric's child per label combination, looked up once and kept (a handful of
 *  combinations per process). prom-client still hashes the labels on each observe. */
function labelled<C>(metric: { labels(...values: string[]): C }): (...values: (string | number)[]) => C {
  return byLabelValues((values) => metric.labels(...values));
}

/** One counted thing per label combination, made by `make` the first time its values are seen and
 *  found again through one map per label: no key is built per call. */
function byLabelValues<C>(make: (values: string[]) => C): (...values: (string | number)[]) => C {
  const root = new Map<string | number, unknown>();
  return (...values) => {
    let level = root;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]!) as Map<string | number, unknown> | undefined;
      if (next === undefined) level.set(values[i]!, next = new Map());
      level = next;
    }
    let found = level.get(values[last]!) as C | undefined;
    if (found === undefined) level.set(values[last]!, found = make(values.map(String)));
    return found;
  };
}

/** A counter's count for one label combination, not yet added to the counter. */
class Tally {
  pending = 0;
  constructor(readonly labels: string[]) {}
  inc(n = 1): void {
    // prom-client's own checks, made here: a bad value must fail its caller, not every later scrape.
    if (!(n >= 0 && n < Infinity)) throw new TypeError(`A counter cannot be increased by ${n}`);
    this.pending += n;
  }
}

/** A labelled counter for the hot path. prom-client's child `inc()` hashes its label object every
 *  time (0.5–0.9 µs, and garbage); here each label combination keeps a plain number, which the
 *  counter's collect hook (prom-client runs it whenever the registry is read: a scrape, or
 *  `get()`) adds to the counter. A scrape sees every increment made before it. */
function talliedCounter<T extends string>(config: CounterConfiguration<T>): {
  counter: Counter<T>; by: (...values: (string | number)[]) => Tally;
} {
  const tallies: Tally[] = [];
  const counter: Counter<T> = new Counter<T>({
    ...config,
    collect() {
      for (const t of tallies) {
        if (t.pending === 0) continue;
        counter.labels(...t.labels).inc(t.pending);
        t.pending = 0;
      }
    },
  });
  const by = byLabelValues((values) => {
    const t = new Tally(values);
    tallies.push(t);
    return t;
  });
  return { counter, by };
}
