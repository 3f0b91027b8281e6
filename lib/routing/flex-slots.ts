// Flex race slots per organization (own keys): past the limit a request runs standard at once
// ("degrade_to_standard"). Two counters: this one per process (the embedded SQLite deployment),
// and store/postgres-flex-slots.ts across every process sharing the database.
export interface FlexSlotCounter {
  readonly limit: number;
  tryAcquire(orgId: string): boolean | Promise<boolean>;
  release(orgId: string): void | Promise<void>;
}

export class FlexSlots implements FlexSlotCounter {
  private readonly used = new Map<string, number>();
  constructor(readonly limit: number) {}

  tryAcquire(orgId: string): boolean {
    const n = this.used.get(orgId) ?? 0;
    if (n >= this.limit) return false;
    this.used.set(orgId, n + 1);
    return true;
  }

  release(orgId: string): void {
    const n = (this.used.get(orgId) ?? 1) - 1;
    if (n <= 0) this.used.delete(orgId); else this.used.set(orgId, n);
  }

  /** Slots taken and not released (for the shared counter's fallback). */
  held(orgId: string): number { return this.used.get(orgId) ?? 0; }
}
