// GET /v1/usage, GET /v1/usage/requests (an organization's own records, with any of its keys)
// and their operator twins under /admin/v1/usage (every organization, `org` as a dimension).
// Bounds (docs/usage.md "Bounds"): the organization API's own rate, and at most
// `usage.max_groups` groups a report.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { sendJson } from './reply.ts';
import { DEFAULT_MAX_GROUPS, encodeCursor, parseUsageQuery } from '../usage/query.ts';
import { TooManyGroups, type Dimension, type UsageFilter, type UsageGroup, type UsageTotals } from '../usage/store.ts';

const TOTAL_FIELDS: Array<keyof UsageTotals> = [
  'requests', 'errors', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens',
  'cost_micro_usd', 'managed_cost_micro_usd', 'standard_cost_micro_usd', 'savings_micro_usd',
  'served_requests', 'flex_requests', 'flex_share', 'deadline_requests', 'deadline_met',
];

/** `orgId` pins the organization; undefined is the operator's view across organizations. */
export async function usageReport(
  req: IncomingMessage, res: ServerResponse, svc: Services, orgId: string | undefined,
): Promise<void> {
  if (orgId !== undefined) limitOrganizationApi(svc, orgId);
  const search = new URL(req.url ?? '/', 'http://x').searchParams;
  const query = parseUsageQuery(search, 'aggregate', orgId, svc.clock.now());
  const { groups, totals } = await aggregate(svc, query.filter, query.groupBy);
  const data = query.groupBy.includes('org') ? await withOrgNames(svc, groups) : groups;
  if (wantsCsv(req)) return sendCsv(res, query.groupBy, data.length || query.groupBy.length ? data : [totals as UsageGroup]);
  sendJson(res, 200, JSON.stringify({
    object: 'usage', from: Math.floor(query.filter.fromMs / 1000), to: Math.floor(query.filter.toMs / 1000),
    group_by: query.groupBy, currency: 'USD', data, totals,
  }), { 'cache-control': 'no-store' });
}

export async function usageRequests(
  req: IncomingMessage, res: ServerResponse, svc: Services, orgId: string | undefined,
): Promise<void> {
  if (orgId !== undefined) limitOrganizationApi(svc, orgId);
  const search = new URL(req.url ?? '/', 'http://x').searchParams;
  const query = parseUsageQuery(search, 'requests', orgId, svc.clock.now());
  const page = await svc.usage.store.list(query.filter, query.limit, query.cursor);
  const data = page.records.map(({ seq: _seq, ...record }) => ({
    object: 'usage.request', ...record, savings_micro_usd: record.standard_cost_micro_usd - record.cost_micro_usd,
  }));
  sendJson(res, 200, JSON.stringify({
    object: 'list', data, has_more: page.next !== null, next_cursor: page.next ? encodeCursor(page.next) : null,
  }), { 'cache-control': 'no-store' });
}

/** The organization API's own rate (abuse_limits.organization_api_requests), after the key's. */
export function limitOrganizationApi(svc: Services, orgId: string): void {
  const check = svc.abuse.checkOrganizationApi(orgId);
  if (!check.ok) throw new GatewayError('rate_limit_exceeded', undefined, { retryAfterS: check.retryAfterS });
}

/** The store's aggregate, refused past max_groups groups with what to change. */
async function aggregate(
  svc: Services, filter: UsageFilter, groupBy: Dimension[],
): Promise<{ groups: UsageGroup[]; totals: UsageTotals }> {
  const maxGroups = svc.config.usage.max_groups ?? DEFAULT_MAX_GROUPS;
  try {
    return await svc.usage.store.aggregate(filter, groupBy, maxGroups);
  } catch (err) {
    if (!(err instanceof TooManyGroups)) throw err;
    const message = `This report would have more than ${maxGroups} groups (group_by=${groupBy.join(',')}). `
      + 'Group by fewer dimensions (or day instead of hour), filter (model, route, tier, status, key) or narrow from/to.';
    throw new GatewayError('invalid_group_by', message, { param: 'group_by' });
  }
}

/** The operator's groups by organization, each with its organization's name (`org_name`, null for
 *  an id the store does not know): a reader such as the dashboard's top-spend chart could only
 *  name the organizations it had paged through, and the biggest spenders are often the newest.
 *  One read of every organization's id and name, not one per group: a report may have
 *  max_groups of them. */
async function withOrgNames(svc: Services, groups: UsageGroup[]): Promise<Array<UsageGroup & { org_name: string | null }>> {
  const names = new Map((await svc.orgs.listOrgs()).map((org) => [org.id, org.name]));
  return groups.map((group) => ({ ...group, org_name: names.get(String(group.org)) ?? null }));
}

const wantsCsv = (req: IncomingMessage): boolean => /\btext\/csv\b/i.test(req.headers.accept ?? '');

function sendCsv(res: ServerResponse, dimensions: string[], rows: UsageGroup[]): void {
  // A group by organization is named beside its id, as in the JSON answer.
  const columns = [...dimensions.flatMap((d) => (d === 'org' ? ['org', 'org_name'] : [d])), ...TOTAL_FIELDS];
  const cells = (row: UsageGroup): string[] =>
    columns.map((column) => csvCell((row as unknown as Record<string, unknown>)[column]));
  const lines = [columns.join(','), ...rows.map((row) => cells(row).join(','))];
  const body = lines.join('\r\n') + '\r\n';
  res.writeHead(200, {
    'content-type': 'text/csv; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store',
  });
  res.end(body);
}

/** RFC 4180 quoting; a text cell that a spreadsheet would read as a formula gets a leading '. */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
