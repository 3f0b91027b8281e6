// Builds a gateway: configuration → data folder → services → HTTP server. Used by `npm start`,
// `make run` and every end-to-end test (port 0). Without routes in the configuration the built-in
// simulator is started beside it and every route points there, served as managed.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { RouteName } from './routes.ts';
import { type Clock, systemClock } from './clock.ts';
import { type GatewayConfig, ROUTES } from './config.ts';
import { Catalog } from './catalog/catalog.ts';
import { openStore, type Store } from './store/store.ts';
import { refuseLostDatabase } from './store/db.ts';
import { AbuseLimiter } from './limits/abuse.ts';
import { vendorA } from './providers/openai.ts';
import { vendorB } from './providers/gemini.ts';
import { vendorC } from './providers/anthropic.ts';
import { cloudA } from './providers/vertex.ts';
import { cloudB } from './providers/bedrock.ts';
import type { RouteAdapter } from './providers/types.ts';
import { CODECS } from './formats/index.ts';
import { Pools } from './stream/pools.ts';
import { FlexScheduler } from './routing/flex-policy.ts';
import { LaunchCalendar, LoopCost } from './routing/launch-calendar.ts';
import { createLogger, type Logger } from './log.ts';
import { createMetrics } from './metrics.ts';
import { Usage } from './usage/service.ts';
import { openSqliteUsageStore } from './usage/sqlite.ts';
import { openPostgresUsageStore } from './usage/postgres.ts';
import { createHttpServer } from './http/server.ts';
import { stopBodyRead } from './http/body.ts';
import { GatewayError } from './errors.ts';
import { clientIpResolver } from './http/client-ip.ts';
import type { Simulator } from './simulator/server.ts';
import { InFlightSet, OpenRequests, type Services } from './services.ts';
import type { TimerClock } from './machine/request-machine.ts';
import type { ReleasedHold } from './ledger/types.ts';
import { sealPeers } from './ledger/liveness.ts';

export interface GatewayOptions {
  config: GatewayConfig;
  dataDir: string;
  /** `postgres://…`: the shared store (GATEWAY_DATABASE_URL); absent: SQLite in dataDir. */
  databaseUrl?: string;
  /** Stable across restarts (GATEWAY_INSTANCE_ID, default host:port): a restarted process releases
   *  the holds its crashed predecessor left. Absent: a fresh id (no predecessor). */
  instanceId?: string;
  adminToken?: string;
  secret?: string;
  /** GATEWAY_SECRET_KEY_PREVIOUS: secrets that still open provider keys during a rotation. */
  previousSecrets?: string[];
  port?: number;
  host?: string;
  clock?: Clock;
  timerClock?: TimerClock;
  random?: () => number;
  logger?: Logger;
  /** How long shutdown waits for streams to finish before aborting them. */
  drainMs?: number;
  /** GATEWAY_NEW_DATABASE=1: start on an empty SQLite database even where the data folder shows
   *  an earlier gateway's state (lib/store/db.ts refuseLostDatabase). */
  newDatabase?: boolean;
  /** false: every hedge keeps its own point, however many fall on one instant (bench/hedge-burst.ts
   *  measures the launch calendar against it). Default true. */
  hedgeCalendar?: boolean;
}

export interface Gateway {
  url: string;
  port: number;
  server: Server;
  services: Services;
  simulator?: Simulator;
  close(): Promise<void>;
}

export async function createGateway(opts: GatewayOptions): Promise<Gateway> {
  const config = opts.config;
  const clock = opts.clock ?? systemClock;
  const log = opts.logger ?? createLogger();
  // Before anything is written into the data folder (the simulator's key is, just below).
  if (!opts.databaseUrl) refuseLostDatabase(opts.dataDir, opts.newDatabase ?? false);
  let simulator: Simulator | undefined;
  if (config.useSimulator) {
    const creds = simulatorCredentials(opts.dataDir);
    const aws = (creds.cloud_b as { key: { access_key_id: string; secret_access_key: string } }).key;
    // Loaded only when used: a gateway pointed at real providers never pays for the simulator's code.
    const { startSimulator } = await import('./simulator/server.ts');
    simulator = await startSimulator({
      now: () => clock.now(),
      ...config.simulator,
      awsSecrets: { [aws.access_key_id]: aws.secret_access_key },
    });
    const sim = simulator.url;
    (creds.cloud_a as { key: { token_uri: string } }).key.token_uri = `${sim}/token`;
    config.routes = Object.fromEntries(ROUTES.map((route) => [route, { base_url: sim }]));
    config.managed = Object.fromEntries((Object.keys(config.managed) as RouteName[]).map((route) => {
      const credential = creds[route];
      return [route, typeof credential === 'string' ? { key: credential } : (credential as { key: unknown })];
    }));
  }
  const owner = { instanceId: opts.instanceId ?? randomUUID(), processId: randomUUID() };
  // A store that cannot open, or a secret that opens none of its provider keys, stops the start
  // (and the simulator started for it).
  let store: Store | undefined;
  try {
    store = await openStore({
      databaseUrl: opts.databaseUrl, dataDir: opts.dataDir, secret: opts.secret, previousSecrets: opts.previousSecrets, config, clock, log, owner,
    });
    const { checked, unreadable } = await store.orgs.checkSecret();
    if (unreadable > 0) {
      log.warn({ checked, unreadable }, `${unreadable} of ${checked} stored provider keys do not open with this secret: `
        + 'their requests fail with provider_key_unreadable until the key is set again or the secret that sealed it is restored');
    }
  } catch (err) {
    await store?.close().catch(() => {});
    await simulator?.close().catch(() => {});
    throw err;
  }
  const { orgs, ledger } = store;
  // Usage records go to the same store as the ledger: the SQLite file, or the shared PostgreSQL
  // database (through the store's pool), where every process sees every process's records.
  const usageStore = store.pool ? openPostgresUsageStore(store.pool) : openSqliteUsageStore(store.sqlite!);
  const metrics = createMetrics();
  const inflight = new InFlightSet();
  const services: Services = {
    config, clock, timerClock: opts.timerClock, random: opts.random ?? Math.random,
    catalog: new Catalog(config.models),
    store, orgs, ledger,
    abuse: new AbuseLimiter(config.abuse_limits, clock),
    adapters: buildAdapters(config, log),
    codecs: CODECS,
    pools: new Pools(config, metrics),
    scheduler: new FlexScheduler(
      config.flex_policy, config.hedge, () => clock.now(),
      opts.hedgeCalendar === false ? undefined : new LaunchCalendar(new LoopCost(() => inflight.total)), metrics.hedgeAdvanced,
    ),
    flexSlots: store.flexSlots,
    log,
    metrics,
    usage: new Usage(usageStore, config.usage, metrics, log, clock),
    clientIp: clientIpResolver(config.trust_proxy),
    inflight,
    open: new OpenRequests(),
    shuttingDown: false,
    drainOver: false,
  };
  metrics.watch({ open: () => services.open.size, inFlight: () => services.inflight.size, routes: () => services.pools.load() });
  // Live holds are renewed by their own process, recording what each has delivered so far; each
  // renewal also refreshes the process's heartbeat (ledger/liveness.ts). Holds of dead processes
  // lapse after their lease, released by whichever process sweeps first (one at a time with
  // PostgreSQL).
  let sweeping = false;
  const sweepOnce = async (): Promise<void> => {
    const live = [...services.inflight].flatMap((entry) => (
      entry.holdId ? [{ holdId: entry.holdId, deliveredMicroUsd: entry.delivered?.() ?? 0 }] : []
    ));
    await ledger.renew(live, clock.now());
    for (const hold of await ledger.expireLeases(clock.now())) log.warn(holdFields(hold), 'hold lease expired, released');
  };

  const server = createHttpServer(services, opts.adminToken);
  try {
    await listen(server, opts.port ?? 0, opts.host ?? '127.0.0.1');
  } catch (err) {
    // A second start on a port in use: it never served, so it touches nothing of the process
    // that listens there (not its holds either), and lets go of what it opened.
    await services.usage.close().catch(() => {});
    await services.pools.close().catch(() => {});
    await store.close().catch(() => {});
    await simulator?.close().catch(() => {});
    throw err;
  }
  // Once listening (so never for a start that fails to), this process registers and releases at
  // once what its instance's earlier processes left, if they are provably gone (a crash and
  // restart: their pid is dead on this host, or their heartbeat older than the lease), charged for
  // the output delivered by their last renewal. A live predecessor's holds (a restart while it
  // still drains) stay its own, renewed and settled by it. It registers with the fingerprint of
  // the secret it seals provider keys with, and says when another running process seals with a
  // different one.
  try {
    for (const hold of await ledger.releasePredecessors(clock.now(), orgs.sealFingerprints.current)) {
      log.warn(holdFields(hold), 'hold of a previous process released at start');
    }
  } catch (err) {
    log.error({ err }, 'releasing the holds of previous processes failed: they lapse with their lease');
  }
  await warnSealDisagreement(services).catch((err) => log.error({ err }, 'comparing the sealing secrets of the running processes failed'));
  const sweep = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepOnce().catch((err) => log.error({ err }, 'lease sweep failed')).finally(() => { sweeping = false; });
  }, config.ledger.hold_renew_ms ?? Math.max(1_000, Math.floor(config.ledger.hold_lease_ms / 3)));
  sweep.unref();
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';

  let closed = false;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    port, server, services, simulator,
    async close() {
      if (closed) return;
      closed = true;
      services.shuttingDown = true;
      clearInterval(sweep);
      // New connections are refused; kept ones must not bring their next request here: every
      // answer written from now on says Connection: close (lib/http/server.ts GatewayResponse),
      // and a connection whose answer was already under way (a stream) is closed as soon as that
      // answer ends, not kept for keep-alive's 65 s. (node's server.close() closes the idle ones.)
      server.close();
      const closeWhenIdle = (message: unknown): void => {
        if ((message as { server?: unknown }).server === server) setImmediate(() => server.closeIdleConnections());
      };
      subscribe(RESPONSE_FINISH, closeWhenIdle);
      // Drain: requests get drainMs to finish, then what is left ends: streams in flight are
      // aborted (each settles its hold); a body still arriving is no longer waited for, and a
      // request not yet racing is refused before anything goes upstream (lib/http/pipeline.ts
      // check, race), each answered 503 shutting_down. Only a step already awaiting the store
      // (key, plan, admission) is waited for, so that its hold is settled before the ledger closes.
      const timer = new Promise((resolve) => setTimeout(resolve, opts.drainMs ?? config.timeouts.shutdown_drain_ms).unref());
      await Promise.race([services.open.whenNone(), timer]);
      services.drainOver = true;
      for (const entry of services.inflight) entry.abort();
      for (const request of services.open) stopBodyRead(request.req, new GatewayError('shutting_down'));
      await services.open.whenNone();
      server.closeAllConnections();
      unsubscribe(RESPONSE_FINISH, closeWhenIdle);
      await services.pools.close();
      await services.usage.close();   // every request has ended: its record is queued; write them all
      await store.close();
      await simulator?.close();
    },
  };
}

/** node's diagnostics channel of every server answer's end (request, response, socket, server). */
const RESPONSE_FINISH = 'http.server.response.finish';

/** Resolves once the server listens; rejects (EADDRINUSE, EACCES) instead of crashing the process. */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
}

function buildAdapters(config: GatewayConfig, log: Logger): Record<RouteName, RouteAdapter> {
  const base = (r: RouteName): string => config.routes[r]?.base_url ?? `http://127.0.0.1:1/${r}-not-configured`;
  const cap = config.hold.default_max_output_tokens;
  return {
    vendor_a: vendorA(base('vendor_a')),
    vendor_b: vendorB(base('vendor_b')),
    vendor_c: vendorC(base('vendor_c'), cap),
    cloud_a: cloudA(base('cloud_a'), {
      managed: config.managed.cloud_a, allowedTokenUris: config.routes.cloud_a?.allowed_token_uris, log,
      timeouts: config.timeouts, egressProxy: config.egress_proxy,
    }),
    cloud_b: cloudB(base('cloud_b'), cap),
  };
}

/** Another running process that seals provider keys with a different secret cannot open the keys
 *  this one sets, nor this one its keys. During a rotation that is expected of the processes not
 *  restarted yet (they seal with this one's previous secret); any other is a mistyped or mismatched
 *  GATEWAY_SECRET_KEY. Said at start; the process serves on, and a reseal is refused meanwhile. */
async function warnSealDisagreement(svc: Services): Promise<void> {
  const mine = svc.orgs.sealFingerprints;
  const peers = sealPeers(await svc.ledger.liveProcesses(svc.clock.now()), mine);
  if (peers.different === 0) return;
  const why = peers.onPrevious === peers.different
    ? 'this process\'s GATEWAY_SECRET_KEY_PREVIOUS (a rotation under way): restart them with the new secret before the reseal'
    : 'a secret this process has neither as GATEWAY_SECRET_KEY nor as a previous one: provider keys set through one side do not '
      + 'open on the other; compare seal_fingerprint in GET /admin/v1/processes';
  svc.log.warn({ seal_fingerprint: mine.current, other_processes: peers.others, different: peers.different, on_previous: peers.onPrevious },
    `${peers.different} of the ${peers.others} other running processes seal provider keys with ${why} (README "Rotating GATEWAY_SECRET_KEY")`);
}

/** A released hold as the log writes it. */
function holdFields(hold: ReleasedHold): Record<string, unknown> {
  return { hold: hold.holdId, org: hold.orgId, amount_micro_usd: hold.amountMicroUsd, charged_micro_usd: hold.chargedMicroUsd };
}

/** Credentials for the built-in simulator: plain keys for direct routes, a freshly generated
 *  service account for cloud_a (its token_uri set to the simulator's once it listens), AWS keys
 *  for cloud_b (the simulator verifies their SigV4 signatures). */
export function simulatorCredentials(dataDir?: string): Record<RouteName, unknown> {
  return {
    vendor_a: 'sim-key-vendor-a',
    vendor_b: 'sim-key-vendor-b',
    vendor_c: 'sim-key-vendor-c',
    cloud_a: {
      key: {
        type: 'service_account', client_email: 'gateway@sim-project.iam.gserviceaccount.com', project_id: 'sim-project',
        private_key: simulatorPrivateKey(dataDir), token_uri: '',
      },
      location: 'us-central1',
    },
    cloud_b: {
      key: {
        access_key_id: 'AKIDSIM' + randomBytes(4).toString('hex').toUpperCase(),
        secret_access_key: randomBytes(20).toString('base64'),
      },
      region: 'us-east-1',
    },
  };
}

/** The simulator service account's RSA key, generated once per data folder (a 2048-bit key takes
 *  ≈ 250 ms, most of a cold start) and kept there (0600); a fresh one without a data folder. */
function simulatorPrivateKey(dataDir: string | undefined): string {
  const file = dataDir ? join(dataDir, 'simulator-sa.pem') : undefined;
  if (file && existsSync(file)) return readFileSync(file, 'utf8');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  if (file) { mkdirSync(dataDir!, { recursive: true }); writeFileSync(file, pem, { mode: 0o600 }); }
  return pem;
}
