// Flex race slots counted across every process sharing PostgreSQL (`flex_slot_take`, one round
// trip). Each slot row carries a key this process chose and a short lease, and the process renews
// the leases of the slots it holds and of no other row, so the slots of a killed process lapse
// within the lease. A slot whose release the database did not take (an outage), or whose
// acquisition's answer was lost (the row may have been written anyway), is renewed no more: its
// delete is tried again every second until it lands or the lease has run out. So a slot comes back
// as soon as the database answers again, and lapses by itself if it never does. While the database
// cannot be reached, slots are counted in this process alone (the race goes on; the limit is then
// per process) rather than sending every own-key request to standard.
import type { Pool } from 'pg';
import type { Clock } from '../clock.ts';
import { FlexSlots, type FlexSlotCounter } from '../routing/flex-slots.ts';

export interface FlexSlotTiming {
  /** A slot row lapses this long after its last renewal (renewed every third of it). */
  leaseMs: number;
  /** The wait before a delete the database did not take is tried again. */
  releaseRetryMs: number;
}

export const FLEX_SLOT_TIMING: FlexSlotTiming = { leaseMs: 60_000, releaseRetryMs: 1_000 };

export class SharedFlexSlots implements FlexSlotCounter {
  private readonly local: FlexSlots;
  /** The keys of the shared slots this process holds, per org: the rows it renews. */
  private readonly held = new Map<string, string[]>();
  /** Keys given back whose rows may still be there, with the time their lease runs out by. */
  private readonly unreleased = new Map<string, number>();
  private seq = 0;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool, readonly limit: number, private readonly processId: string, private readonly clock: Clock,
    private readonly onError: (err: unknown) => void, private readonly timing: FlexSlotTiming = FLEX_SLOT_TIMING,
  ) {
    this.local = new FlexSlots(limit);
    this.timer = setInterval(() => void this.renew(), timing.leaseMs / 3);
    this.timer.unref();
  }

  async tryAcquire(orgId: string): Promise<boolean> {
    const key = `${this.processId}:${++this.seq}`;
    const now = this.clock.now();
    try {
      const result = await this.pool.query<{ ok: boolean }>({
        name: 'flex_slot_take', text: 'SELECT flex_slot_take($1, $2, $3, $4, $5, $6) AS ok',
        values: [orgId, this.limit, this.processId, now, this.timing.leaseMs, key],
      });
      if (!result.rows[0]!.ok) return false;
      const keys = this.held.get(orgId);
      if (keys) keys.push(key); else this.held.set(orgId, [key]);
      return true;
    } catch (err) {
      this.onError(err);
      this.giveBackLater(key, now + this.timing.leaseMs);
      return this.local.tryAcquire(orgId);
    }
  }

  async release(orgId: string): Promise<void> {
    // The caller does not say which of the org's slots its race held (they are alike): a shared
    // one goes back first, the count every process sees, then one counted here during an outage.
    const keys = this.held.get(orgId);
    const key = keys?.pop();
    if (key === undefined) { this.local.release(orgId); return; }
    if (keys!.length === 0) this.held.delete(orgId);
    const lapsesBy = this.clock.now() + this.timing.leaseMs;   // no renewal after this one
    if (!(await this.deleteRows([key]))) this.giveBackLater(key, lapsesBy);
  }

  /** Extends the leases of the slots this process holds, never of a row it gave back. */
  async renew(): Promise<void> {
    const keys = [...this.held.values()].flat();
    if (keys.length === 0) return;
    await this.pool.query({
      name: 'flex_slot_renew', text: 'UPDATE flex_race_slots SET lease_expires_at_ms = $1 WHERE slot_key = ANY ($2)',
      values: [this.clock.now() + this.timing.leaseMs, keys],
    }).catch(this.onError);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
  }

  /** Whether the database took the delete (a key with no row, never written, is fine). */
  private async deleteRows(keys: string[]): Promise<boolean> {
    try {
      await this.pool.query({ name: 'flex_slot_release', text: 'DELETE FROM flex_race_slots WHERE slot_key = ANY ($1)', values: [keys] });
      return true;
    } catch (err) {
      this.onError(err);
      return false;
    }
  }

  private giveBackLater(key: string, lapsesBy: number): void {
    this.unreleased.set(key, lapsesBy);
    this.retryReleases();
  }

  /** One delete of every key given back in flight at a time, so a long outage costs one failed
   *  query a second. A key whose lease has run out is forgotten: its row no longer counts. */
  private retryReleases(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(async () => {
      const now = this.clock.now();
      for (const [key, lapsesBy] of this.unreleased) if (lapsesBy <= now) this.unreleased.delete(key);
      const keys = [...this.unreleased.keys()];
      if (keys.length > 0 && await this.deleteRows(keys)) for (const key of keys) this.unreleased.delete(key);
      this.retry = undefined;
      if (this.unreleased.size > 0) this.retryReleases();
    }, this.timing.releaseRetryMs);
    this.retry.unref();
  }
}
