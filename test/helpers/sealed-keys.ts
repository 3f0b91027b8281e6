// What the secret-rotation suites (test/e2e/secret-rotation.test.ts, secret-fingerprint.test.ts)
// do to gateways started on one store, SQLite or PostgreSQL: admin calls, organizations with an
// own provider key, one own-key request through the OpenAI SDK, and SQL on the store as another
// process (or an operator) would run it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import OpenAI from 'openai';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Gateway } from '../../lib/app.ts';
import type { RouteName } from '../../lib/routes.ts';
import { sim } from './gateway.ts';

/** Where the gateways keep their data: the data folder (SQLite), or a PostgreSQL database. */
export interface SharedStore { dataDir: string; url?: string }

const MODEL: Partial<Record<RouteName, string>> = { vendor_a: 'gpt-5.4-mini', vendor_c: 'claude-sonnet-4-6' };

/** `secrets` gathers the provider and API keys made, for the suite's assertNoSecrets. */
export function sealedKeyHelpers(adminToken: string, secrets: Set<string>) {
  const admin = async (gw: Gateway, method: string, path: string, body?: unknown) => {
    const res = await fetch(gw.url + path, {
      method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() as any };
  };
  return {
    admin,
    /** An organization with an own key on `route` and an API key. */
    async ownKeyOrg(gw: Gateway, route: RouteName) {
      const org = (await admin(gw, 'POST', '/admin/v1/orgs', { name: route })).json.id as string;
      const provider = `own-${route}-${org}`;
      secrets.add(provider);
      assert.equal((await admin(gw, 'PUT', `/admin/v1/orgs/${org}/provider-keys/${route}`, { key: provider })).status, 200);
      const key = (await admin(gw, 'POST', `/admin/v1/orgs/${org}/keys`, { default_start_within: 'now' })).json.key as string;
      secrets.add(key);
      return { org, key, route };
    },
    /** One own-key request through the OpenAI SDK: the status it ends with (200, or the error's). */
    async serve(gw: Gateway, o: { key: string; route: RouteName }) {
      const client = new OpenAI({ apiKey: o.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      try {
        await client.responses.create({ model: MODEL[o.route]!, input: `hi ${sim({ output_tokens: 3 })}` });
        return { status: 200 };
      } catch (err: any) {
        return { status: err.status as number, code: err.code as string };
      }
    },
  };
}

/** One statement on the store (PostgreSQL's $n placeholders, ? on SQLite): the rows it returns. */
export async function storeQuery(store: SharedStore, sql: string, values: unknown[] = []): Promise<any[]> {
  if (store.url) {
    const pool = new pg.Pool({ connectionString: store.url, max: 1 });
    try { return (await pool.query(sql, values)).rows; } finally { await pool.end(); }
  }
  const file = new Database(join(store.dataDir, 'gateway.db'));
  try {
    const statement = file.prepare(sql.replace(/\$\d+/g, '?'));
    if (statement.reader) return statement.all(...values);
    statement.run(...values);
    return [];
  } finally { file.close(); }
}
