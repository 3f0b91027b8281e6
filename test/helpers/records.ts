// What a suite reads back of one organization's one request: its usage record and the ledger's
// settlement of it, once the request has ended.
import assert from 'node:assert/strict';
import { waitFor, type TestGateway } from './gateway.ts';

/** The organization's one usage record, once its request ended. */
export async function onlyRecord(t: TestGateway, key: string): Promise<any> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  await t.gw.services.usage.flush();
  const records = ((await (await fetch(`${t.url}/v1/usage/requests`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).data;
  assert.equal(records.length, 1);
  return records[0];
}

/** What the ledger settled the organization's one request at. */
export async function settledOf(t: TestGateway, orgId: string): Promise<number> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  const entries = (await t.admin('GET', `/admin/v1/orgs/${orgId}/ledger`)).json.entries;
  return entries.find((e: any) => e.kind === 'settle').amount_micro_usd;
}
