// The usage API's query string, checked parameter by parameter; each bad one is a 400 with its
// own code and the parameter named (docs/usage.md).
import { GatewayError } from '../errors.ts';
import { ROUTES, type RouteName } from '../ir.ts';
import { DIMENSIONS, type Cursor, type Dimension, type UsageFilter } from './store.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_RANGE_MS = 30 * DAY_MS;
export const MAX_PAGE = 200;

/** Epoch seconds (digits), an ISO date (a `to` date means the end of that UTC day) or an ISO
 *  date-time with a zone. */
function instant(v: string, param: 'from' | 'to'): number {
  let ms: number;
  if (/^\d{1,12}$/.test(v)) ms = Number(v) * 1000;
  else if (/^\d{4}-\d{2}-\d{2}$/.test(v)) ms = Date.parse(`${v}T00:00:00Z`) + (param === 'to' ? DAY_MS : 0);
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) ms = Date.parse(v);
  else ms = NaN;
  if (!Number.isFinite(ms)) throw new GatewayError('invalid_time_range', `${param} must be epoch seconds, an ISO date (YYYY-MM-DD) or an ISO date-time with a zone.`, { param });
  return ms;
}

export interface UsageQuery { filter: UsageFilter; groupBy: Dimension[]; limit: number; cursor: Cursor | null }

/** Parses one of the two usage endpoints' query strings. `orgId` pins the organization (the
 *  org-facing API); undefined = operator, who may filter or group by `org`. */
export function parseUsageQuery(search: URLSearchParams, kind: 'aggregate' | 'requests', orgId: string | undefined, nowMs: number): UsageQuery {
  const allowed = new Set(['from', 'to', 'model', 'route', 'tier', 'status', 'key',
    ...(kind === 'aggregate' ? ['group_by'] : ['limit', 'cursor']), ...(orgId === undefined ? ['org'] : [])]);
  for (const k of search.keys()) {
    if (!allowed.has(k)) throw new GatewayError('invalid_filter', `Unknown query parameter ${k}.`, { param: k });
  }
  const one = (k: string): string | undefined => {
    const all = search.getAll(k);
    if (all.length > 1) throw new GatewayError('invalid_filter', `${k} may be given once.`, { param: k });
    return all[0];
  };
  const to = one('to') !== undefined ? instant(one('to')!, 'to') : nowMs + 1;   // default: up to and including now
  const from = one('from') !== undefined ? instant(one('from')!, 'from') : to - DEFAULT_RANGE_MS;
  if (from >= to) throw new GatewayError('invalid_time_range', 'from must be before to.', { param: 'from' });

  const filter: UsageFilter = { orgId, fromMs: from, toMs: to };
  const text = (k: string): string | undefined => {
    const v = one(k);
    if (v !== undefined && (!v || v.length > 200)) throw new GatewayError('invalid_filter', `${k} must be a non-empty string.`, { param: k });
    return v;
  };
  filter.model = text('model');
  filter.keyId = text('key');
  if (orgId === undefined) filter.orgId = text('org');
  const route = one('route');
  if (route !== undefined) {
    if (!ROUTES.includes(route as RouteName)) throw new GatewayError('invalid_filter', `route must be one of ${ROUTES.join(', ')}.`, { param: 'route' });
    filter.route = route;
  }
  const tier = one('tier');
  if (tier !== undefined) {
    if (tier !== 'flex' && tier !== 'standard') throw new GatewayError('invalid_filter', 'tier must be flex or standard.', { param: 'tier' });
    filter.tier = tier;
  }
  const status = one('status');
  if (status !== undefined) {
    if (!/^[1-5]\d\d$/.test(status)) throw new GatewayError('invalid_filter', 'status must be an HTTP status code.', { param: 'status' });
    filter.status = Number(status);
  }

  const groupBy: Dimension[] = [];
  const gb = one('group_by');
  if (gb !== undefined) {
    for (const d of gb.split(',').map((x) => x.trim())) {
      const ok = (DIMENSIONS as readonly string[]).includes(d) && (d !== 'org' || orgId === undefined);
      if (!ok || groupBy.includes(d as Dimension)) {
        const dims = DIMENSIONS.filter((x) => x !== 'org' || orgId === undefined).join(', ');
        throw new GatewayError('invalid_group_by', `group_by takes distinct dimensions among ${dims}; got "${d}".`, { param: 'group_by' });
      }
      groupBy.push(d as Dimension);
    }
  }

  let limit = 50;
  const l = one('limit');
  if (l !== undefined) {
    if (!/^\d{1,3}$/.test(l) || Number(l) < 1 || Number(l) > MAX_PAGE) throw new GatewayError('invalid_limit', undefined, { param: 'limit' });
    limit = Number(l);
  }
  const c = one('cursor');
  return { filter, groupBy, limit, cursor: c === undefined ? null : decodeCursor(c) };
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.atMs}.${c.seq}`).toString('base64url');
}

function decodeCursor(s: string): Cursor {
  const m = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(s, 'base64url').toString('latin1'));
  if (!m) throw new GatewayError('invalid_cursor', undefined, { param: 'cursor' });
  return { atMs: Number(m[1]), seq: Number(m[2]) };
}
