// Organizations, their API keys (stored only as SHA-256 hashes) and their own provider keys
// (sealed with SecretBox). Every read is scoped by org id: no query crosses organizations.
// The rows live in an adapter (SQLite: sqlite-orgs.ts, PostgreSQL: postgres-orgs.ts); this class
// keeps what is the same for both: key generation, hashing, sealing and the lookup caches.
import { randomBytes } from 'node:crypto';
import type { RouteName } from '../routes.ts';
import { GatewayError } from '../errors.ts';
import { type SecretBox, UnreadableSecretError, sha256 } from './secrets.ts';

export const KEY_PREFIX = 'flex_live_';

/** What a key may do (docs/usage.md "Scopes"): every key runs inference and reads its own
 *  organization's usage and limits; only a key with `manage` may create or revoke keys and set
 *  provider keys through /v1/organization/…. */
export type Scope = 'inference' | 'manage';
export const SCOPES: Scope[] = ['inference', 'manage'];

/** `defaultProvider`: an agent key's route chain for requests without `provider`, its route names
 *  separated by spaces, as stored. */
export interface ApiKeyRecord { id: string; orgId: string; defaultStartWithin: string | null; defaultProvider: string | null; scopes: string }

/** What an agent key supplies to a request that lacks the field (README "Agent keys"). */
export interface KeyDefaults { startWithin: string | null; provider: RouteName[] | null }

export interface ApiKeyInfo {
  id: string; scopes: Scope[]; default_start_within: string | null; default_provider: RouteName[] | null; created_at: number;
  revoked_at: number | null;
}

type MaybePromise<T> = T | Promise<T>;

export interface OrgInfo { id: string; name: string; created_at: number }

/** The rows of one storage engine. Writes that other processes cache (revocation, provider keys)
 *  tell them so where the engine can (PostgreSQL NOTIFY); the SQLite adapter answers synchronously. */
export interface OrgRows {
  insertOrg(id: string, name: string, nowMs: number): MaybePromise<void>;
  orgExists(id: string): MaybePromise<boolean>;
  org(id: string): MaybePromise<OrgInfo | undefined>;
  listOrgs(): MaybePromise<OrgInfo[]>;
  /** Up to `limit` organizations after `after` in the list's order (creation time, then id). */
  orgsAfter(after: OrgInfo | null, limit: number): MaybePromise<OrgInfo[]>;
  insertKey(id: string, orgId: string, hash: string, defaults: KeyDefaults, nowMs: number, scopes: string): MaybePromise<void>;
  keyByHash(hash: string): MaybePromise<ApiKeyRecord | undefined>;
  listKeys(orgId: string): MaybePromise<KeyRow[]>;
  /** Revokes a live key; answers its hash (so the caches can drop that one entry), or undefined
   *  when no live key has that id. */
  revokeKey(keyId: string, nowMs: number): MaybePromise<string | undefined>;
  revokeOrgKey(orgId: string, keyId: string, nowMs: number): MaybePromise<string | undefined>;
  listProviderKeys(orgId: string): MaybePromise<Array<{ route: RouteName; updated_at: number }>>;
  putProviderKey(orgId: string, route: RouteName, sealed: string, nowMs: number): MaybePromise<void>;
  providerKey(orgId: string, route: RouteName): MaybePromise<string | undefined>;
  providerRoutes(orgId: string): MaybePromise<RouteName[]>;
  deleteProviderKey(orgId: string, route: RouteName): MaybePromise<boolean>;
  /** Every organization's sealed provider keys, a page at a time in (org, route) order after `after`. */
  sealedProviderKeys(after: SealedKeyId | null, limit: number): MaybePromise<SealedKey[]>;
  /** Replaces each sealed key that is still `from` (a key set meanwhile is kept), in one write;
   *  answers the keys it replaced. */
  replaceSealed(changes: SealedChange[]): MaybePromise<SealedKeyId[]>;
}

/** A key as its table stores it: scopes and default routes as space-separated names. */
export type KeyRow = Omit<ApiKeyInfo, 'scopes' | 'default_provider'> & { scopes: string; default_provider: string | null };

/** Route names as a key row stores them (space-separated), or null for none. */
export const storedRoutes = (routes: RouteName[] | null): string | null => (routes ? routes.join(' ') : null);

export interface SealedKeyId { org_id: string; route: RouteName }
export interface SealedKey extends SealedKeyId { sealed: string }
export interface SealedChange extends SealedKeyId { from: string; to: string }

/** What POST /admin/v1/provider-keys/reseal did (README "Rotating GATEWAY_SECRET_KEY"): keys sealed
 *  again, keys already sealed with the current secret, keys set (by a process still on a previous
 *  secret) while it ran and not resealed, so a second reseal is due, and keys no secret opens. */
export interface ResealReport { resealed: number; current: number; changed: number; unreadable: SealedKeyId[] }

/** Provider keys a reseal (or the start's check) reads at a time. */
const RESEAL_PAGE = 500;

const newId = (prefix: string): string => prefix + randomBytes(12).toString('base64url');

/** How long this process trusts a cached key lookup. A revoke or provider-key change made through
 *  this process takes effect at once; through another process sharing PostgreSQL, as soon as its
 *  NOTIFY arrives (well under 1 s); when notifications are not available (SQLite shared by several
 *  processes, or the listening connection down), within this many milliseconds. */
export const KEY_CACHE_MS = 5_000;
/** Entries each lookup cache holds at most; past it the oldest goes. Only keys that exist are
 *  cached (a wrong key is not: see findKey), so this is room for every live key of a large
 *  installation, not a budget a scanner of invalid keys can spend. */
export const KEY_CACHE_MAX = 100_000;

/** Sets `key` as the newest entry: deleted first, so the map's order is the entries' age order
 *  (Map.set on a present key keeps its old place), and the oldest dropped when the map is full. */
function setNewest<K, V>(cache: Map<K, V>, key: K, value: V): void {
  cache.delete(key);
  if (cache.size >= KEY_CACHE_MAX) cache.delete(cache.keys().next().value as K);
  cache.set(key, value);
}

export class OrgStore {
  private readonly keys = new Map<string, { record: ApiKeyRecord; at: number }>();
  private readonly providerKeys = new Map<string, { credential: unknown; at: number }>();
  /** Lookups in flight: a burst of requests with one uncached key asks the store once. */
  private readonly pending = new Map<string, Promise<unknown>>();
  /** Bumped by every revocation: a key lookup that was in flight meanwhile may have read the row
   *  before the revoke, so its answer is returned but not cached. */
  private keysEpoch = 0;

  constructor(private readonly rows: OrgRows, private readonly box: SecretBox) {}

  /** Which secret seals provider keys here and which still open them, by fingerprint (secrets.ts). */
  get sealFingerprints(): SecretBox['fingerprints'] { return this.box.fingerprints; }

  /** An id for createOrg, known before the organization is stored (its ledger row comes first). */
  newOrgId(): string { return newId('org_'); }

  async createOrg(name: string, nowMs: number, id = this.newOrgId()): Promise<{ id: string }> {
    await stored(() => this.rows.insertOrg(id, name, nowMs));
    return { id };
  }

  async orgExists(id: string): Promise<boolean> { return stored(() => this.rows.orgExists(id)); }

  async org(id: string): Promise<OrgInfo | undefined> { return stored(() => this.rows.org(id)); }

  async listOrgs(): Promise<OrgInfo[]> { return stored(() => this.rows.listOrgs()); }

  /** A page of the organization list after the one named `afterId` (undefined when no such
   *  organization exists), read from the store a page at a time: organizations are never deleted,
   *  so a cursor's organization is always there. `more` says whether another page follows. */
  async orgsPage(afterId: string | null, limit: number): Promise<{ page: OrgInfo[]; more: boolean } | undefined> {
    const after = afterId === null ? null : await this.org(afterId);
    if (after === undefined) return undefined;
    const rows = await stored(() => this.rows.orgsAfter(after, limit + 1));
    return { page: rows.slice(0, limit), more: rows.length > limit };
  }

  /** Issues a key; the clear key is returned once and never stored. */
  async createKey(
    orgId: string, defaults: KeyDefaults, nowMs: number, scopes: Scope[] = ['inference'],
  ): Promise<{ id: string; key: string; scopes: Scope[] }> {
    const key = KEY_PREFIX + randomBytes(24).toString('base64url');
    const id = newId('key_');
    const sorted = SCOPES.filter((scope) => scope === 'inference' || scopes.includes(scope));
    await stored(() => this.rows.insertKey(id, orgId, sha256(key), defaults, nowMs, sorted.join(' ')));
    return { id, key, scopes: sorted };
  }

  /** The org's keys, newest first: ids and metadata only (the clear key is never stored). */
  async listKeys(orgId: string): Promise<ApiKeyInfo[]> {
    return (await stored(() => this.rows.listKeys(orgId))).map((key) => ({
      ...key, scopes: key.scopes.split(' ') as Scope[], default_provider: (key.default_provider?.split(' ') as RouteName[] | undefined) ?? null,
    }));
  }

  /** Revokes a key of this organization only (another org's key id is "not found"). Only that
   *  key's cached lookup is dropped, and only once the database took the revoke: a revoke the
   *  store refuses (an outage, an unknown id) leaves every other key's cached lookup in place,
   *  so one organization's request cannot cut the others off the cache they run on while the
   *  database is away. */
  async revokeOrgKey(orgId: string, keyId: string, nowMs: number): Promise<boolean> {
    return this.forgetRevoked(await stored(() => this.rows.revokeOrgKey(orgId, keyId, nowMs)));
  }

  /** The operator's revoke (any organization's key), with the same cache rule. */
  async revokeKey(keyId: string, nowMs: number): Promise<boolean> {
    return this.forgetRevoked(await stored(() => this.rows.revokeKey(keyId, nowMs)));
  }

  private forgetRevoked(hash: string | undefined): boolean {
    if (hash === undefined) return false;
    this.forgetKeys(hash);
    return true;
  }

  /** Routes with an own key and when it was last set; never the key. */
  async listProviderKeys(orgId: string): Promise<Array<{ route: RouteName; updated_at: number }>> {
    return stored(() => this.rows.listProviderKeys(orgId));
  }

  /** The key's record, from the cache while it is fresh. When the store cannot be read, a cached
   *  entry of any age still answers (own-key inference keeps working through a database outage);
   *  a key never seen is refused with 503 `store_unavailable`. A key the store does not know (or
   *  no longer knows: revoked) is not cached, and its old entry is dropped: a stream of distinct
   *  wrong keys would otherwise push the valid keys out of the cache the outage rule relies on. A
   *  burst of one wrong key still asks the store once (the shared lookup in flight, `once`), and
   *  an address that keeps failing is locked out before the store is asked (lib/http/auth.ts). */
  async findKey(clearKey: string): Promise<ApiKeyRecord | undefined> {
    if (!clearKey.startsWith(KEY_PREFIX)) return undefined;
    const hash = sha256(clearKey);
    const now = Date.now();
    const hit = this.keys.get(hash);
    if (hit && now - hit.at < KEY_CACHE_MS) return hit.record;
    const epoch = this.keysEpoch;
    let record: ApiKeyRecord | undefined;
    try {
      record = await this.once('k' + hash, () => this.rows.keyByHash(hash));
    } catch (err) {
      if (hit) return hit.record;
      throw unavailable(err);
    }
    if (epoch !== this.keysEpoch) return record;
    if (record) setNewest(this.keys, hash, { record, at: now }); else this.keys.delete(hash);
    return record;
  }

  /** Stores a provider key (a string, or a cloud credential object) sealed. */
  async setProviderKey(orgId: string, route: RouteName, credential: unknown, nowMs: number): Promise<void> {
    this.providerKeys.delete(orgId + '\0' + route);
    const sealed = this.box.seal(JSON.stringify(credential));
    await stored(() => this.rows.putProviderKey(orgId, route, sealed, nowMs));
  }

  /** The org's own key for a route, decrypted (cached briefly in memory, never written anywhere);
   *  stale-if-unreadable like findKey. */
  async providerKey(orgId: string, route: RouteName): Promise<unknown | undefined> {
    const cacheKey = orgId + '\0' + route;
    const now = Date.now();
    const hit = this.providerKeys.get(cacheKey);
    if (hit && now - hit.at < KEY_CACHE_MS) return hit.credential;
    let sealed: string | undefined;
    try {
      sealed = await this.once('p' + cacheKey, () => this.rows.providerKey(orgId, route));
    } catch (err) {
      if (hit) return hit.credential;
      throw unavailable(err);
    }
    // "No own key" is cached too: it is the answer for every managed request, and the cache key is
    // an authenticated organization's, so its entries are bounded by organizations × routes.
    const credential = sealed !== undefined ? JSON.parse(this.openSealed(sealed)) : undefined;
    setNewest(this.providerKeys, cacheKey, { credential, at: now });
    return credential;
  }

  /** A key this gateway's secrets cannot open is the operator's to fix (the wrong
   *  GATEWAY_SECRET_KEY, a lost secret.key): said so, not an internal error. */
  private openSealed(sealed: string): string {
    try {
      return this.box.open(sealed);
    } catch (err) {
      if (err instanceof UnreadableSecretError) throw new GatewayError('provider_key_unreadable');
      throw err;
    }
  }

  /** At start: every stored provider key is opened (a page at a time; ≈ 10 µs a key). A secret that
   *  opens none of them is the wrong one (a mistyped GATEWAY_SECRET_KEY, a lost secret.key) and
   *  every own-key request would fail: refuse to start. Some that do not open (sealed by a secret
   *  since lost, or by a previous secret dropped before the reseal finished) are counted and the
   *  start goes on: the caller logs them. Deterministic, so a restart never decides differently. */
  async checkSecret(): Promise<{ checked: number; unreadable: number }> {
    let checked = 0;
    let unreadable = 0;
    for await (const page of this.sealedPages(false)) {
      checked += page.length;
      for (const { sealed } of page) if (!opens(this.box, sealed)) unreadable++;
    }
    if (checked > 0 && unreadable === checked) {
      throw new Error(`GATEWAY_SECRET_KEY (or, without it, the data folder's secret.key) opens none of the ${checked} stored `
        + 'provider keys: it is not the secret that sealed them, or a previous one is still needed in GATEWAY_SECRET_KEY_PREVIOUS '
        + '(README "Rotating GATEWAY_SECRET_KEY")');
    }
    return { checked, unreadable };
  }

  /** Seals every provider key sealed by a previous secret again with the current one, so the
   *  previous secret can be retired. The plain keys are unchanged: no cache needs dropping. */
  async resealProviderKeys(): Promise<ResealReport> {
    const report: ResealReport = { resealed: 0, current: 0, changed: 0, unreadable: [] };
    for await (const page of this.sealedPages(true)) {
      const changes: SealedChange[] = [];
      for (const { org_id, route, sealed } of page) {
        let to: string | undefined;
        try { to = this.box.resealed(sealed); } catch { report.unreadable.push({ org_id, route }); continue; }
        if (to === undefined) report.current++; else changes.push({ org_id, route, from: sealed, to });
      }
      if (changes.length > 0) {
        const replaced = (await stored(() => this.rows.replaceSealed(changes))).length;
        report.resealed += replaced;
        report.changed += changes.length - replaced;   // set meanwhile, with whichever secret that process had
      }
    }
    return report;
  }

  /** Every stored provider key, RESEAL_PAGE at a time in key order. `serving`: the process serves
   *  meanwhile, so a read that fails is the caller's 503, and (SQLite answering synchronously) the
   *  event loop turns between pages; at start neither applies. */
  private async *sealedPages(serving: boolean): AsyncGenerator<SealedKey[]> {
    let after: SealedKeyId | null = null;
    for (;;) {
      const page: SealedKey[] = serving
        ? await stored(() => this.rows.sealedProviderKeys(after, RESEAL_PAGE))
        : await this.rows.sealedProviderKeys(after, RESEAL_PAGE);
      yield page;
      if (page.length < RESEAL_PAGE) return;
      after = page.at(-1)!;
      if (serving) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async providerRoutes(orgId: string): Promise<Set<RouteName>> {
    return new Set(await this.rows.providerRoutes(orgId));
  }

  async deleteProviderKey(orgId: string, route: RouteName): Promise<boolean> {
    this.providerKeys.delete(orgId + '\0' + route);
    return stored(() => this.rows.deleteProviderKey(orgId, route));
  }

  private once<T>(key: string, read: () => T | Promise<T>): T | Promise<T> {
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight as Promise<T>;
    const answer = read();
    if (!(answer instanceof Promise)) return answer;    // SQLite answers at once: nothing to share
    const shared = answer.finally(() => this.pending.delete(key));
    this.pending.set(key, shared);
    return shared;
  }

  /** Drops the cached lookup of one revoked key (by its hash), or every cached key lookup when the
   *  revoked key is not named (a NOTIFY that does not carry it). */
  forgetKeys(hash?: string): void {
    this.keysEpoch++;
    if (hash === undefined) this.keys.clear(); else this.keys.delete(hash);
  }
  forgetProviderKey(orgId: string, route: string): void { this.providerKeys.delete(orgId + '\0' + route); }
  forgetAll(): void { this.forgetKeys(); this.providerKeys.clear(); }
}

function opens(box: SecretBox, sealed: string): boolean {
  try { box.open(sealed); return true; } catch { return false; }
}

/** A read or write the caller cannot do without: a store that fails answers 503
 *  `store_unavailable` (with the cause kept for the log), not a 500. */
async function stored<T>(call: () => MaybePromise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw unavailable(err);
  }
}

function unavailable(err: unknown): GatewayError {
  const error = new GatewayError('store_unavailable');
  (error as { cause?: unknown }).cause = err;
  return error;
}
