// Bounded upstream capacity with fairness, per route: at most `connections` requests hold one of
// the route's upstream connections at a time; others wait in a FIFO queue of at most `queue`
// entries for at most `wait_ms`; and no organization may hold or wait for more than `org_share` of
// the route's connections. Past any of these the request is refused at once (never left waiting
// with no headers while it holds money and slots), so one organization's open streams cannot
// starve another's. A slot is held from dispatch until the upstream body closes. Flex attempts,
// which hold theirs while the provider's flex queue makes them wait (up to a 10-minute deadline),
// may hold at most `flex_share` of the connections together: the rest stay for standard attempts,
// or a backed-up flex queue of a few organizations would starve every request of the route.

import type { Failure } from './types.ts';

/** Upstream connections per route, the wait for one, and each organization's share. */
export interface CapacityConfig {
  /** Connections of a route's pool when routes.<route>.connections is not set. */
  connections: number;
  /** Requests that may wait for a connection of one route; past it, refused at once. */
  queue: number;
  /** Longest wait for a connection; then refused. */
  wait_ms: number;
  /** Largest share (0–1] of a route's connections one organization may hold or wait for. */
  org_share: number;
  /** Largest share (0–1] of a route's connections flex attempts may hold together (default 0.75). */
  flex_share?: number;
}

export const DEFAULT_CAPACITY: CapacityConfig = { connections: 256, queue: 512, wait_ms: 5_000, org_share: 0.5, flex_share: 0.75 };

export type Refusal = 'org_share' | 'flex_share' | 'queue_full' | 'wait_timeout' | 'busy';

export class CapacityRefused extends Error {
  constructor(readonly reason: Refusal) { super(`upstream capacity: ${reason.replace('_', ' ')}`); }
}

interface Waiter { org: string; grant: (release: () => void) => void; timer: NodeJS.Timeout }

export interface GateLimits { connections: number; queue: number; orgShare: number; flexShare?: number }

export class RouteGate {
  private active = 0;
  private flexActive = 0;
  private readonly perOrg = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  readonly orgCap: number;
  readonly flexCap: number;

  constructor(private readonly limits: GateLimits) {
    this.orgCap = Math.max(1, Math.floor(limits.connections * limits.orgShare));
    this.flexCap = Math.max(1, Math.floor(limits.connections * (limits.flexShare ?? DEFAULT_CAPACITY.flex_share!)));
  }

  get inUse(): number { return this.active; }
  get flexInUse(): number { return this.flexActive; }
  get queued(): number { return this.waiting.length; }

  /** Calls grant(release) once a connection slot is the caller's — at once (synchronously) when
   *  one is free — or refuse(err) when it cannot be. waitMs 0: only a free slot now (a flex attempt
   *  never queues: not getting one is a flex failure). `flex`: a flex attempt, within flexCap.
   *  Returns a cancel for a queued wait. */
  acquire(
    org: string, waitMs: number, grant: (release: () => void) => void, refuse: (err: CapacityRefused) => void, flex = false,
  ): (() => void) | undefined {
    if ((this.perOrg.get(org) ?? 0) >= this.orgCap) { refuse(new CapacityRefused('org_share')); return undefined; }
    if (flex && this.flexActive >= this.flexCap) { refuse(new CapacityRefused('flex_share')); return undefined; }
    if (this.active < this.limits.connections && this.waiting.length === 0) { grant(this.take(org, flex)); return undefined; }
    if (waitMs <= 0) { refuse(new CapacityRefused('busy')); return undefined; }
    if (this.waiting.length >= this.limits.queue) { refuse(new CapacityRefused('queue_full')); return undefined; }
    this.count(org, 1);
    const waiter: Waiter = {
      org, grant, timer: setTimeout(() => { if (this.leave(waiter)) refuse(new CapacityRefused('wait_timeout')); }, waitMs),
    };
    this.waiting.push(waiter);
    return () => { this.leave(waiter); };
  }

  /** Takes a waiter out of the queue; false when it already left (granted, timed out, cancelled). */
  private leave(waiter: Waiter): boolean {
    const i = this.waiting.indexOf(waiter);
    if (i === -1) return false;
    this.waiting.splice(i, 1);
    this.count(waiter.org, -1);
    clearTimeout(waiter.timer);
    return true;
  }

  private take(org: string, flex: boolean): () => void {
    this.active++;
    if (flex) this.flexActive++;
    this.count(org, 1);
    return this.releaser(org, flex);
  }

  private releaser(org: string, flex = false): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      if (flex) this.flexActive--;
      this.count(org, -1);
      this.next();
    };
  }

  private next(): void {
    while (this.active < this.limits.connections && this.waiting.length) {
      const waiter = this.waiting.shift()!;
      clearTimeout(waiter.timer);
      this.active++;          // the waiter's per-org count was taken when it queued
      waiter.grant(this.releaser(waiter.org));
    }
  }

  private count(org: string, delta: number): void {
    const held = (this.perOrg.get(org) ?? 0) + delta;
    if (held <= 0) this.perOrg.delete(org); else this.perOrg.set(org, held);
  }
}

/** A refusal as an attempt failure: the machine treats it as any capacity failure (a flex attempt
 *  moves to standard at once; a standard one retries or falls back), and when it is the request's
 *  last failure the caller gets the gateway's own code with Retry-After, not provider_error. */
export function capacityFailure(err: CapacityRefused): Failure {
  const orgShare = err.reason === 'org_share';
  return {
    kind: 'capacity', status: orgShare ? 429 : 503, message: err.message, retryAfterMs: 1_000,
    gatewayCode: orgShare ? 'rate_limit_exceeded' : 'upstream_capacity_exceeded',
  };
}
