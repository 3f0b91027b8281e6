// `npm start`: the gateway alone, configured by environment.
//   PORT (8080), HOST (127.0.0.1), GATEWAY_DATA_DIR (./data), GATEWAY_ADMIN_TOKEN,
//   GATEWAY_CONFIG (a JSON file validated by schemas/config.json), GATEWAY_SECRET_KEY,
//   GATEWAY_SECRET_KEY_PREVIOUS (secrets a rotation moves away from, comma-separated),
//   GATEWAY_DATABASE_URL (postgres://…: the shared store for several gateways; unset: SQLite),
//   GATEWAY_INSTANCE_ID (stable name across restarts; default host:PORT),
//   GATEWAY_NEW_DATABASE=1 (start on an empty gateway.db where the data folder holds an earlier
//   gateway's secret.key or simulator key: lib/store/db.ts refuseLostDatabase),
//   HTTPS_PROXY, HTTP_PROXY, NO_PROXY (lower-case names too: upstream calls through a forward
//   proxy, lib/providers/egress-proxy.ts).
// Production runs the bundle (`npm start`: node with the V8 flags of README "Memory" on
// dist/lib/main.mjs, built by `make install`); tsx lib/main.ts in development.
import { hostname } from 'node:os';
import { loadConfig, type GatewayConfig } from './config.ts';
import { createGateway, type Gateway } from './app.ts';
import { createLogger } from './log.ts';
import { previousSecrets } from './store/secrets.ts';
import { databaseFile, DataFolderRefused } from './store/db.ts';
import { sqliteFailure } from './store/store.ts';
import { EgressProxy, egressProxyFromEnv } from './providers/egress-proxy.ts';

const dataDir = (): string => process.env.GATEWAY_DATA_DIR ?? './data';

export async function startFromEnv(overrides: Partial<GatewayConfig> = {}): Promise<Gateway> {
  const log = createLogger();
  const config = loadConfig(process.env.GATEWAY_CONFIG, { egress_proxy: egressProxyFromEnv(process.env), ...overrides });
  const via = new EgressProxy(config.egress_proxy).describe();
  if (via) log.info(via);
  if (!process.env.GATEWAY_ADMIN_TOKEN) log.warn('GATEWAY_ADMIN_TOKEN is not set: the admin API refuses every request');
  const gw = await createGateway({
    config,
    dataDir: dataDir(),
    newDatabase: process.env.GATEWAY_NEW_DATABASE === '1',
    databaseUrl: process.env.GATEWAY_DATABASE_URL || undefined,
    instanceId: process.env.GATEWAY_INSTANCE_ID || `${hostname()}:${process.env.PORT ?? 8080}`,
    adminToken: process.env.GATEWAY_ADMIN_TOKEN,
    secret: process.env.GATEWAY_SECRET_KEY,
    previousSecrets: previousSecrets(process.env.GATEWAY_SECRET_KEY_PREVIOUS),
    port: Number(process.env.PORT ?? 8080),
    host: process.env.HOST ?? '127.0.0.1',
    logger: log,
  });
  log.info({ url: gw.url, simulator: gw.simulator?.url ?? null }, 'gateway listening');
  const stop = (signal: string): void => {
    log.info({ signal }, 'shutting down: draining streams');
    // close(): stop accepting, let streams run up to timeouts.shutdown_drain_ms, settle, close the
    // ledger; then flush the log and exit 0.
    gw.close().then(
      () => { log.info('stopped'); log.flush(); process.exit(0); },
      (err) => { log.error({ err }, 'shutdown failed'); log.flush(); process.exit(1); },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return gw;
}

// Started directly (tsx lib/main.ts, node dist/lib/main.mjs) — not when imported by run-demo, whose
// bundle shares this module's import.meta.url.
if (/(^|\/)main\.(ts|mjs|js)$/.test(process.argv[1] ?? '')) {
  startFromEnv().catch((err) => { console.error(startFailure(err)); process.exit(1); });
}

/** Why the start failed, in an operator's terms where the cause is a common one (the URL, which may
 *  carry a password, is not repeated). */
function startFailure(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '3D000') return 'gateway: the database named in GATEWAY_DATABASE_URL does not exist; create it first (createdb), the gateway creates its tables';
  if (code === 'ECONNREFUSED' && process.env.GATEWAY_DATABASE_URL) return 'gateway: PostgreSQL refused the connection (GATEWAY_DATABASE_URL): is the server running and listening there?';
  if (err instanceof DataFolderRefused) return `gateway: ${err.message}`;
  const failure = process.env.GATEWAY_DATABASE_URL ? undefined : sqliteFailure(err);
  if (failure) {
    const file = databaseFile(dataDir());
    const why = `(${code}: ${(err as Error).message})`;
    if (failure === 'damaged') return `gateway: ${file} is damaged ${why}: restore it from a backup (README "The data folder")`;
    if (/^SQLITE_(READONLY|CANTOPEN|PERM)/.test(String(code))) {
      return `gateway: ${file} is not writable by uid ${process.getuid?.()} ${why}: give that user write access to the file and its folder (SQLite writes gateway.db-wal and -shm beside it)`;
    }
    if (code === 'SQLITE_FULL') return `gateway: the disk holding ${file} is full ${why}: free space there`;
    return `gateway: ${file} cannot be written ${why}`;
  }
  return err;
}
