// The hedge lead: how long before the deadline the standard attempt must be launched so it starts
// in time. Standard's time to first event is heavy-tailed, so a mean alone under-covers it; the
// estimate is the one TCP uses for its retransmission timeout (Jacobson/Karels): a smoothed mean
// plus four smoothed mean deviations, per route and model, bounded by configuration.
// (bench/flex-policy.ts measures the coverage: 2 × mean met ~97% of deadlines, this ~99%.)
interface Estimate { mean: number; dev: number }

export class LeadEstimator {
  private readonly est = new Map<string, Estimate>();
  constructor(private readonly cfg: { initial_lead_ms: number; min_lead_ms: number; max_lead_ms: number }) {}

  lead(route: string, model: string): number {
    const e = this.est.get(route + '\0' + model);
    const raw = e === undefined ? this.cfg.initial_lead_ms : e.mean + 4 * e.dev;
    return Math.min(this.cfg.max_lead_ms, Math.max(this.cfg.min_lead_ms, Math.round(raw)));
  }

  observe(route: string, model: string, timeToCommitMs: number): void {
    const k = route + '\0' + model;
    const e = this.est.get(k);
    if (!e) { this.est.set(k, { mean: timeToCommitMs, dev: timeToCommitMs / 2 }); return; }
    e.dev += 0.25 * (Math.abs(timeToCommitMs - e.mean) - e.dev);
    e.mean += 0.125 * (timeToCommitMs - e.mean);
  }
}
