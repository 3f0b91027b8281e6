// Managed requests on each store: the same non-streamed Responses request ("now") through a
// gateway whose org uses its own key (no ledger), then served as managed with the ledger in SQLite
// (one file) and in PostgreSQL (the shared store: admission and settlement are one round trip
// each). Prints throughput at BENCH_CONNECTIONS (50) and the latency one request sees alone
// (1 connection), each store's added latency over byok, and the gateway's CPU per request.
// Short by default (BENCH_DURATION_S=5): the machine is shared.
import autocannon from 'autocannon';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { forkServer, type ServerProcess } from './processes.ts';

const PG_URL = process.env.GATEWAY_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BODY = JSON.stringify({ model: 'gpt-5.4-mini', input: 'Write one short sentence about ledgers.', start_within: 'now', max_output_tokens: 64 });

interface Row { mode: string; rps: number; p50: number; p99: number; alone50: number; alone99: number; cpu: number; bad: number }

async function createDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const name = `gwbench_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2_000 });
  try { await c.connect(); await c.query(`CREATE DATABASE ${name}`); } catch (err) {
    console.log(`PostgreSQL not reachable at ${PG_URL.replace(/\/\/[^@]*@/, '//')} (${(err as Error).message}): the postgres row is skipped`);
    return undefined;
  } finally { await c.end().catch(() => {}); }
  const u = new URL(PG_URL); u.pathname = '/' + name;
  return {
    url: u.toString(),
    async drop() { const d = new pg.Client({ connectionString: PG_URL }); await d.connect(); await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await d.end(); },
  };
}

const run = (url: string, key: string, connections: number, duration: number) => autocannon({
  url: url + '/v1/responses', method: 'POST', body: BODY, connections, duration, pipelining: 1,
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
});

async function measure(mode: string, sim: ServerProcess, dbUrl?: string): Promise<Row> {
  const gw = await forkServer(`gateway (${mode})`, './managed-gateway-child.ts', [sim.url, mode, dbUrl ?? '']);
  try {
    const key = gw.info.apiKey!;
    const probe = await fetch(gw.url + '/v1/responses', { method: 'POST', body: BODY, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
    const want = mode === 'byok' ? 'unlimited' : /^\d+$/;
    const spend = probe.headers.get('x-service-spend-remaining') ?? '';
    if (probe.status !== 200 || (typeof want === 'string' ? spend !== want : !want.test(spend))) throw new Error(`${mode}: sanity request ${probe.status}, spend header ${spend}`);
    await probe.arrayBuffer();
    await run(gw.url, key, CONNECTIONS, 1);                       // warm-up
    const alone = await run(gw.url, key, 1, Math.max(2, Math.round(DURATION / 2)));
    const cpu0 = await gw.cpuMicros();
    const r = await run(gw.url, key, CONNECTIONS, DURATION);
    const cpu = (await gw.cpuMicros() - cpu0) / Math.max(1, r.requests.total);
    return { mode, rps: r.requests.mean, p50: r.latency.p50, p99: r.latency.p99, alone50: alone.latency.p50, alone99: alone.latency.p99, cpu, bad: r.errors + r.non2xx + alone.errors + alone.non2xx };
  } finally {
    await gw.stop();
  }
}

const sim = await forkServer('simulator', './simulator-child.ts');
const db = await createDatabase();
const rows: Row[] = [];
try {
  rows.push(await measure('byok', sim));
  rows.push(await measure('sqlite', sim));
  if (db) rows.push(await measure('postgres', sim, db.url));
} finally {
  await sim.stop();
  await db?.drop();
}
const base = rows[0]!;
console.log(`\nmanaged-ledger: Responses non-streamed "now", ${CONNECTIONS} connections × ${DURATION} s; "alone" = 1 connection`);
console.log('store      req/s   p50 ms  p99 ms  alone p50/p99 ms  added p50 alone  req/s vs byok  gateway CPU µs/req  errors');
for (const r of rows) {
  console.log(`${r.mode.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(7)} ${`${r.alone50}/${r.alone99}`.padStart(17)} ${`${(r.alone50 - base.alone50).toFixed(1)} ms`.padStart(16)} ${(r.rps / base.rps).toFixed(2).padStart(14)} ${r.cpu.toFixed(0).padStart(19)} ${String(r.bad).padStart(7)}`);
}
if (rows.some((r) => r.bad > 0)) console.log('WARNING: some requests failed; the figures above are not comparable');
