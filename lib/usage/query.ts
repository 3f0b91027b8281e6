// The usage API's query string, checked parameter by parameter; each bad one is a 400 with its
// own code and the parameter named (docs/usage.md).
import { GatewayError } from '../errors.ts';
import { ROUTES, type RouteName } from '../routes.ts';
import { DIMENSIONS, type Cursor, type Dimension, type UsageFilter } from './store.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_RANGE_MS = 30 * DAY_MS;
export const MAX_PAGE = 200;
/** The most groups one report answers by default (config `usage.max_groups`): 30 days by hour
 *  for 13 models, or a day's hours for 400 keys. A report that would answer more is refused
 *  (400 invalid_group_by) before its groups are built; docs/usage.md "Bounds". */
export const DEFAULT_MAX_GROUPS = 10_000;

/** Epoch seconds (digits), an ISO date (a `to` date means the end of that UTC day) or an ISO
 *  date-time with a zone. */
function instant(text: string, param: 'from' | 'to'): number {
  let ms: number;
  if (/^\d{1,12}$/.test(text)) ms = Number(text) * 1000;
  else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) ms = calendarDay(text) ? Date.parse(`${text}T00:00:00Z`) + (param === 'to' ? DAY_MS : 0) : NaN;
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) ms = calendarDay(text.slice(0, 10)) ? Date.parse(text) : NaN;
  else ms = NaN;
  if (!Number.isFinite(ms)) {
    const message = `${param} must be epoch seconds, an ISO date (YYYY-MM-DD) or an ISO date-time with a zone.`;
    throw new GatewayError('invalid_time_range', message, { param });
  }
  return ms;
}

/** Whether YYYY-MM-DD names a day of the calendar: Date.parse rolls February 31 over into March,
 *  so a report would silently cover another period. */
function calendarDay(date: string): boolean {
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === date;
}

export interface UsageQuery { filter: UsageFilter; groupBy: Dimension[]; limit: number; cursor: Cursor | null }

/** Parses one of the two usage endpoints' query strings. `orgId` pins the organization (the
 *  org-facing API); undefined = operator, who may filter or group by `org`. */
export function parseUsageQuery(
  search: URLSearchParams, kind: 'aggregate' | 'requests', orgId: string | undefined, nowMs: number,
): UsageQuery {
  const allowed = new Set(['from', 'to', 'model', 'route', 'tier', 'status', 'key',
    ...(kind === 'aggregate' ? ['group_by'] : ['limit', 'cursor']), ...(orgId === undefined ? ['org'] : []),
    ...(kind === 'aggregate' && orgId === undefined ? ['limit'] : [])]);
  for (const param of search.keys()) {
    if (!allowed.has(param)) throw new GatewayError('invalid_filter', `Unknown query parameter ${param}.`, { param });
  }
  const one = (param: string): string | undefined => {
    const all = search.getAll(param);
    if (all.length > 1) throw new GatewayError('invalid_filter', `${param} may be given once.`, { param });
    return all[0];
  };
  const to = one('to') !== undefined ? instant(one('to')!, 'to') : nowMs + 1;   // default: up to and including now
  const from = one('from') !== undefined ? instant(one('from')!, 'from') : to - DEFAULT_RANGE_MS;
  if (from >= to) throw new GatewayError('invalid_time_range', 'from must be before to.', { param: 'from' });

  const filter: UsageFilter = { orgId, fromMs: from, toMs: to };
  const text = (param: string): string | undefined => {
    const value = one(param);
    // No control characters: no model or key id has one, and PostgreSQL cannot store a NUL (it
    // answered 500 where SQLite found nothing).
    if (value !== undefined && (!value || value.length > 200 || /[\u0000-\u001f\u007f]/.test(value))) {
      throw new GatewayError('invalid_filter', `${param} must be a non-empty string without control characters.`, { param });
    }
    return value;
  };
  filter.model = text('model');
  filter.keyId = text('key');
  if (orgId === undefined) filter.orgId = text('org');
  const route = one('route');
  if (route !== undefined) {
    if (!ROUTES.includes(route as RouteName)) {
      throw new GatewayError('invalid_filter', `route must be one of ${ROUTES.join(', ')}.`, { param: 'route' });
    }
    filter.route = route;
  }
  const tier = one('tier');
  if (tier !== undefined) {
    if (tier !== 'flex' && tier !== 'standard') {
      throw new GatewayError('invalid_filter', 'tier must be flex or standard.', { param: 'tier' });
    }
    filter.tier = tier;
  }
  const status = one('status');
  if (status !== undefined) {
    if (!/^[1-5]\d\d$/.test(status)) throw new GatewayError('invalid_filter', 'status must be an HTTP status code.', { param: 'status' });
    filter.status = Number(status);
  }

  const groupBy: Dimension[] = [];
  const groupByParam = one('group_by');
  if (groupByParam !== undefined) {
    const allowedHere = (dimension: string): boolean => dimension !== 'org' || orgId === undefined;
    for (const dimension of groupByParam.split(',').map((part) => part.trim())) {
      const ok = (DIMENSIONS as readonly string[]).includes(dimension) && allowedHere(dimension);
      if (!ok || groupBy.includes(dimension as Dimension)) {
        const choices = DIMENSIONS.filter(allowedHere).join(', ');
        throw new GatewayError('invalid_group_by', `group_by takes distinct dimensions among ${choices}; got "${dimension}".`,
          { param: 'group_by' });
      }
      groupBy.push(dimension as Dimension);
    }
  }

  let limit = 50;
  const limitParam = one('limit');
  if (limitParam !== undefined) {
    const count = Number(limitParam);
    if (!/^\d{1,3}$/.test(limitParam) || count < 1 || count > MAX_PAGE) {
      throw new GatewayError('invalid_limit', undefined, { param: 'limit' });
    }
    limit = count;
  }
  if (kind === 'aggregate' && limitParam !== undefined) {
    // The operator's top organizations by spend: their number is the operator's own (no caller
    // can add one), so this grouping may pass max_groups where only the answer is bounded.
    if (groupBy.length !== 1 || groupBy[0] !== 'org') {
      throw new GatewayError('invalid_limit', 'limit on a report takes group_by=org alone (the organizations with the highest spend).',
        { param: 'limit' });
    }
    filter.topByCost = limit;
  }
  const cursor = one('cursor');
  return { filter, groupBy, limit, cursor: cursor === undefined ? null : decodeCursor(cursor) };
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.atMs}.${cursor.seq}`).toString('base64url');
}

function decodeCursor(encoded: string): Cursor {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(encoded, 'base64url').toString('latin1'));
  if (!match) throw new GatewayError('invalid_cursor', undefined, { param: 'cursor' });
  return { atMs: Number(match[1]), seq: Number(match[2]) };
}
