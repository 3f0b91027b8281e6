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
export async function usageReport(req: IncomingMessage, res: ServerResponse, svc: Services, orgId: string | undefined): Promise<void> {
  const search = new URL(req.url ?? '/', 'http://x').searchParams;
  const q = parseUsageQuery(search, 'aggregate', orgId, svc.clock.now());
  const { groups, totals } = await svc.usage.store.aggregate(q.filter, q.groupBy);
  if (wantsCsv(req)) return sendCsv(res, q.groupBy, groups.length || q.groupBy.length ? groups : [totals as UsageGroup]);
  sendJson(res, 200, JSON.stringify({
    object: 'usage', from: Math.floor(q.filter.fromMs / 1000), to: Math.floor(q.filter.toMs / 1000),
    group_by: q.groupBy, currency: 'USD', data: groups, totals,
  }), { 'cache-control': 'no-store' });
}

export async function usageRequests(req: IncomingMessage, res: ServerResponse, svc: Services, orgId: string | undefined): Promise<void> {
  const search = new URL(req.url ?? '/', 'http://x').searchParams;
  const q = parseUsageQuery(search, 'requests', orgId, svc.clock.now());
  const page = await svc.usage.store.list(q.filter, q.limit, q.cursor);
  const data = page.records.map(({ seq: _seq, ...r }) => ({ object: 'usage.request', ...r, savings_micro_usd: r.standard_cost_micro_usd - r.cost_micro_usd }));
  sendJson(res, 200, JSON.stringify({
    object: 'list', data, has_more: page.next !== null, next_cursor: page.next ? encodeCursor(page.next) : null,
  }), { 'cache-control': 'no-store' });
}

const wantsCsv = (req: IncomingMessage): boolean => /\btext\/csv\b/i.test(req.headers.accept ?? '');

function sendCsv(res: ServerResponse, dims: string[], rows: UsageGroup[]): void {
  const cols = [...dims, ...TOTAL_FIELDS];
  const lines = [cols.join(','), ...rows.map((r) => cols.map((c) => csvCell((r as unknown as Record<string, unknown>)[c])).join(','))];
  const body = lines.join('\r\n') + '\r\n';
  res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/** RFC 4180 quoting; a text cell that a spreadsheet would read as a formula gets a leading '. */
function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(v);
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
