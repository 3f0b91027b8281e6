// Prometheus metrics (prom-client): requests, status codes, flex outcomes, time to commit,
// deadline misses, retries, fallbacks, spend. One registry per gateway instance.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = {
    requests: new Counter({
      name: 'gateway_requests_total', help: 'Inference requests by endpoint and status',
      labelNames: ['endpoint', 'status'], registers: [registry],
    }),
    outcomes: new Counter({
      name: 'gateway_routing_outcomes_total', help: 'Routing reasons of committed requests',
      labelNames: ['reason', 'route', 'tier'], registers: [registry],
    }),
    timeToCommit: new Histogram({
      name: 'gateway_time_to_commit_seconds',
      help: 'From arrival to the committed tier\'s first event, by route, model, tier and routing reason',
      labelNames: ['route', 'model', 'tier', 'reason'],
      buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    deadlineMisses: new Counter({
      name: 'gateway_deadline_misses_total',
      help: 'Flex races committed after their start_within deadline, by route, model and routing reason',
      labelNames: ['route', 'model', 'reason'], registers: [registry],
    }),
    flexRaces: new Counter({
      name: 'gateway_flex_races_total',
      help: 'Committed flex races by route, model and the tier that served (flex share = tier="flex" / all)',
      labelNames: ['route', 'model', 'tier'], registers: [registry],
    }),
    retries: new Counter({ name: 'gateway_retries_total', help: 'Retries performed before commit', registers: [registry] }),
    fallbacks: new Counter({ name: 'gateway_fallbacks_total', help: 'Fallback routes tried', registers: [registry] }),
    timeouts: new Counter({
      name: 'gateway_timeouts_total',
      help: 'Timeouts by edge: request_headers, request_body, request_body_idle, upstream_connect, upstream_first_byte, '
        + 'upstream_idle, caller_idle',
      labelNames: ['edge'], registers: [registry],
    }),
    capacityRefusals: new Counter({
      name: 'gateway_capacity_refusals_total',
      help: 'Upstream connection slots refused, by route and reason (org_share, queue_full, wait_timeout, busy)',
      labelNames: ['route', 'reason'], registers: [registry],
    }),
    spend: new Counter({
      name: 'gateway_spend_micro_usd_total', help: 'Cost of served requests, micro-USD',
      labelNames: ['mode'], registers: [registry],
    }),
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
  const timeToCommitBy = labelled(metrics.timeToCommit);
  const flexRacesBy = labelled(metrics.flexRaces);
  const deadlineMissesBy = labelled(metrics.deadlineMisses);
  return {
    registry,
    ...metrics,
    /** A caller cut off for reading nothing (timeouts.caller_idle_ms). */
    callerIdle(): void { metrics.timeouts.inc({ edge: 'caller_idle' }); },
    /** Hot-path children, by label values in labelNames order. */
    requestsBy: labelled(metrics.requests),
    outcomesBy: labelled(metrics.outcomes),
    spendBy: labelled(metrics.spend),
    /** One committed request: time to commit; for a flex race also its tier and a missed deadline. */
    observeCommit(
      labels: { route: string; model: string; tier: string; reason: string }, ms: number, race: boolean, missed: boolean,
    ): void {
      timeToCommitBy(labels.route, labels.model, labels.tier, labels.reason).observe(ms / 1000);
      if (!race) return;
      flexRacesBy(labels.route, labels.model, labels.tier).inc();
      if (missed) deadlineMissesBy(labels.route, labels.model, labels.reason).inc();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** prom-client hashes a label object on every inc/observe; on the hot path the child of each
 *  label combination is looked up once and kept (a handful of combinations per process). */
export function labelled<C>(metric: { labels(...values: string[]): C }): (...values: (string | number)[]) => C {
  const children = new Map<string, C>();
  return (...values) => {
    const key = values.join('\u0001');
    let child = children.get(key);
    if (child === undefined) {
      child = metric.labels(...values.map(String));
      children.set(key, child);
    }
    return child;
  };
}
