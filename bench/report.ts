// Printing: one table per scenario, its ratios against the baselines of the same run, warnings
// for any target that did not answer 200 every time, and a closing summary.
import type { Measurement } from './measure.ts';
import type { Scenario } from './scenario.ts';

/** The gateway should keep at least this share of the bare proxy's requests/s. */
export const TARGET_RATIO = 0.6;

export interface ScenarioResult { scenario: Scenario; rows: Measurement[] }

export interface Ratios { vsBare: number; vsDirect: number }

export function ratios(rows: Measurement[]): Ratios {
  const rps = (name: Measurement['target']): number => rows.find((r) => r.target === name)?.rps ?? NaN;
  return { vsBare: rps('gateway') / rps('bare proxy'), vsDirect: rps('gateway') / rps('direct') };
}

const COLUMNS = ['target', 'req/s', 'p50 ms', 'p99 ms', 'err+non2xx', 'proxy CPU µs/req', 'sim CPU µs/req', 'autocannon CPU µs/req'];

export function printScenario({ scenario, rows }: ScenarioResult): void {
  const cells = rows.map((r) => [
    r.target, fixed(r.rps, 0), fixed(r.p50, 0), fixed(r.p99, 0), `${r.errors}+${r.non2xx}`,
    r.proxyCpu === undefined ? '-' : fixed(r.proxyCpu, 0), fixed(r.simCpu, 0), fixed(r.loadCpu, 0),
  ]);
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: string[]): string => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n## ${scenario.name} — ${scenario.title}`);
  console.log(line(COLUMNS));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells) console.log(line(row));
  const r = ratios(rows);
  console.log(`gateway / bare proxy req/s: ${fixed(r.vsBare, 2)} (target ≥ ${TARGET_RATIO})${r.vsBare < TARGET_RATIO ? '  ← BELOW TARGET' : ''}`
    + `   gateway / direct req/s: ${fixed(r.vsDirect, 2)}`);
  for (const m of rows) {
    if (m.errors || m.non2xx) console.log(`WARNING: ${m.target} had ${m.errors} connection errors and ${m.non2xx} non-2xx responses out of ${m.requests}`);
  }
}

export function printSummary(results: ScenarioResult[]): void {
  console.log('\n## summary (requests/s ratios, same run)');
  const width = Math.max(...results.map((r) => r.scenario.name.length));
  for (const res of results) {
    const r = ratios(res.rows);
    const cpu = (name: Measurement['target']): number => res.rows.find((m) => m.target === name)?.proxyCpu ?? NaN;
    console.log(`${res.scenario.name.padEnd(width)}  gateway/bare ${fixed(r.vsBare, 2)}  gateway/direct ${fixed(r.vsDirect, 2)}`
      + `  CPU µs/req gateway ${fixed(cpu('gateway'), 0)} vs bare ${fixed(cpu('bare proxy'), 0)} (×${fixed(cpu('gateway') / cpu('bare proxy'), 1)})`
      + `  ${r.vsBare >= TARGET_RATIO ? 'ok' : 'BELOW TARGET'}`);
  }
}

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}
