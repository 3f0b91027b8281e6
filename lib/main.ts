// `npm start`: the gateway alone, configured by environment.
//   PORT (8080), HOST (127.0.0.1), GATEWAY_DATA_DIR (./data), GATEWAY_ADMIN_TOKEN,
//   GATEWAY_CONFIG (a JSON file validated by schemas/config.json), GATEWAY_SECRET_KEY,
//   GATEWAY_DATABASE_URL (postgres://…: the shared store for several gateways; unset: SQLite),
//   GATEWAY_INSTANCE_ID (stable name across restarts; default host:PORT).
import { hostname } from 'node:os';
import { loadConfig, type GatewayConfig } from './config.ts';
import { createGateway, type Gateway } from './app.ts';
import { createLogger } from './log.ts';

export async function startFromEnv(overrides: Partial<GatewayConfig> = {}): Promise<Gateway> {
  const log = createLogger();
  const config = loadConfig(process.env.GATEWAY_CONFIG, overrides);
  if (!process.env.GATEWAY_ADMIN_TOKEN) log.warn('GATEWAY_ADMIN_TOKEN is not set: the admin API refuses every request');
  const gw = await createGateway({
    config,
    dataDir: process.env.GATEWAY_DATA_DIR ?? './data',
    databaseUrl: process.env.GATEWAY_DATABASE_URL || undefined,
    instanceId: process.env.GATEWAY_INSTANCE_ID || `${hostname()}:${process.env.PORT ?? 8080}`,
    adminToken: process.env.GATEWAY_ADMIN_TOKEN,
    secret: process.env.GATEWAY_SECRET_KEY,
    port: Number(process.env.PORT ?? 8080),
    host: process.env.HOST ?? '127.0.0.1',
    logger: log,
  });
  log.info({ url: gw.url, simulator: gw.simulator?.url ?? null }, 'gateway listening');
  const stop = (signal: string): void => {
    log.info({ signal }, 'shutting down: draining streams');
    gw.close().then(() => process.exit(0), (err) => { log.error({ err }, 'shutdown failed'); process.exit(1); });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return gw;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  startFromEnv().catch((err) => { console.error(err); process.exit(1); });
}
