// An online, forgetting estimate of a time-to-event distribution from censored observations: the
// Kaplan–Meier / Aalen–Johansen estimator on log-spaced time bins with exponentially decayed
// weights. Three kinds of observation:
//   event     — it happened after t (flex started, standard sent its first event);
//   other     — a competing outcome ended the wait at t (flex refused: it will never start);
//   censored  — we stopped watching at t without either (an attempt aborted because the other
//               tier won): all we know is "not by t", so it counts in the at-risk set up to t and
//               keeps the estimate from being biased toward fast events.
// Decay: an observation's weight halves every `halfLifeMs` of clock time, so the estimate follows
// a queue that backs up and recovers. A common factor leaves the estimate itself unchanged; what
// decays is its weight, i.e. how much the next observations move it and how sure it is.
const MIN_MS = 10;
const RATIO = 1.1;
const LOG_RATIO = Math.log(RATIO);
export const BINS = 120;                         // edges 0, 10 ms, 11 ms, … ≈ 927 s
const RENORMALIZE_AT = 30;                       // exponent of the lazy decay factor

/** Lower edge of bin i (bin 0 is [0, 10 ms)). */
const edge = (i: number): number => (i === 0 ? 0 : MIN_MS * RATIO ** (i - 1));
/** Where ms falls inside bin i, 0 at its lower edge, 1 at its upper (in log time; bin 0 linear). */
const binShare = (i: number, ms: number): number => {
  const f = i === 0 ? ms / MIN_MS : i === BINS - 1 ? 1 : Math.log(ms / edge(i)) / LOG_RATIO;
  return Math.max(0, Math.min(1, f));
};
const binOf = (ms: number): number => (ms < MIN_MS ? 0 : Math.min(BINS - 1, 1 + Math.floor(Math.log(ms / MIN_MS) / LOG_RATIO)));

export type Observation = 'event' | 'other' | 'censored';

interface Curve {
  /** After bin i: P(no outcome yet), P(event so far), P(other so far); at risk entering bin i. */
  surv: Float64Array; cifEvent: Float64Array; cifOther: Float64Array; atRisk: Float64Array;
}

export class DecayedSurvival {
  private readonly event = new Float64Array(BINS);
  private readonly other = new Float64Array(BINS);
  private readonly censored = new Float64Array(BINS);
  /** Each censoring's weight × the share of its bin (in log time) it was still waiting through. */
  private readonly censoredPart = new Float64Array(BINS);
  private t0: number | undefined;               // weights are stored × e^{(t − t0)/τ}
  private readonly tau: number;
  private total = 0;                             // Σ of the three arrays (stored weights)
  /** Recomputed in place when an observation made it stale: a query per request allocates nothing. */
  private readonly curve: Curve = {
    surv: new Float64Array(BINS), cifEvent: new Float64Array(BINS), cifOther: new Float64Array(BINS), atRisk: new Float64Array(BINS),
  };
  private stale = true;

  constructor(halfLifeMs: number) { this.tau = halfLifeMs / Math.LN2; }

  observe(kind: Observation, ms: number, now: number): void {
    this.t0 ??= now;
    // A wall clock stepped back (NTP) must not weigh new observations below old ones.
    if (now < this.t0) now = this.t0;
    let x = (now - this.t0) / this.tau;
    if (x > RENORMALIZE_AT) { this.rescale(Math.exp(-x)); this.t0 = now; x = 0; }
    const w = Math.exp(x);
    const i = binOf(Math.max(0, ms));
    (kind === 'event' ? this.event : kind === 'other' ? this.other : this.censored)[i]! += w;
    if (kind === 'censored') this.censoredPart[i]! += w * binShare(i, ms);
    this.total += w;
    this.stale = true;
  }

  /** Effective number of observations now (decayed). */
  weight(now: number): number {
    if (this.t0 === undefined) return 0;
    return this.total * this.scale(now);
  }

  /** Effective number of observations still waiting at `ms` (how much the estimate beyond it rests on). */
  atRisk(ms: number, now: number): number {
    if (this.t0 === undefined) return 0;
    return this.get().atRisk[binOf(ms)]! * this.scale(now);
  }

  /** How little the observations censored in (fromMs, toMs] say about an outcome in it, as an
   *  effective count: one stopped at c ruled out only (fromMs, c], so it counts for the share of
   *  the interval it did not see, (toMs − c) / (toMs − fromMs) — an attempt stopped at once says
   *  nothing, one stopped just before toMs almost all (c from its bin's mean position in log time;
   *  the first bin's censorings as atRisk counts them). */
  censoredUnseen(fromMs: number, toMs: number, now: number): number {
    if (this.t0 === undefined || toMs <= fromMs) return 0;
    const lo = binOf(Math.max(0, fromMs)), hi = binOf(toMs);
    let w = 0;
    for (let i = lo; i <= hi; i++) {
      const c = this.censored[i]!;
      if (c <= 0) continue;
      const at = i === 0 ? MIN_MS * (this.censoredPart[i]! / c) : edge(i) * RATIO ** (this.censoredPart[i]! / c);
      const unseen = Math.max(0, Math.min(1, (toMs - at) / (toMs - fromMs)));
      w += (i === lo ? this.censoredPart[i]! : c) * unseen;
    }
    return w * this.scale(now);
  }

  /** A time the estimate knows outcomes can take longer than, when its quantile p is not reached:
   *  the upper edge of the last bin anything was observed in (censorings included) while
   *  P(event by then) is still below p. Undefined when the quantile exists or nothing was seen. */
  unreachedBy(p: number): number | undefined {
    if (this.t0 === undefined) return undefined;
    const { cifEvent } = this.get();
    for (let i = BINS - 1; i >= 0; i--) {
      if (this.event[i]! + this.other[i]! + this.censored[i]! > 0) return cifEvent[i]! < p ? edge(i + 1) : undefined;
    }
    return undefined;
  }

  /** P(no outcome by ms). */
  survival(ms: number): number { return this.at(this.get().surv, ms, 1); }
  /** P(event by ms). */
  eventBy(ms: number): number { return this.at(this.get().cifEvent, ms, 0); }
  /** P(competing outcome by ms). */
  otherBy(ms: number): number { return this.at(this.get().cifOther, ms, 0); }

  /** P(event in (from, to] | no outcome by from); undefined when nothing was ever seen waiting at `from`. */
  eventBetween(fromMs: number, toMs: number): number | undefined {
    const s = this.survival(fromMs);
    if (this.t0 === undefined || s <= 1e-12 || this.get().atRisk[binOf(fromMs)]! <= 0) return undefined;
    return Math.max(0, Math.min(1, (this.eventBy(toMs) - this.eventBy(fromMs)) / s));
  }

  /** Smallest t with P(event by t) ≥ p (a time-to-event quantile); undefined when the estimate
   *  never gets there (too little data, or the tail is only known to be censored). */
  quantile(p: number): number | undefined {
    if (this.t0 === undefined) return undefined;
    const cif = this.get().cifEvent;
    let prev = 0;
    for (let i = 0; i < BINS; i++) {
      const c = cif[i]!;
      if (c >= p && c > 0) {
        const lo = edge(i);
        const hi = edge(i + 1);
        const f = c > prev ? (p - prev) / (c - prev) : 1;
        return i === 0 ? hi * f : lo * (hi / lo) ** Math.max(0, Math.min(1, f));
      }
      prev = c;
    }
    return undefined;
  }

  private scale(now: number): number { return Math.exp(-Math.max(0, now - (this.t0 ?? now)) / this.tau); }

  private rescale(f: number): void {
    for (let i = 0; i < BINS; i++) { this.event[i]! *= f; this.other[i]! *= f; this.censored[i]! *= f; this.censoredPart[i]! *= f; }
    this.total *= f;
  }

  /** Value of a step curve at ms, interpolated in log time inside the bin. */
  private at(arr: Float64Array, ms: number, before0: number): number {
    const i = binOf(Math.max(0, ms));
    const prev = i === 0 ? before0 : arr[i - 1]!;
    return prev + (arr[i]! - prev) * binShare(i, ms);
  }

  private get(): Curve {
    if (!this.stale) return this.curve;
    const { surv, cifEvent, cifOther, atRisk } = this.curve;
    let n = 0;
    // A censoring in bin i counts as at risk in it for the share of the bin it waited through: "not
    // by t" says nothing about the rest of t's bin, and an attempt aborted at once says nothing. (Not
    // at risk in its bin at all over-states the hazard where many are censored alike — every hedge
    // aborts flex near deadline − lead — and in the last such bin makes it 1: all still waiting
    // "start", and P(flex fails by a 120 s deadline) read 0.1 where it was 0.22.)
    for (let i = BINS - 1; i >= 0; i--) {
      n += this.event[i]! + this.other[i]!;
      atRisk[i] = n + this.censoredPart[i]!;
      n += this.censored[i]!;
    }
    let s = 1, ce = 0, co = 0;
    for (let i = 0; i < BINS; i++) {
      const r = atRisk[i]!;
      if (r > 0) {
        const he = this.event[i]! / r, ho = this.other[i]! / r;
        ce += s * he; co += s * ho; s *= 1 - he - ho;
      }
      surv[i] = s; cifEvent[i] = ce; cifOther[i] = co;
    }
    this.stale = false;
    return this.curve;
  }
}

/** Standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00];
  const b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01];
  const c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00];
  const d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00];
  const lo = 0.02425;
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5, r = q * q;
  return (((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}
