// The dashboard in a real browser: headless Chromium (Debian's package) driven by playwright-core
// against a real gateway on the simulator. Sign in with a key, see the balance GET /v1/limits
// reports, send requests and see them with their exact cost, create and revoke a key, set a
// provider key and see the next request run byok; the operator view with the admin token.
// Every request the page makes stays on the gateway's origin (it works offline), and a
// screenshot of each view is kept in test-artifacts/dashboard/ (gitignored).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import OpenAI from 'openai';
import { loadConfig } from '../../lib/config.ts';
import type { UsageRecord } from '../../lib/usage/record.ts';
import { startTestGateway, sim, ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.ts';
import { launchChromium, openDashboard, shot } from '../helpers/browser.ts';

let t: TestGateway;
let browser: Browser;
let org: { orgId: string; key: string; keyId: string };
let manageKey: string;
const offOrigin: string[] = [];
const pageErrors: string[] = [];

before(async () => {
  t = await startTestGateway();
  org = await t.newOrg({ balance: 7_654_321 });
  manageKey = (await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const open = (token: string, gateway = t): Promise<Page> => openDashboard(browser, gateway.url, token, { offOrigin, pageErrors });
const limitsOf = async (key: string): Promise<any> => (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } })).json();

test('organization view: the balance is the one GET /v1/limits reports; requests appear with their exact cost', async () => {
  const page = await open(manageKey);
  const balance = page.locator('#balance');
  await balance.waitFor();
  const limits = await limitsOf(org.key);
  assert.equal(await balance.getAttribute('value'), String(limits.managed.balance.remaining_micro_usd));
  assert.equal(await balance.textContent(), '$7.654321');
  assert.match(await page.locator('#serving').textContent() ?? '', /Serving/);

  const c = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const sent: Array<{ id: string; cost: string }> = [];
  for (const body of [
    { model: 'gpt-5.4', input: `flex ${sim({ flex_start_ms: 0, output_tokens: 50 })}`, start_within: '00h-00m-30s' },
    { model: 'gpt-5.4-mini', input: `std ${sim({ output_tokens: 20 })}`, start_within: 'now' },
  ]) {
    const { response } = await c.responses.create(body as any).withResponse();
    sent.push({ id: response.headers.get('x-request-id')!, cost: response.headers.get('x-service-cost')! });
  }
  await t.gw.services.usage.flush();
  await page.getByRole('button', { name: 'Refresh' }).first().click();
  for (const s of sent) {
    const row = page.locator(`#requests tr[data-request-id="${s.id}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute('data-cost'), s.cost, 'the cost shown is the one the response reported');
    assert.equal(await row.getAttribute('data-mode'), 'managed');
  }
  const flexRow = page.locator(`#requests tr[data-request-id="${sent[0]!.id}"]`);
  assert.match(await flexRow.textContent() ?? '', /flex.*flex_committed/);
  const spent = sent.reduce((a, s) => a + Number(s.cost), 0);
  assert.equal(await page.locator('#summary-spend').getAttribute('value'), String(spent));
  assert.ok(Number(await page.locator('#summary-savings').getAttribute('value')) > 0, 'flex saved something');
  assert.equal(await page.locator('#balance').getAttribute('value'), String((await limitsOf(org.key)).managed.balance.remaining_micro_usd));
  assert.equal(await page.locator('#spend-chart svg[role="img"]').count(), 1, 'the spend chart is drawn');
  assert.ok((await page.locator('#model-chart svg rect').count()) >= 2, 'one bar per model');
  await shot(page, 'organization');
  await page.close();
});

test('keys from the page: create (shown once, works), then revoke (refused from then on)', async () => {
  const page = await open(manageKey);
  await page.locator('#keys tbody tr').first().waitFor();
  await page.getByRole('button', { name: 'Create key' }).click();
  const out = page.locator('#new-key-value');
  await out.filter({ hasText: 'flex_live_' }).waitFor();
  const newKey = (await out.textContent())!;
  const me: any = await (await fetch(`${t.url}/v1/organization`, { headers: { authorization: `Bearer ${newKey}` } })).json();
  assert.equal(me.id, org.orgId);
  assert.deepEqual(me.key.scopes, ['inference']);
  const row = page.locator(`#keys tr[data-key-id="${me.key.id}"]`);
  await row.waitFor();
  await shot(page, 'keys');
  await row.getByRole('button', { name: `Revoke key ${me.key.id}` }).click();
  await row.filter({ hasText: 'revoked' }).waitFor();
  assert.equal((await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${newKey}` } })).status, 401);
  await page.close();
});

test('a provider key set from the page: the next request runs byok and shows so', async () => {
  const page = await open(manageKey);
  await page.locator('#pkeys tbody tr').first().waitFor();
  await page.getByLabel('Route', { exact: true }).selectOption('vendor_a');
  await page.getByRole('textbox', { name: /^Key/ }).fill('own-vendor_a-key-from-the-page');
  await page.getByRole('button', { name: 'Save provider key' }).click();
  await page.locator('#pkeys tr[data-route="vendor_a"]').filter({ hasText: /set \d/ }).waitFor();
  assert.equal(await page.getByText('own-vendor_a-key-from-the-page').count(), 0, 'never shown back');

  const c = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const { response } = await c.responses.create({ model: 'gpt-5.4-mini', input: `byok ${sim({ output_tokens: 5 })}`, start_within: 'now' } as any).withResponse();
  assert.equal(response.headers.get('x-service-spend-remaining'), 'unlimited');
  await t.gw.services.usage.flush();
  await page.getByRole('button', { name: 'Refresh' }).first().click();
  const row = page.locator(`#requests tr[data-request-id="${response.headers.get('x-request-id')}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-mode'), 'byok');
  await shot(page, 'provider-keys');
  await page.getByRole('button', { name: 'Delete the vendor_a provider key' }).click();
  await page.locator('#pkeys tr[data-route="vendor_a"]').filter({ hasText: 'not set' }).waitFor();
  await page.close();
});

test('an inference-only key sees its usage but no management', async () => {
  const page = await open(org.key);
  await page.locator('#balance').waitFor();
  assert.equal(await page.locator('#keys-note').isVisible(), true);
  assert.equal(await page.locator('#keys-manage').isVisible(), false);
  assert.equal(await page.locator('#pkeys-section').isVisible(), false);
  await shot(page, 'organization-inference-only');
  await page.close();
});

test('a paused organization sees why: under review', async () => {
  const paused = await t.newOrg({ balance: 2_000_000 });
  await t.admin('POST', `/admin/v1/orgs/${paused.orgId}/review`);
  const page = await open(paused.key);
  const serving = page.locator('#serving');
  await serving.waitFor();
  assert.equal(await serving.textContent(), 'Paused: account under review');
  assert.equal((await limitsOf(paused.key)).managed.paused_reason, 'account_under_review');
  await shot(page, 'organization-paused');
  await page.close();
});

test('operator view with the admin token: every organization with its balance and state', async () => {
  const other = await t.newOrg({ balance: 1_000 });
  const page = await open(ADMIN_TOKEN);
  const row = page.locator(`#orgs tr[data-org-id="${org.orgId}"]`);
  await row.waitFor();
  const snap = (await t.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`)).json.snapshot;
  assert.equal(await row.getAttribute('data-balance'), String(snap.cashMicroUsd + snap.creditMicroUsd));
  assert.match(await row.textContent() ?? '', /serving/);
  assert.equal(await page.locator(`#orgs tr[data-org-id="${other.orgId}"]`).getAttribute('data-balance'), '1000');
  await shot(page, 'operator');
  assert.ok((await page.locator('#op-requests tbody tr').count()) >= 3, await page.locator('#status').textContent() ?? '');
  await page.close();
});

test('a wrong key is refused on the sign-in form; the page made no request off its origin and logged no error', async () => {
  const page = await open('flex_live_not-a-key');
  await page.getByText('That API key is not valid').waitFor();
  assert.equal(await page.locator('#org-view').isVisible(), false);
  await shot(page, 'sign-in-refused');
  await page.close();
  assert.deepEqual(offOrigin, [], 'no CDN, no third party: works offline');
  assert.deepEqual(pageErrors.filter((e) => !/status of 401/.test(e)), [], 'no script or CSP error');
});

test('signing out empties the page: a key created in the session is not shown to the next person who signs in on the tab', async () => {
  const other = await t.newOrg({ balance: 1_000_000 });
  const otherManage = (await t.admin('POST', `/admin/v1/orgs/${other.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key;
  const page = await open(manageKey);
  await page.locator('#keys tbody tr').first().waitFor();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#new-key-value').filter({ hasText: 'flex_live_' }).waitFor();
  const created = (await page.locator('#new-key-value').textContent())!;
  assert.equal(await page.locator('#new-key').isVisible(), true);

  // Reloading the tables (Refresh) hides it: shown once.
  await page.getByRole('button', { name: 'Refresh' }).first().click();
  await page.locator('#new-key').waitFor({ state: 'hidden' });
  assert.equal(await page.locator('#new-key-value').textContent(), '');

  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#new-key-value').filter({ hasText: 'flex_live_' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  assert.equal(await page.locator('#new-key').isVisible(), false);
  assert.equal(await page.locator('#new-key-value').textContent(), '');
  for (const id of ['state', 'summary', 'spend-chart', 'model-chart', 'requests', 'keys', 'pkeys']) {
    assert.equal(await page.locator(`#${id}`).innerHTML(), '', `#${id} is emptied`);
  }
  assert.equal(await page.locator('#status').textContent(), '');

  await page.getByLabel('API key or admin token').fill(otherManage);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#who').filter({ hasText: other.orgId }).waitFor();
  await page.locator('#keys tbody tr').first().waitFor();
  assert.equal(await page.locator('#new-key').isVisible(), false);
  assert.equal(await page.locator('#new-key-value').textContent(), '');
  assert.equal(await page.getByText(created).count(), 0);
  assert.doesNotMatch(await page.evaluate(() => document.body.innerText), /flex_live_[\w-]{20}/, 'no key anywhere on the page');
  await page.close();
});

test('"Last 30 days" counts exactly what the day chart draws: every usage call asks for the 30 UTC days shown', async () => {
  const fresh = await t.newOrg();
  const freshManage = (await t.admin('POST', `/admin/v1/orgs/${fresh.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key;
  const DAY = 86_400_000;
  const now = Date.now();
  const firstDay = Math.floor(now / DAY) * DAY - 29 * DAY;
  // Inside the API's default range (now − 30 days) but on the UTC day before the chart's first.
  const before = firstDay - Math.min(3_600_000, Math.floor((firstDay - (now - 30 * DAY)) / 2));
  const record = (id: string, at: number, cost: number) => ({
    id, org_id: fresh.orgId, key_id: fresh.keyId, at_ms: at, started_at_ms: at - 1_000, format: 'responses', model: 'gpt-5.4-mini',
    requested_route: 'vendor_a', served_route: 'vendor_a', tier: 'standard', reason: 'standard_requested', retries: 0, fallbacks: 0,
    status: 200, error_code: null, input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 10,
    reasoning_tokens: 0, usage_estimated: false, cost_micro_usd: cost, standard_cost_micro_usd: cost, key_mode: 'byok',
    time_to_commit_ms: 5, duration_ms: 10, client_closed: false, deadline_met: null,
  });
  await t.gw.services.usage.store.insert([record('req_before', before, 123_456), record('req_first_day', firstDay + 3_600_000, 1_000)] as any);

  const page = await open(freshManage);
  const spend = page.locator('#summary-spend');
  await spend.waitFor();
  const rows = page.locator('#spend-chart table tbody tr');
  assert.equal(await rows.count(), 30);
  assert.equal(await rows.first().locator('td').first().textContent(), new Date(firstDay).toISOString().slice(0, 10));
  const charted = (await rows.evaluateAll((trs) => trs.map((tr) => tr.children[2]!.textContent!)))
    .reduce((sum, usd) => sum + Number(usd.replace(/[$,.]/g, '')), 0);
  assert.equal(charted, 1_000);
  assert.equal(await spend.getAttribute('value'), String(charted), 'the summary counts what the chart draws');
  assert.equal((await page.locator('#model-chart table tbody tr').allTextContents()).length, 1);
  assert.match((await page.locator('#model-chart table tbody tr').first().textContent())!, /\$0\.001000/);
  assert.equal(await page.locator('#requests tr[data-request-id="req_before"]').count(), 0);
  assert.equal(await page.locator('#requests tr[data-request-id="req_first_day"]').count(), 1);
  await page.close();
});

const usageRecord = (orgId: string, keyId: string, id: string, at: number, over: Partial<UsageRecord> = {}): UsageRecord => ({
  id, org_id: orgId, key_id: keyId, at_ms: at, started_at_ms: at - 1_000, format: 'responses', model: 'gpt-5.4-mini',
  requested_route: 'vendor_a', served_route: 'vendor_a', tier: 'standard', reason: 'standard_requested', retries: 0, fallbacks: 0,
  status: 200, error_code: null, input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 10,
  reasoning_tokens: 0, usage_estimated: false, cost_micro_usd: 1_000, standard_cost_micro_usd: 1_000, key_mode: 'managed',
  time_to_commit_ms: 5, duration_ms: 10, client_closed: false, deadline_met: null, ...over,
} as UsageRecord);

test('operator view past usage.max_groups: the organization chart asks for the top organizations, a refused report shows in its place, the table pages', async () => {
  // max_groups 5: more organizations (and models) had requests than one report may group.
  const big = await startTestGateway({ config: { usage: { ...loadConfig(undefined).usage, max_groups: 5 } } });
  try {
    const svc = big.gw.services;
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) {
      const o = await svc.orgs.createOrg(`org ${i}`, now + i);
      await svc.ledger.ensureOrg(o.id, now + i);
      ids.push(o.id);
    }
    await svc.usage.store.insert(ids.slice(0, 8).map((id, i) =>
      usageRecord(id, 'key_x', `req_${i}`, now - 3_600_000 + i, { model: `model-${i}`, cost_micro_usd: (i + 1) * 1_000 })));
    const asked: string[] = [];
    const page = await open(ADMIN_TOKEN, big);
    page.on('request', (r) => asked.push(r.url()));
    await page.locator('#status').filter({ hasText: /Updated/ }).waitFor();

    assert.equal(await page.locator('#operator-view').isVisible(), true, 'one refused report does not blank the view');
    assert.match(await page.locator('#op-model-chart .error').textContent() ?? '', /Could not load: This report would have more than 5 groups/);
    assert.match(await page.locator('#status').textContent() ?? '', /1 of 5 sections could not load/);
    assert.equal(await page.locator('#op-summary-spend').getAttribute('value'), String(36_000), 'the other sections drew');
    assert.equal(await page.locator('#op-requests tbody tr').count(), 8);
    const bars = page.locator('#op-org-chart table tbody tr');
    assert.equal(await bars.count(), 8, 'the organization chart drew from the top-N report');
    assert.match(await bars.first().textContent() ?? '', new RegExp(`org 7 ${ids[7]}.*\\$0\\.008000`));

    const rows = page.locator('#orgs tbody tr');
    assert.equal(await rows.count(), 100, 'one page of organizations');
    asked.length = 0; // what the first load asked is done: from here, only what "More" asks
    await page.getByRole('button', { name: 'More organizations' }).click();
    await rows.nth(129).waitFor();
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-org-id'))), ids, 'every organization once, in order');
    assert.equal(await page.locator('#orgs-more').isVisible(), false, 'no more after the last page');
    await shot(page, 'operator-many');
    await page.close();
    assert.ok(asked.length === 1 && asked[0]!.includes('/admin/v1/orgs?limit=100&cursor='), asked.join(' '));
  } finally {
    await big.close();
  }
});

test('the organization chart names the top spenders however new: the newest of 130 organizations, past the table\'s first page', async () => {
  const big = await startTestGateway();
  try {
    const svc = big.gw.services;
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) {
      const o = await svc.orgs.createOrg(`org ${i}`, now + i);
      await svc.ledger.ensureOrg(o.id, now + i);
      ids.push(o.id);
    }
    await svc.usage.store.insert([
      usageRecord(ids[129]!, 'key_x', 'req_new', now - 3_600_000, { cost_micro_usd: 9_000 }),
      usageRecord(ids[0]!, 'key_x', 'req_old', now - 3_600_000 + 1, { cost_micro_usd: 1_000 }),
    ]);
    const page = await open(ADMIN_TOKEN, big);
    await page.locator('#status').filter({ hasText: /Updated/ }).waitFor();
    assert.equal(await page.locator('#orgs tbody tr').count(), 100, 'the table holds the 100 oldest, not the top spender');
    const bars = page.locator('#op-org-chart table tbody tr');
    assert.deepEqual(await bars.evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 3).map((cell) => cell.textContent))),
      [[`org 129 ${ids[129]}`, '1', '$0.009000'], [`org 0 ${ids[0]}`, '1', '$0.001000']], 'each bar named, the top spender first');
    await page.close();
  } finally {
    await big.close();
  }
});

test('the operator view asks the organization report for the top organizations only', async () => {
  const asked: string[] = [];
  const page = await browser.newPage();
  page.on('request', (r) => asked.push(new URL(r.url()).pathname + new URL(r.url()).search));
  await page.goto(`${t.url}/dashboard`);
  await page.getByLabel('API key or admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#status').filter({ hasText: /Updated/ }).waitFor();
  const byOrg = asked.filter((u) => u.includes('group_by=org'));
  assert.equal(byOrg.length, 1);
  assert.match(byOrg[0]!, /^\/admin\/v1\/usage\?group_by=org&limit=12&from=\d+$/);
  assert.ok(asked.includes('/admin/v1/orgs?limit=100'), asked.join(' '));
  await page.close();
});

test('an exempt organization is shown no ceiling and unlimited concurrency, not the report\'s sentinel', async () => {
  const ex = await t.newOrg({ balance: 1_000_000 });
  await t.admin('PUT', `/admin/v1/orgs/${ex.orgId}/exempt`, { exempt: true });
  assert.equal((await limitsOf(ex.key)).managed.daily_spend.limit_micro_usd, Number.MAX_SAFE_INTEGER, 'the API keeps its figure');
  const page = await open(ex.key);
  await page.locator('#balance').waitFor();
  assert.equal(await page.locator('#daily-ceiling').textContent(), '$0.000000 of no ceiling');
  assert.equal(await page.locator('#concurrency').textContent(), 'unlimited');
  assert.doesNotMatch(await page.locator('#state').innerText(), /9,007,199,254/);
  await page.close();

  const op = await open(ADMIN_TOKEN);
  const row = op.locator(`#orgs tr[data-org-id="${ex.orgId}"]`);
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /\$0\.000000 of no ceiling/);
  assert.match(text, /0 \/ unlimited/);
  assert.doesNotMatch(text, /9,007,199,254/);
  await op.close();
});

test('requests that cost nothing are drawn as a day chart of zero spend with their counts, not "no requests"', async () => {
  const free = await t.newOrg();
  const now = Date.now();
  await t.gw.services.usage.store.insert([1, 2, 3].map((i) =>
    usageRecord(free.orgId, free.keyId, `req_free_${i}`, now - i * 60_000, { cost_micro_usd: 0, standard_cost_micro_usd: 0, key_mode: 'byok' })));
  const page = await open(free.key);
  await page.locator('#summary-spend').waitFor();
  await page.locator('#status').filter({ hasText: /Updated/ }).waitFor();
  assert.equal(await page.locator('#spend-chart').getByText('No requests in this period.').count(), 0);
  assert.equal(await page.locator('#spend-chart svg[role="img"]').count(), 1);
  const today = new Date(now).toISOString().slice(0, 10);
  const row = page.locator('#spend-chart table tbody tr').filter({ hasText: today });
  assert.deepEqual(await row.locator('td').allTextContents(), [today, '3', '$0.000000']);
  await page.close();
});

test('a mistyped admin token costs one request (one failed authentication), so typos do not lock the operator out', async () => {
  const asked: string[] = [];
  const page = await browser.newPage();
  page.on('request', (r) => { if (r.url().includes('/admin/v1/')) asked.push(r.url()); });
  await page.goto(`${t.url}/dashboard`);
  for (let i = 1; i <= 7; i++) {
    await page.getByLabel('API key or admin token').fill(`wrong-admin-token-${i}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That admin token is not valid.').waitFor();
    assert.equal(asked.length, i, `typo ${i}: one request each`);
    await page.evaluate(() => { document.getElementById('signin-error')!.textContent = ''; });
  }
  await page.getByLabel('API key or admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#status').filter({ hasText: /Updated/ }).waitFor();
  assert.equal(await page.locator('#operator-view').isVisible(), true, 'the right token still signs in');
  await page.close();
});
