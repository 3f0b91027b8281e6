// OrgStore's lookup caches (lib/store/orgs.ts) over a fake rows backend: a cached key of any age
// answers through a store outage, so a stream of distinct wrong keys (a scanner) must not push the
// valid keys out, the maps stay bounded (the oldest entry goes, not all of them), and a refreshed
// entry counts as new.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { KEY_CACHE_MAX, KEY_CACHE_MS, KEY_PREFIX, OrgStore, type ApiKeyRecord, type OrgRows } from '../../lib/store/orgs.ts';
import { SecretBox, sha256 } from '../../lib/store/secrets.ts';
import { GatewayError } from '../../lib/errors.ts';

const box = new SecretBox('test-secret');
const firstSealed = box.seal(JSON.stringify('own-org_first-vendor_a'));
const otherSealed = box.seal(JSON.stringify('own-other'));
const realNow = Date.now;
let now = 1_000_000;
/** The caches read Date.now(): tests that age entries move `now` instead of waiting. */
const clock = (): void => { Date.now = () => now; };
afterEach(() => { Date.now = realNow; });

/** A rows backend: `valid` decides which key hashes exist (all of them by default), every org has
 *  an own key on every route, `async` answers as PostgreSQL does (later, not at once), and `down`
 *  makes every read throw, as a store outage does. */
function backend(opts: { valid?: (hash: string) => boolean; async?: boolean } = {}) {
  const state = { down: false, keyReads: 0 };
  const answer = <T>(value: T): T | Promise<T> => (opts.async ? new Promise((resolve) => setTimeout(() => resolve(value), 5)) : value);
  const rows = {
    keyByHash(hash: string) {
      state.keyReads++;
      if (state.down) throw new Error('database down');
      const record: ApiKeyRecord | undefined = (opts.valid ?? (() => true))(hash)
        ? { id: 'key_' + hash.slice(0, 8), orgId: 'org_1', defaultStartWithin: null, defaultProvider: null, scopes: 'inference' } : undefined;
      return answer(record);
    },
    providerKey(orgId: string) {
      if (state.down) throw new Error('database down');
      return answer(orgId === 'org_first' ? firstSealed : otherSealed);
    },
  };
  return { state, store: new OrgStore(rows as unknown as OrgRows, box) };
}

let serial = 0;
const randomKey = (): string => `${KEY_PREFIX}${randomBytes(8).toString('hex')}${serial++}`;
const cacheSize = (store: OrgStore, map: 'keys' | 'providerKeys'): number => (store as unknown as Record<string, Map<unknown, unknown>>)[map]!.size;
const refused = (err: unknown): boolean => err instanceof GatewayError && err.code === 'store_unavailable';

test('distinct wrong keys past the cache size leave a valid key cached: it still answers through an outage', async () => {
  clock();
  const valid = randomKey();
  const { state, store } = backend({ valid: (hash) => hash === sha256(valid) });
  assert.equal((await store.findKey(valid))?.orgId, 'org_1');
  for (let i = 0; i <= KEY_CACHE_MAX; i++) assert.equal(await store.findKey(randomKey()), undefined);
  assert.ok(cacheSize(store, 'keys') <= KEY_CACHE_MAX, `${cacheSize(store, 'keys')} cached key lookups`);
  now += KEY_CACHE_MS + 1;          // the entry is stale: the store is asked first
  state.down = true;
  assert.equal((await store.findKey(valid))?.orgId, 'org_1', 'served from the cache during the outage');
  await assert.rejects(store.findKey(randomKey()), refused);
});

test('a wrong key is not cached; a burst of it asks the store once', async () => {
  const { state, store } = backend({ valid: () => false, async: true });
  const wrong = randomKey();
  const answers = await Promise.all(Array.from({ length: 50 }, () => store.findKey(wrong)));
  assert.ok(answers.every((a) => a === undefined));
  assert.equal(state.keyReads, 1, 'one read for the burst');
  assert.equal(cacheSize(store, 'keys'), 0);
  assert.equal(await store.findKey(wrong), undefined);
  assert.equal(state.keyReads, 2, 'asked again: a wrong key is never answered from the cache');
});

test('a full key cache drops its oldest entry; a refreshed entry counts as new', async () => {
  clock();
  const { state, store } = backend();
  const first = randomKey();
  const second = randomKey();
  await store.findKey(first);
  await store.findKey(second);
  for (let i = 2; i < KEY_CACHE_MAX; i++) await store.findKey(randomKey());
  assert.equal(cacheSize(store, 'keys'), KEY_CACHE_MAX);
  now += KEY_CACHE_MS + 1;
  await store.findKey(first);       // stale: read again, now the newest entry
  await store.findKey(randomKey()); // one past the maximum: the oldest (second) goes
  assert.equal(cacheSize(store, 'keys'), KEY_CACHE_MAX);
  state.down = true;
  assert.ok(await store.findKey(first), 'the refreshed key is still cached');
  await assert.rejects(store.findKey(second), refused, 'the oldest entry was dropped');
});

test('a full provider-key cache drops its oldest entry; a refreshed entry counts as new', async () => {
  clock();
  const { state, store } = backend();
  await store.providerKey('org_first', 'vendor_a');
  await store.providerKey('org_second', 'vendor_a');
  for (let i = 2; i < KEY_CACHE_MAX; i++) await store.providerKey(`org_${i}`, 'vendor_a');
  assert.equal(cacheSize(store, 'providerKeys'), KEY_CACHE_MAX);
  now += KEY_CACHE_MS + 1;
  await store.providerKey('org_first', 'vendor_a');
  await store.providerKey('org_last', 'vendor_a');
  assert.equal(cacheSize(store, 'providerKeys'), KEY_CACHE_MAX);
  state.down = true;
  assert.equal(await store.providerKey('org_first', 'vendor_a'), 'own-org_first-vendor_a');
  await assert.rejects(store.providerKey('org_second', 'vendor_a'), refused);
});
