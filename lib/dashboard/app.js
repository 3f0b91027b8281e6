// The dashboard: signs in with an API key (organization view) or the admin token (operator
// view), kept in sessionStorage for this tab only, and reads the same public APIs any client
// uses: /v1/organization, /v1/limits, /v1/usage, /v1/usage/requests, /admin/v1/…
import { columnChart, barList, dataTable, MAX_BARS } from './charts.js';

const $ = (id) => document.getElementById(id);
const TOKEN = 'gateway-dashboard-token';
let token = sessionStorage.getItem(TOKEN);
const DAY = 86_400_000;
/** Bumped at every sign-in and sign-out: a load still in flight for the previous session draws nothing. */
let session = 0;
class Superseded extends Error {}
/** The id of the key this session signed in with (the keys table marks it). */
let ownKeyId = null;

/** Exact micro-USD as dollars: 1234567 → $1.234567 (no floating point). */
export function usd(micro) {
  const neg = micro < 0;
  const abs = Math.abs(micro);
  return `${neg ? '-' : ''}$${Math.floor(abs / 1e6).toLocaleString('en-US')}.${String(abs % 1e6).padStart(6, '0')}`;
}
const pct = (x) => `${(x * 100).toFixed(1)} %`;
const int = (n) => Number(n).toLocaleString('en-US');

class ApiError extends Error {}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  if (!res.ok) {
    const e = new ApiError(json?.error?.message ?? `${res.status} ${res.statusText}`);
    e.status = res.status;
    e.code = json?.error?.code;
    e.param = json?.error?.param;
    throw e;
  }
  return json;
}

function status(msg) { $('status').textContent = msg; }

function fact(dl, label, value, attrs = {}) {
  const div = document.createElement('div');
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  if (value instanceof Node) dd.append(value); else dd.textContent = value;
  for (const [k, v] of Object.entries(attrs)) dd.setAttribute(k, v);
  div.append(dt, dd);
  dl.append(div);
}

/** A money figure that tests and assistive tech can read exactly: <data value="micro">$…</data>. */
function money(micro, id) {
  const d = document.createElement('data');
  d.value = String(micro);
  d.textContent = usd(micro);
  if (id) d.id = id;
  return d;
}

/** Draws one section of a view: `work` fetches and draws it. A refused call (a report past its
 *  bounds, a rate limit) shows its error in the section's place and the other sections draw on
 *  their own; returns whether it drew. */
async function section(mine, targets, work) {
  try {
    await work();
    return true;
  } catch (e) {
    if (e instanceof Superseded) throw e;
    current(mine);
    for (const target of [targets].flat()) sectionError(target, e);
    return false;
  }
}

function sectionError(target, e) {
  const text = `Could not load: ${e.message}`;
  // A table holds its message as its caption; a <dl> may hold a <div>, a figure a <p>.
  const node = document.createElement(target instanceof HTMLTableElement ? 'caption' : target instanceof HTMLDListElement ? 'div' : 'p');
  node.className = 'error';
  node.textContent = text;
  target.replaceChildren(node);
}

function fillTable(table, caption, columns, rows, rowAttrs) {
  const t = dataTable(caption, columns, rows);
  table.replaceChildren(...t.childNodes);
  if (rowAttrs) [...table.tBodies[0].rows].forEach((tr, i) => { for (const [k, v] of Object.entries(rowAttrs(rows[i]))) tr.setAttribute(k, v); });
}

// ── shared pieces ─────────────────────────────────────────────────────────────────────────

/** The page's period: the last 30 UTC days, today included. Every usage call of a load asks for
 *  this range (`from` = UTC midnight 29 days ago), so the summary counts what the charts draw
 *  (the API's default, now − 30 days, starts inside a 31st day). */
function period(now = Date.now()) {
  const first = Math.floor(now / DAY) * DAY - 29 * DAY;
  return { from: first / 1000, days: Array.from({ length: 30 }, (_, i) => new Date(first + i * DAY).toISOString().slice(0, 10)) };
}

/** The period's days, each present (days without requests show as zero). */
function daySeries(groups, days) {
  const byDay = new Map(groups.map((g) => [g.day, g]));
  return days.map((day) => ({ day, g: byDay.get(day) }));
}

function summary(dl, t) {
  dl.replaceChildren();
  fact(dl, 'Requests', int(t.requests));
  fact(dl, 'Spend', money(t.cost_micro_usd, dl.id + '-spend'));
  fact(dl, 'Paid from balance (managed)', money(t.managed_cost_micro_usd));
  fact(dl, 'Same tokens on standard', money(t.standard_cost_micro_usd));
  fact(dl, 'Flex saved you', money(t.savings_micro_usd, dl.id + '-savings'));
  fact(dl, 'Flex share', t.served_requests ? pct(t.flex_share) : '—');
  fact(dl, 'Deadlines met', t.deadline_requests ? `${int(t.deadline_met)} of ${int(t.deadline_requests)}` : '—');
  fact(dl, 'Errors', int(t.errors));
}

function spendCharts(spendFig, flexFig, groups, periodDays) {
  const days = daySeries(groups, periodDays);
  const label = (d) => d.day.slice(5);
  const empty = !days.some((d) => d.g?.requests);
  columnChart(spendFig, {
    title: 'Spend per day', fmt: usd, empty,
    points: days.map((d) => ({ label: label(d), value: d.g?.cost_micro_usd ?? 0 })),
    table: dataTable('Spend per UTC day', [
      { label: 'Day', value: (d) => d.day }, { label: 'Requests', value: (d) => int(d.g?.requests ?? 0), numeric: true },
      { label: 'Spend', value: (d) => usd(d.g?.cost_micro_usd ?? 0), numeric: true },
    ], days),
  });
  if (!flexFig) return;
  columnChart(flexFig, {
    title: 'Flex savings per day with flex share', fmt: usd, lineLabel: 'flex share', empty,
    points: days.map((d) => ({ label: label(d), value: d.g?.savings_micro_usd ?? 0, line: d.g?.flex_share ?? 0 })),
    table: dataTable('Flex share and savings per UTC day', [
      { label: 'Day', value: (d) => d.day },
      { label: 'Flex share', value: (d) => (d.g?.served_requests ? pct(d.g.flex_share) : '—'), numeric: true },
      { label: 'Standard-equivalent', value: (d) => usd(d.g?.standard_cost_micro_usd ?? 0), numeric: true },
      { label: 'Saved', value: (d) => usd(d.g?.savings_micro_usd ?? 0), numeric: true },
    ], days),
  });
}

function breakdown(fig, title, dim, groups, labelOf = (g) => String(g[dim] ?? '(none)')) {
  barList(fig, {
    title, fmt: usd, points: groups.map((g) => ({ label: labelOf(g), value: g.cost_micro_usd })),
    table: dataTable(title, [
      { label: dim, value: labelOf }, { label: 'Requests', value: (g) => int(g.requests), numeric: true },
      { label: 'Spend', value: (g) => usd(g.cost_micro_usd), numeric: true },
      { label: 'Saved', value: (g) => usd(g.savings_micro_usd), numeric: true },
    ], groups),
  });
}

function requestsTable(table, records, withOrg) {
  const cols = [
    { label: 'Time (UTC)', value: (r) => new Date(r.at_ms).toISOString().replace('T', ' ').slice(0, 19) },
    ...(withOrg ? [{ label: 'Organization', value: (r) => r.org_id }] : []),
    { label: 'Model', value: (r) => r.model ?? '—' },
    { label: 'Route', value: (r) => r.served_route ?? '—' },
    { label: 'Tier', value: (r) => r.tier ?? '—' },
    { label: 'Reason', value: (r) => r.reason ?? r.error_code ?? '—' },
    { label: 'Mode', value: (r) => r.key_mode ?? '—' },
    { label: 'Status', value: (r) => String(r.status), numeric: true },
    { label: 'Input', value: (r) => int(r.input_tokens), numeric: true },
    { label: 'Output', value: (r) => int(r.output_tokens), numeric: true },
    { label: 'Cost', value: (r) => usd(r.cost_micro_usd), numeric: true },
    { label: 'Saved', value: (r) => usd(r.savings_micro_usd), numeric: true },
    { label: 'Time to commit', value: (r) => (r.time_to_commit_ms === null ? '—' : `${int(r.time_to_commit_ms)} ms`), numeric: true },
  ];
  fillTable(table, records.length ? `The ${records.length} most recent requests, newest first` : 'No requests yet', cols, records,
    (r) => ({ 'data-request-id': r.id, 'data-cost': String(r.cost_micro_usd), 'data-mode': r.key_mode ?? '' }));
}

// ── organization view ─────────────────────────────────────────────────────────────────────

/** Throws Superseded when the session this load belongs to has ended (signed out, or another
 *  sign-in began) while it waited. */
function current(mine) {
  if (mine !== session) throw new Superseded();
}

async function loadOrg(mine) {
  const { from, days: periodDays } = period();
  const org = await api('GET', '/v1/organization');
  current(mine);
  $('who').textContent = `Organization ${org.name} (${org.id}) · key ${org.key.id} · scopes: ${org.key.scopes.join(', ')}`;
  const manage = org.key.scopes.includes('manage');
  $('keys-note').hidden = manage;
  $('keys-manage').hidden = !manage;
  $('pkeys-section').hidden = !manage;
  ownKeyId = org.key.id;
  const get = async (path) => { const out = await api('GET', path); current(mine); return out; };
  return Promise.all([
    section(mine, $('state'), async () => renderState(await get('/v1/limits'))),
    section(mine, [$('summary'), $('spend-chart'), $('flex-chart')], async () => {
      const days = await get(`/v1/usage?group_by=day&from=${from}`);
      summary($('summary'), days.totals);
      spendCharts($('spend-chart'), $('flex-chart'), days.data, periodDays);
    }),
    section(mine, $('model-chart'), async () =>
      breakdown($('model-chart'), 'Spend by model', 'model', (await get(`/v1/usage?group_by=model&from=${from}`)).data)),
    section(mine, $('route-chart'), async () =>
      breakdown($('route-chart'), 'Spend by route', 'route', (await get(`/v1/usage?group_by=route&from=${from}`)).data)),
    section(mine, $('requests'), async () => requestsTable($('requests'), (await get(`/v1/usage/requests?limit=25&from=${from}`)).data, false)),
    ...(manage ? [section(mine, [$('keys'), $('pkeys')], () => loadManagement(mine))] : []),
  ]);
}

function renderState(limits) {
  const dl = $('state');
  dl.replaceChildren();
  const m = limits.managed;
  if (!m) { fact(dl, 'Managed serving', 'No route is served on the service'); return; }
  const serving = document.createElement('span');
  serving.className = m.serving === 'ok' ? 'ok' : 'paused';
  serving.textContent = m.serving === 'ok' ? 'Serving' : `Paused: ${m.paused_reason.replaceAll('_', ' ')}`;
  fact(dl, 'State', serving, { id: 'serving' });
  fact(dl, 'Balance', money(m.balance.remaining_micro_usd, 'balance'));
  fact(dl, 'Cash / credit', `${usd(m.balance.cash_micro_usd)} / ${usd(m.balance.credit_micro_usd)}`);
  fact(dl, 'Reserved by requests in flight', money(m.balance.reserved_micro_usd, 'reserved'));
  // An exempt organization has no ceiling: the report's figure for it (the largest exact integer)
  // is a number no request reaches, not an amount to show.
  const exempt = m.ramp_week === null;
  fact(dl, 'Daily ceiling used', `${usd(m.daily_spend.used_micro_usd)} of ${exempt ? 'no ceiling' : usd(m.daily_spend.limit_micro_usd)}`, { id: 'daily-ceiling' });
  fact(dl, 'Concurrency', exempt ? 'unlimited' : `${int(m.concurrency.limit)} at a time`, { id: 'concurrency' });
  fact(dl, 'Ramp week', m.ramp_week === null ? 'exempt' : String(m.ramp_week));
  fact(dl, 'Nearest ceiling', m.binding.replaceAll('_', ' '));
}

/** The keys and provider keys. A key created earlier is shown once: every (re)load hides it. */
async function loadManagement(mine) {
  current(mine);
  hideNewKey();
  const [keys, pkeys] = await Promise.all([api('GET', '/v1/organization/keys'), api('GET', '/v1/organization/provider-keys')]);
  current(mine);
  const table = $('keys');
  fillTable(table, 'Keys of this organization (the key itself is never stored)', [
    { label: 'Key id', value: (k) => k.id + (k.id === ownKeyId ? ' (this key)' : '') },
    { label: 'Scopes', value: (k) => k.scopes.join(', ') },
    { label: 'Default start_within', value: (k) => k.default_start_within ?? '—' },
    { label: 'Default provider', value: (k) => k.default_provider?.join(', ') ?? '—' },
    { label: 'Created (UTC)', value: (k) => new Date(k.created_at).toISOString().slice(0, 16).replace('T', ' ') },
    { label: 'State', value: (k) => (k.revoked_at ? 'revoked' : 'active') },
    { label: 'Action', value: () => '' },
  ], keys.data, (k) => ({ 'data-key-id': k.id }));
  [...table.tBodies[0].rows].forEach((tr, i) => {
    const k = keys.data[i];
    if (k.revoked_at) return;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'secondary';
    b.textContent = 'Revoke';
    b.setAttribute('aria-label', `Revoke key ${k.id}`);
    b.addEventListener('click', () => act(async () => {
      if (!confirm(`Revoke key ${k.id}? Requests with it will be refused.`)) return;
      await api('DELETE', `/v1/organization/keys/${encodeURIComponent(k.id)}`);
      status(`Key ${k.id} revoked.`);
      if (k.id === ownKeyId) return signOut();
      await loadManagement(mine);
    }));
    tr.cells[tr.cells.length - 1].append(b);
  });

  const pt = $('pkeys');
  const routes = ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b'];
  const set = new Map(pkeys.data.map((p) => [p.route, p]));
  fillTable(pt, 'Routes with your own key', [
    { label: 'Route', value: (r) => r },
    { label: 'Own key', value: (r) => (set.has(r) ? `set ${new Date(set.get(r).updated_at).toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'not set') },
    { label: 'Action', value: () => '' },
  ], routes, (r) => ({ 'data-route': r }));
  [...pt.tBodies[0].rows].forEach((tr, i) => {
    const r = routes[i];
    if (!set.has(r)) return;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'secondary';
    b.textContent = 'Delete';
    b.setAttribute('aria-label', `Delete the ${r} provider key`);
    b.addEventListener('click', () => act(async () => {
      await api('DELETE', `/v1/organization/provider-keys/${r}`);
      status(`The ${r} key is deleted; ${r} runs on the service's key again where it serves.`);
      await loadManagement(mine);
    }));
    tr.cells[2].append(b);
  });
}

// ── operator view ─────────────────────────────────────────────────────────────────────────

/** Organizations a page of the operator's table asks for (GET /admin/v1/orgs is paged). */
const ORGS_PAGE = 100;
/** The organizations drawn so far (the table grows a page at a time) and where the next page
 *  starts (null: none). */
let orgRows = [];
let orgsCursor = null;

async function loadOperator(mine) {
  const { from, days: periodDays } = period();
  // One call first: a mistyped token costs one failed authentication, not one per section (30 a
  // minute lock the address out). Any other error means the token passed: it shows in place.
  let first;
  try {
    first = await api('GET', `/admin/v1/orgs?limit=${ORGS_PAGE}`);
  } catch (e) {
    if (e.status === 401 || e.status === 429) throw e;
    first = e;
  }
  current(mine);
  $('who').textContent = 'Operator view';
  orgRows = [];
  const get = async (path) => { const out = await api('GET', path); current(mine); return out; };
  return Promise.all([
    section(mine, $('orgs'), async () => {
      if (first instanceof Error) throw first;
      drawOrgs(first);
    }),
    section(mine, [$('op-summary'), $('op-spend-chart')], async () => {
      const days = await get(`/admin/v1/usage?group_by=day&from=${from}`);
      summary($('op-summary'), days.totals);
      spendCharts($('op-spend-chart'), null, days.data, periodDays);
    }),
    // The organizations with the highest spend, as many as the chart draws: the server sums every
    // organization and answers those alone, however many had requests, each with its name (the
    // table's pages hold the oldest organizations, and the biggest spenders are often the newest).
    section(mine, $('op-org-chart'), async () => {
      const top = await get(`/admin/v1/usage?group_by=org&limit=${MAX_BARS}&from=${from}`);
      breakdown($('op-org-chart'), `Spend by organization, top ${MAX_BARS}`, 'org', top.data,
        (g) => `${g.org_name ?? ''} ${g.org}`.trim());
    }),
    section(mine, $('op-model-chart'), async () =>
      breakdown($('op-model-chart'), 'Spend by model', 'model', (await get(`/admin/v1/usage?group_by=model&from=${from}`)).data)),
    section(mine, $('op-requests'), async () =>
      requestsTable($('op-requests'), (await get(`/admin/v1/usage/requests?limit=25&from=${from}`)).data, true)),
  ]);
}

/** Adds a page of organizations to the table; the "more" button asks for the next one. */
function drawOrgs(page) {
  orgRows.push(...page.data);
  orgsCursor = page.has_more ? page.next_cursor : null;
  $('orgs-more').hidden = orgsCursor === null;
  const caption = orgsCursor === null ? `Every organization (${int(orgRows.length)}) with its managed standing`
    : `The ${int(orgRows.length)} oldest organizations with their managed standing; more below`;
  const exempt = (o) => o.managed.exempt;
  fillTable($('orgs'), caption, [
    { label: 'Name', value: (o) => o.name },
    { label: 'Id', value: (o) => o.id },
    { label: 'State', value: (o) => (o.managed ? (o.managed.serving === 'ok' ? 'serving' : `paused: ${o.managed.pausedReason}`) : '—') },
    { label: 'Balance', value: (o) => (o.managed ? usd(o.managed.cashMicroUsd + o.managed.creditMicroUsd) : '—'), numeric: true },
    { label: 'Reserved', value: (o) => (o.managed ? usd(o.managed.reservedMicroUsd) : '—'), numeric: true },
    { label: 'Spent today', value: (o) => (o.managed ? `${usd(o.managed.dailyUsedMicroUsd)} of ${exempt(o) ? 'no ceiling' : usd(o.managed.dailyLimitMicroUsd)}` : '—'), numeric: true },
    { label: 'In flight', value: (o) => (o.managed ? `${int(o.managed.inFlight)} / ${exempt(o) ? 'unlimited' : int(o.managed.concurrencyLimit)}` : '—'), numeric: true },
    { label: 'Ramp week', value: (o) => (o.managed ? (exempt(o) ? 'exempt' : String(o.managed.rampWeek)) : '—'), numeric: true },
  ], orgRows, (o) => ({ 'data-org-id': o.id, 'data-balance': o.managed ? String(o.managed.cashMicroUsd + o.managed.creditMicroUsd) : '' }));
}

// ── sign-in and actions ───────────────────────────────────────────────────────────────────

const isApiKey = (t) => t.startsWith('flex_live_');

async function load() {
  const mine = session;
  status('Loading…');
  const orgView = isApiKey(token);
  let drawn;
  try {
    drawn = orgView ? await loadOrg(mine) : await loadOperator(mine);
  } catch (e) {
    if (e instanceof Superseded) return;
    if (e.status === 401) { refusedToken(); return; }
    status(`Could not load: ${e.message}`);
    return;
  }
  $('signin').hidden = true;
  $('signout').hidden = false;
  $('org-view').hidden = !orgView;
  $('operator-view').hidden = orgView;
  const failed = drawn.filter((ok) => !ok).length;
  status(`Updated ${new Date().toISOString().slice(11, 19)} UTC.${failed ? ` ${failed} of ${drawn.length} sections could not load (see each).` : ''}`);
}

function hideNewKey() {
  $('new-key').hidden = true;
  $('new-key-value').textContent = '';
}

/** Everything a session drew, emptied: the next person to sign in on this tab sees none of it
 *  (a key shown once above all). */
const DRAWN = ['state', 'summary', 'spend-chart', 'flex-chart', 'model-chart', 'route-chart', 'requests', 'keys', 'pkeys',
  'orgs', 'op-summary', 'op-spend-chart', 'op-org-chart', 'op-model-chart', 'op-requests'];

function signOut() {
  session++;
  token = null;
  ownKeyId = null;
  orgRows = [];
  orgsCursor = null;
  $('orgs-more').hidden = true;
  sessionStorage.removeItem(TOKEN);
  hideNewKey();
  for (const id of DRAWN) $(id).replaceChildren();
  $('key-manage').checked = false;
  $('key-start-within').value = '';
  $('key-provider').value = '';
  keyFormError(null);
  $('pkey-value').value = '';
  $('keys-note').hidden = true;
  $('keys-manage').hidden = true;
  $('pkeys-section').hidden = true;
  $('org-view').hidden = true;
  $('operator-view').hidden = true;
  $('signin').hidden = false;
  $('signout').hidden = true;
  $('who').textContent = '';
  status('');
  $('token').value = '';
  $('token').focus();
}

/** A key or token refused mid-session (revoked elsewhere) signs out, as a load does. */
function refusedToken() {
  const orgView = isApiKey(token);
  signOut();
  $('signin-error').textContent = orgView ? 'That API key is not valid (wrong or revoked).' : 'That admin token is not valid.';
}

async function act(fn) {
  try {
    await fn();
  } catch (e) {
    if (e instanceof Superseded) return;
    if (e.status === 401) refusedToken(); else status(`Failed: ${e.message}`);
  }
}

$('signin-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  $('signin-error').textContent = '';
  session++;
  token = $('token').value.trim();
  sessionStorage.setItem(TOKEN, token);
  void load();
});
$('signout').addEventListener('click', signOut);
for (const b of document.querySelectorAll('.refresh')) b.addEventListener('click', () => void load());
$('orgs-more').addEventListener('click', () => {
  const mine = session;
  void act(async () => {
    const page = await api('GET', `/admin/v1/orgs?limit=${ORGS_PAGE}&cursor=${encodeURIComponent(orgsCursor)}`);
    current(mine);
    drawOrgs(page);
  });
});

/** The create-key body: the scopes and, when typed, an agent key's defaults. The chain is typed as
 *  the CLI takes it (`cloud_b,vendor_c`; spaces are fine too). Nothing is checked here: the API's
 *  rules are the ones that count, and its refusal is shown as it words it. */
function keyRequest() {
  const body = { scopes: $('key-manage').checked ? ['inference', 'manage'] : ['inference'] };
  const startWithin = $('key-start-within').value.trim();
  const chain = $('key-provider').value.split(/[\s,]+/).filter(Boolean);
  if (startWithin) body.default_start_within = startWithin;
  if (chain.length) body.default_provider = chain;
  return body;
}

/** The field each `param` of a refusal names (a bad deadline is refused as `start_within`). */
const KEY_FIELDS = { start_within: 'key-start-within', default_start_within: 'key-start-within', default_provider: 'key-provider' };

/** Shows a refused create in the form (null clears it), marking the field the API named and
 *  tying the message to it, so a screen reader on the field says why. */
function keyFormError(e) {
  $('key-error').textContent = e ? `Not created: ${e.message}` : '';
  for (const id of ['key-start-within', 'key-provider']) fieldValid(id);
  const field = e && KEY_FIELDS[e.param];
  if (field) {
    $(field).setAttribute('aria-invalid', 'true');
    $(field).setAttribute('aria-describedby', `${field}-hint key-error`);
    $(field).focus();
  }
}

function fieldValid(id) {
  $(id).removeAttribute('aria-invalid');
  $(id).setAttribute('aria-describedby', `${id}-hint`);
}

// Editing a field the API refused takes its mark away (the message stays until the next submit).
for (const id of ['key-start-within', 'key-provider']) $(id).addEventListener('input', () => fieldValid(id));

$('key-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const mine = session;
  // The key created before, and its message, are not this submit's: a refusal below must not
  // stand beside them.
  hideNewKey();
  status('');
  keyFormError(null);
  void act(async () => {
    let k;
    try {
      k = await api('POST', '/v1/organization/keys', keyRequest());
    } catch (e) {
      current(mine);
      if (e.status !== 400) throw e;
      keyFormError(e);
      return;
    }
    current(mine);
    // The next key starts from an empty form, not this one's defaults.
    $('key-start-within').value = '';
    $('key-provider').value = '';
    $('key-manage').checked = false;
    status(`Key ${k.id} created.`);
    try {
      await loadManagement(mine);
    } finally {
      // Shown after the tables are drawn (a reload hides it), and even when that reload failed.
      if (mine === session) {
        $('new-key-value').textContent = k.key;
        $('new-key').hidden = false;
      }
    }
  });
});

$('pkey-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const mine = session;
  void act(async () => {
    const route = $('pkey-route').value;
    const raw = $('pkey-value').value.trim();
    let body;
    if (route === 'cloud_a' || route === 'cloud_b') {
      try { body = JSON.parse(raw); } catch { throw new Error('a cloud credential must be JSON'); }
    } else body = { key: raw };
    await api('PUT', `/v1/organization/provider-keys/${route}`, body);
    $('pkey-value').value = '';
    status(`The ${route} key is saved; requests on ${route} now run on it (byok).`);
    await loadManagement(mine);
  });
});

if (token) void load(); else $('signin').hidden = false;
