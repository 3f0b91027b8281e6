// Flex race slots per organization (own keys): past the limit a request runs standard at once
// ("degrade_to_standard"). Per process, like the other per-instance counters.
export class FlexSlots {
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
}
