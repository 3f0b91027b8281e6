// Flex race slots counted across every process sharing PostgreSQL (`flex_slot_acquire`, one round
// trip). Each slot row carries this process's id and a short lease, renewed while the process
// lives, so the slots of a killed process lapse within FLEX_SLOT_LEASE_MS. While the database
// cannot be reached, slots are counted in this process alone (the race goes on; the limit is then
// per process) rather than sending every own-key request to standard.
import type { Pool } from 'pg';
import type { Clock } from '../clock.ts';
import { FlexSlots, type FlexSlotCounter } from '../routing/flex-slots.ts';

export const FLEX_SLOT_LEASE_MS = 60_000;

export class SharedFlexSlots implements FlexSlotCounter {
  private readonly local: FlexSlots;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool, readonly limit: number, private readonly processId: string, private readonly clock: Clock,
    private readonly onError: (err: unknown) => void,
  ) {
    this.local = new FlexSlots(limit);
    this.timer = setInterval(() => {
      pool.query('UPDATE flex_race_slots SET lease_expires_at_ms = $1 WHERE process_id = $2',
        [clock.now() + FLEX_SLOT_LEASE_MS, processId]).catch(onError);
    }, FLEX_SLOT_LEASE_MS / 3);
    this.timer.unref();
  }

  async tryAcquire(orgId: string): Promise<boolean> {
    try {
      const result = await this.pool.query<{ ok: boolean }>({
        name: 'flex_slot_acquire', text: 'SELECT flex_slot_acquire($1, $2, $3, $4, $5) AS ok',
        values: [orgId, this.limit, this.processId, this.clock.now(), FLEX_SLOT_LEASE_MS],
      });
      return result.rows[0]!.ok;
    } catch (err) {
      this.onError(err);
      return this.local.tryAcquire(orgId);
    }
  }

  async release(orgId: string): Promise<void> {
    if (this.local.held(orgId) > 0) { this.local.release(orgId); return; }
    await this.pool.query({
      name: 'flex_slot_release',
      text: `
        DELETE FROM flex_race_slots
        WHERE slot_id = (SELECT slot_id FROM flex_race_slots WHERE org_id = $1 AND process_id = $2 LIMIT 1)`,
      values: [orgId, this.processId],
    }).catch(this.onError); // the slot lapses with its lease
  }

  stop(): void { clearInterval(this.timer); }
}
