// Per-instance abuse limits (spec "Limits": organization, key, client IP, failed authentications,
// each per minute and counted separately in every edge location, i.e. in this process's memory).
// A null limit is unlimited. A refused request is not counted, so a client that backs off for
// Retry-After seconds is let through.
import type { Clock } from '../clock.ts';
import { SlidingWindowCounter } from './window.ts';

export interface AbuseLimitsConfig {
  organization_requests: number | null;
  api_key_requests: number | null;
  client_ip_requests: number | null;
  failed_authentications: number | null;
}

/** The rate of the organization API beside inference (GET /v1/usage, /v1/usage/requests and
 *  /v1/organization/…): requests per organization per minute, counted apart from inference, so
 *  reports and key management stay bounded while inference keeps its own (unlimited by default)
 *  rates. Absent = unlimited; lib/config.ts defaults it to DEFAULT_ORGANIZATION_API_REQUESTS. */
export interface OrganizationApiLimit { organization_api_requests?: number | null }

/** Two dashboard loads a second, sustained: a dashboard load is eight such requests. */
export const DEFAULT_ORGANIZATION_API_REQUESTS = 120;

export type AbuseCheck = { ok: true } | { ok: false; retryAfterS: number };

const verdict = (waitS: number): AbuseCheck => (waitS === 0 ? { ok: true } : { ok: false, retryAfterS: waitS });

export class AbuseLimiter {
  private readonly org: SlidingWindowCounter;
  private readonly key: SlidingWindowCounter;
  private readonly ip: SlidingWindowCounter;
  private readonly failedAuth: SlidingWindowCounter;
  private readonly failedAdmin: SlidingWindowCounter;
  private readonly orgApi: SlidingWindowCounter;

  constructor(cfg: AbuseLimitsConfig & OrganizationApiLimit, clock: Clock, opts: { maxKeysPerLimit?: number } = {}) {
    const max = opts.maxKeysPerLimit ?? 1_000_000;
    this.org = new SlidingWindowCounter(cfg.organization_requests, clock, 60_000, max);
    this.key = new SlidingWindowCounter(cfg.api_key_requests, clock, 60_000, max);
    this.ip = new SlidingWindowCounter(cfg.client_ip_requests, clock, 60_000, max);
    this.failedAuth = new SlidingWindowCounter(cfg.failed_authentications, clock, 60_000, max);
    // Wrong admin tokens: the same limit, counted apart (a tenant's bad API keys never lock the
    // operator out of the admin API, nor the other way round).
    this.failedAdmin = new SlidingWindowCounter(cfg.failed_authentications, clock, 60_000, max);
    this.orgApi = new SlidingWindowCounter(cfg.organization_api_requests ?? null, clock, 60_000, max);
  }

  /** Before the admin token is checked: refuses an address whose wrong admin tokens reached the limit. */
  checkAdmin(ip: string): AbuseCheck {
    return verdict(this.failedAdmin.wait(ip));
  }

  /** After a wrong or missing admin token from this address. */
  recordFailedAdmin(ip: string): void {
    this.failedAdmin.add(ip);
  }

  /** Before authentication. Refuses an IP over its request rate, or one whose failed
   *  authentications already reached the limit (even if this request carries a good key: the
   *  key is not known yet). Counts the request when it passes. */
  checkIp(ip: string): AbuseCheck {
    const locked = this.failedAuth.wait(ip);
    const busy = this.ip.wait(ip);
    if (locked === 0 && busy === 0) this.ip.add(ip);
    return verdict(Math.max(locked, busy));
  }

  /** After a failed authentication from this IP. */
  recordFailedAuth(ip: string): void {
    this.failedAuth.add(ip);
  }

  /** After authentication: organization and key rates. Counts both only when both pass. */
  checkKey(orgId: string, keyId: string): AbuseCheck {
    const orgWait = this.org.wait(orgId);
    const keyWait = this.key.wait(keyId);
    if (orgWait === 0 && keyWait === 0) {
      this.org.add(orgId);
      this.key.add(keyId);
    }
    return verdict(Math.max(orgWait, keyWait));
  }

  /** After checkKey, on the organization API beside inference (usage reports, key management):
   *  that API's own per-organization rate. Counted when it passes. */
  checkOrganizationApi(orgId: string): AbuseCheck {
    const wait = this.orgApi.wait(orgId);
    if (wait === 0) this.orgApi.add(orgId);
    return verdict(wait);
  }
}
