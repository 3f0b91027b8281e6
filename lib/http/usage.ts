// GET /v1/usage, GET /v1/usage/requests (an organization's own records, with any of its keys)
// and their operator twins under /admin/v1/usage (every organization, `org` as a dimension).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../services.ts';
import { sendJson } from './reply.ts';
import { encodeCursor, parseUsageQuery } from '../usage/query.ts';
import type { UsageGroup, UsageTotals } from '../usage/store.ts';

const TOTAL_FIELDS: Array<keyof UsageTotals> = [
  'requests', 'errors', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens',
  'cost_micro_usd', 'managed_cost_micro_usd', 'standard_cost_micro_usd', 'savings_micro_usd',
  'served_requests', 'flex_requests', 'flex_share', 'deadline_requests', 'deadline_met',
];

/** `orgId` pins the organization; undefined is the operator's view across organizations. */
export async function usageReport(
  req: IncomingMessage, res: ServerResponse, svc: Services, orgId: string | undefined,
): Promise<void> {
  const search = new URL(req.url ?? '/', 'http://x').searchParams;
  const query = parseUsageQuery(search, 'aggregate', orgId, svc.clock.now());
  const { groups, totals } = await svc.usage.store.aggregate(query.filter, query.groupBy);
  if (wantsCsv(req)) return sendCsv(res, query.groupBy, groups.length || query.groupBy.length ? groups : [totals as UsageGroup]);
  sendJson(res, 200, JSON.stringify({
    object: 'usage', from: Math.floor(query.filter.fromMs / 1000), to: Math.floor(query.filter.toMs / 1000),
    group_by: query.groupBy, currency: 'USD', data: groups, totals,
  }), { 'cache-control': 'no-store' });
}

export async function usageRequests(
  req: IncomingMessage, res: ServerResponse, svc: Services, orgId: string | undefined,
): Promise<void> {
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

const wantsCsv = (req: IncomingMessage): boolean => /\btext\/csv\b/i.test(req.headers.accept ?? '');

function sendCsv(res: ServerResponse, dimensions: string[], rows: UsageGroup[]): void {
  const columns = [...dimensions, ...TOTAL_FIELDS];
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
