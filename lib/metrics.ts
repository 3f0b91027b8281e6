// Prometheus metrics (prom-client): requests, status codes, flex outcomes, time to commit,
// deadline misses, retries, fallbacks, spend. One registry per gateway instance.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    requests: new Counter({ name: 'gateway_requests_total', help: 'Inference requests by endpoint and status', labelNames: ['endpoint', 'status'], registers: [registry] }),
    outcomes: new Counter({ name: 'gateway_routing_outcomes_total', help: 'Routing reasons of committed requests', labelNames: ['reason', 'route', 'tier'], registers: [registry] }),
    timeToCommit: new Histogram({ name: 'gateway_time_to_commit_seconds', help: 'From arrival to the committed tier\'s first event, by route, model, tier and routing reason', labelNames: ['route', 'model', 'tier', 'reason'], buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600], registers: [registry] }),
    deadlineMisses: new Counter({ name: 'gateway_deadline_misses_total', help: 'Flex races committed after their start_within deadline, by route, model and routing reason', labelNames: ['route', 'model', 'reason'], registers: [registry] }),
    flexRaces: new Counter({ name: 'gateway_flex_races_total', help: 'Committed flex races by route, model and the tier that served (flex share = tier="flex" / all)', labelNames: ['route', 'model', 'tier'], registers: [registry] }),
    retries: new Counter({ name: 'gateway_retries_total', help: 'Retries performed before commit', registers: [registry] }),
    fallbacks: new Counter({ name: 'gateway_fallbacks_total', help: 'Fallback routes tried', registers: [registry] }),
    spend: new Counter({ name: 'gateway_spend_micro_usd_total', help: 'Cost of served requests, micro-USD', labelNames: ['mode'], registers: [registry] }),
  };
  return {
    ...m,
    /** One committed request: time to commit; for a flex race also its tier and a missed deadline. */
    observeCommit(l: { route: string; model: string; tier: string; reason: string }, ms: number, race: boolean, missed: boolean): void {
      m.timeToCommit.observe(l, ms / 1000);
      if (!race) return;
      m.flexRaces.inc({ route: l.route, model: l.model, tier: l.tier });
      if (missed) m.deadlineMisses.inc({ route: l.route, model: l.model, reason: l.reason });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
