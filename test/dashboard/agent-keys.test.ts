// Agent keys from the dashboard, in a real browser (headless Debian Chromium via playwright-core)
// against a real gateway on the simulator, set up as test/dashboard/dashboard.test.ts is: a key
// created with a default start_within and a default provider chain through the form is stored
// with them (GET /v1/organization/keys), listed with them, and routes a request that names
// neither; a value the API refuses shows its message in the form and creates nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import OpenAI from 'openai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { launchChromium, openDashboard, shot } from '../helpers/browser.ts';

let t: TestGateway;
let browser: Browser;
let org: { orgId: string; key: string; keyId: string };
let manageKey: string;
const offOrigin: string[] = [];
const pageErrors: string[] = [];

before(async () => {
  t = await startTestGateway();
  org = await t.newOrg({ balance: 5_000_000 });
  manageKey = (await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { scopes: ['inference', 'manage'] })).json.key;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const open = (token: string): Promise<Page> => openDashboard(browser, t.url, token, { offOrigin, pageErrors });
const listKeys = async (): Promise<any[]> =>
  ((await (await fetch(`${t.url}/v1/organization/keys`, { headers: { authorization: `Bearer ${manageKey}` } })).json()) as any).data;

/** The cells of a row of the keys table, by column header. */
async function keyCells(page: Page, keyId: string): Promise<Record<string, string>> {
  const headers = await page.locator('#keys thead th').allTextContents();
  const cells = await page.locator(`#keys tr[data-key-id="${keyId}"] td`).allTextContents();
  return Object.fromEntries(headers.map((h, i) => [h, cells[i]!]));
}

test('an agent key from the form: stored and listed with its start_within and chain, and a request naming neither runs by them', async () => {
  const page = await open(manageKey);
  await page.locator(`#keys tr[data-key-id="${org.keyId}"]`).waitFor();
  const plain = await keyCells(page, org.keyId);
  assert.deepEqual([plain['Default start_within'], plain['Default provider']], ['—', '—'], 'a key without defaults shows none');

  await page.getByLabel('Default start_within').fill('00h-00m-30s');
  await page.getByLabel('Default provider').fill('vendor_b, cloud_a');
  await page.getByRole('button', { name: 'Create key' }).click();
  const out = page.locator('#new-key-value');
  await out.filter({ hasText: 'flex_live_' }).waitFor();
  const agentKey = (await out.textContent())!;
  assert.equal(await page.locator('#key-error').textContent(), '');

  const me: any = await (await fetch(`${t.url}/v1/organization`, { headers: { authorization: `Bearer ${agentKey}` } })).json();
  const stored = (await listKeys()).find((k) => k.id === me.key.id);
  assert.deepEqual([stored.default_start_within, stored.default_provider, stored.scopes], ['00h-00m-30s', ['vendor_b', 'cloud_a'], ['inference']]);
  await page.locator(`#keys tr[data-key-id="${me.key.id}"]`).waitFor();
  const cells = await keyCells(page, me.key.id);
  assert.deepEqual([cells['Default start_within'], cells['Default provider']], ['00h-00m-30s', 'vendor_b, cloud_a']);
  await shot(page, 'agent-key');
  await page.close();

  // No start_within, no provider: without the key's defaults this is 400 missing_start_within.
  const c = new OpenAI({ apiKey: agentKey, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const { data, response } = await c.responses.create({
    model: 'gemini-3.5-flash', input: `agent ${sim({ flex_start_ms: 0, output_tokens: 5 })}`, include_cost: true,
  } as any).withResponse();
  assert.equal(response.headers.get('x-service-served-provider'), 'vendor_b');
  assert.equal(response.headers.get('x-service-routing-reason'), 'requested', 'the key\'s chain requested vendor_b');
  assert.equal(response.headers.get('x-service-flex-applied'), 'true', 'the key\'s duration raced flex');
  const routing = (data as any).usage.routing;
  assert.deepEqual([routing.provider, routing.requested_provider, routing.tier, routing.reason], ['vendor_b', 'vendor_b', 'flex', 'flex_committed']);
});

test('a value the API refuses shows its message in the form and creates nothing', async () => {
  const page = await open(manageKey);
  await page.locator(`#keys tr[data-key-id="${org.keyId}"]`).waitFor();
  const before = (await listKeys()).map((k) => k.id);
  const error = page.locator('#key-error');
  const startWithin = page.getByLabel('Default start_within');
  const provider = page.getByLabel('Default provider');

  const refused = async (deadline: string, chain: string, message: RegExp, invalid: 'start' | 'provider'): Promise<void> => {
    await startWithin.fill(deadline);
    await provider.fill(chain);
    await page.getByRole('button', { name: 'Create key' }).click();
    await error.filter({ hasText: message }).waitFor();
    assert.equal(await page.getByRole('alert').filter({ hasText: message }).count(), 1, 'announced');
    assert.equal(await startWithin.getAttribute('aria-invalid'), invalid === 'start' ? 'true' : null);
    assert.equal(await provider.getAttribute('aria-invalid'), invalid === 'provider' ? 'true' : null);
    assert.equal(await page.locator('#new-key').isVisible(), false);
    // The message is tied to the field it is about, so a screen reader on the field says why.
    const field = invalid === 'start' ? startWithin : provider;
    assert.match(await field.getAttribute('aria-describedby') ?? '', /\bkey-error\b/);
  };
  await refused('30s', '', /^Not created: default_start_within must be "HHh-MMm-SSs"/, 'start');
  // Editing the refused field takes its mark away.
  await startWithin.fill('00h-00m-3');
  assert.equal(await startWithin.getAttribute('aria-invalid'), null);
  assert.equal(await startWithin.getAttribute('aria-describedby'), 'key-start-within-hint');
  await refused('now', 'vendor_a, vendor_x', /^Not created: default_provider must be a non-empty array of distinct routes/, 'provider');
  await refused('now', 'vendor_c, vendor_c', /distinct routes/, 'provider');
  await refused('00h-00m-30s', 'cloud_b, vendor_c', /cloud route \(cloud_b\) first/, 'provider');
  await shot(page, 'agent-key-refused');
  assert.deepEqual((await listKeys()).map((k) => k.id), before, 'nothing created');

  // Fixed, the same form creates the key, and the message is gone.
  await startWithin.fill('now');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#new-key-value').filter({ hasText: 'flex_live_' }).waitFor();
  assert.equal(await error.textContent(), '');
  assert.equal(await provider.getAttribute('aria-invalid'), null);
  const added = (await listKeys()).filter((k) => !before.includes(k.id));
  assert.deepEqual(added.map((k) => [k.default_start_within, k.default_provider]), [['now', ['cloud_b', 'vendor_c']]]);
  // The next key starts from an empty form; a refusal then leaves neither the key shown before nor
  // its "created" message beside the error.
  assert.deepEqual([await startWithin.inputValue(), await provider.inputValue()], ['', '']);
  await refused('99h', '', /default_start_within must be/, 'start');
  assert.doesNotMatch(await page.locator('#status').textContent() ?? '', /created/);
  await page.close();
  assert.deepEqual(offOrigin, [], 'no CDN, no third party: works offline');
  assert.deepEqual(pageErrors.filter((e) => !/status of 400/.test(e)), [], 'no script or CSP error');
});
