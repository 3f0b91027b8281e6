// Prometheus metrics (prom-client): requests, status codes, flex outcomes, time to commit,
// deadline misses, retries, fallbacks, spend. One registry per gateway instance.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const m = {
    requests: new Counter({ name: 'gateway_requests_total', help: 'Inference requests by endpoint and status', labelNames: ['endpoint', 'status'], registers: [registry] }),
    outcomes: new Counter({ name: 'gateway_routing_outcomes_total', help: 'Routing reasons of committed requests', labelNames: ['reason', 'route', 'tier'], registers: [registry] }),
    timeToCommit: new Histogram({ name: 'gateway_time_to_commit_seconds', help: 'From arrival to the committed tier\'s first event', labelNames: ['route', 'tier'], buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 600], registers: [registry] }),
    deadlineMisses: new Counter({ name: 'gateway_deadline_misses_total', help: 'Requests committed after their start_within deadline', registers: [registry] }),
    retries: new Counter({ name: 'gateway_retries_total', help: 'Retries performed before commit', registers: [registry] }),
    fallbacks: new Counter({ name: 'gateway_fallbacks_total', help: 'Fallback routes tried', registers: [registry] }),
    spend: new Counter({ name: 'gateway_spend_micro_usd_total', help: 'Cost of served requests, micro-USD', labelNames: ['mode'], registers: [registry] }),
  };
  return {
    registry,
    ...m,
    /** Hot-path children, by label values in labelNames order. */
    requestsBy: labelled(m.requests),
    outcomesBy: labelled(m.outcomes),
    timeToCommitBy: labelled(m.timeToCommit),
    spendBy: labelled(m.spend),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** prom-client hashes a label object on every inc/observe; on the hot path the child of each
 *  label combination is looked up once and kept (a handful of combinations per process). */
export function labelled<C>(metric: { labels(...values: string[]): C }): (a: string | number, b?: string | number, c?: string | number) => C {
  const children = new Map<string, C>();
  return (a, b, c) => {
    const k = c !== undefined ? `${a}\u0001${b}\u0001${c}` : b !== undefined ? `${a}\u0001${b}` : String(a);
    let child = children.get(k);
    if (child === undefined) {
      const values = [String(a)];
      if (b !== undefined) values.push(String(b));
      if (c !== undefined) values.push(String(c));
      child = metric.labels(...values);
      children.set(k, child);
    }
    return child;
  };
}
