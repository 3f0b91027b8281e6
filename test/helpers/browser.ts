// Headless Chromium (Debian's package, driven by playwright-core) for the suites that run the
// gateway's pages and the SDKs in a real browser, and the dashboard's sign-in as a person does it.
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ARGS });

/** What the dashboard's pages did that a suite asserts never happens: requests off the gateway's
 *  origin (it works offline), script and console errors. */
export interface PageWatch { offOrigin: string[]; pageErrors: string[] }

/** A new page on the gateway at `url`'s dashboard, signed in with `token` (an API key or the admin
 *  token); dialogs are accepted. */
export async function openDashboard(browser: Browser, url: string, token: string, watch: PageWatch): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (r) => { if (!r.url().startsWith(url)) watch.offOrigin.push(r.url()); });
  page.on('pageerror', (e) => watch.pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') watch.pageErrors.push(m.text()); });
  page.on('dialog', (d) => { void d.accept(); });
  await page.goto(`${url}/dashboard`);
  await page.getByLabel('API key or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

const ARTIFACTS = new URL('../../test-artifacts/dashboard/', import.meta.url).pathname;

/** A full-page screenshot kept in test-artifacts/dashboard/ (gitignored). */
export function shot(page: Page, name: string): Promise<Buffer> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}
