// The hedge lead: a running estimate of standard's time to first event per route and model
// (EWMA of observed commits), doubled for safety and bounded, so the standard attempt launched
// at deadline − lead starts before the deadline (design.md "Flex race = hedge").
export class LeadEstimator {
  private readonly ewma = new Map<string, number>();
  constructor(private readonly cfg: { initial_lead_ms: number; min_lead_ms: number; max_lead_ms: number }, private readonly alpha = 0.2) {}

  lead(route: string, model: string): number {
    const e = this.ewma.get(route + '\0' + model);
    const raw = e === undefined ? this.cfg.initial_lead_ms : 2 * e;
    return Math.min(this.cfg.max_lead_ms, Math.max(this.cfg.min_lead_ms, Math.round(raw)));
  }

  observe(route: string, model: string, timeToCommitMs: number): void {
    const k = route + '\0' + model;
    const e = this.ewma.get(k);
    this.ewma.set(k, e === undefined ? timeToCommitMs : e + this.alpha * (timeToCommitMs - e));
  }
}
