// Printing: one table per scenario with every round, the medians of the ratios against the
// baselines of the same run, warnings for any target that did not answer 200 every time, and a
// closing summary that says which targets hold.
import type { Measurement } from './measure.ts';
import type { Scenario } from './scenario.ts';

export interface ScenarioResult { scenario: Scenario; rounds: Measurement[][] }

export interface RoundRatios { vsBare: number; vsDirect: number; cpuVsBare: number }

export function roundRatios(rows: Measurement[]): RoundRatios {
  const get = (name: Measurement['target']): Measurement | undefined => rows.find((r) => r.target === name);
  const gw = get('gateway');
  const bare = get('bare proxy');
  return {
    vsBare: (gw?.rps ?? NaN) / (bare?.rps ?? NaN),
    vsDirect: (gw?.rps ?? NaN) / (get('direct')?.rps ?? NaN),
    cpuVsBare: (gw?.proxyCpu ?? NaN) / (bare?.proxyCpu ?? NaN),
  };
}

export function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface Summary { vsBare: number; vsDirect: number; cpuVsBare: number; gatewayCpu: number; bareCpu: number; spread: [number, number] }

export function summarize(r: ScenarioResult): Summary {
  const ratios = r.rounds.map(roundRatios);
  const cpu = (name: Measurement['target']): number => median(r.rounds.map((rows) => rows.find((m) => m.target === name)?.proxyCpu ?? NaN));
  const vs = ratios.map((x) => x.vsBare);
  return {
    vsBare: median(vs), vsDirect: median(ratios.map((x) => x.vsDirect)), cpuVsBare: median(ratios.map((x) => x.cpuVsBare)),
    gatewayCpu: cpu('gateway'), bareCpu: cpu('bare proxy'), spread: [Math.min(...vs), Math.max(...vs)],
  };
}

const COLUMNS = ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'err+non2xx', 'proxy CPU µs/req', 'upstream CPU µs/req', 'autocannon CPU µs/req'];

export function printScenario(result: ScenarioResult): void {
  const { scenario, rounds } = result;
  const cells = rounds.flatMap((rows, i) => rows.map((r) => [
    String(i + 1), r.target, fixed(r.rps, 0), fixed(r.p50, 1), fixed(r.p99, 1), `${r.errors}+${r.non2xx}`,
    r.proxyCpu === undefined ? '-' : fixed(r.proxyCpu, 0), fixed(r.upstreamCpu, 0), fixed(r.loadCpu, 0),
  ]));
  console.log(`\n## ${scenario.name} — ${scenario.title}`);
  printTable(COLUMNS, cells);
  const rr = rounds.map(roundRatios);
  const s = summarize(result);
  console.log(`gateway / bare proxy req/s per round: ${rr.map((x) => fixed(x.vsBare, 2)).join(', ')} → median ${fixed(s.vsBare, 2)}`
    + ` (target ≥ ${scenario.target})${s.vsBare < scenario.target ? '  ← BELOW TARGET' : ''}`
    + `   gateway / direct: ${fixed(s.vsDirect, 2)}   CPU gateway / bare: ×${fixed(s.cpuVsBare, 2)}`);
  for (const rows of rounds) {
    for (const m of rows) {
      if (m.errors || m.non2xx) console.log(`WARNING: ${m.target} had ${m.errors} connection errors and ${m.non2xx} non-2xx responses out of ${m.requests}`);
    }
  }
}

export function printSummary(results: ScenarioResult[], upstream: string): void {
  console.log(`\n## summary on the ${upstream} upstream (medians over rounds; spread = min–max of gateway/bare)`);
  const cells = results.map((res) => {
    const s = summarize(res);
    return [
      res.scenario.name, fixed(s.vsBare, 2), `${fixed(s.spread[0], 2)}–${fixed(s.spread[1], 2)}`, `≥ ${res.scenario.target}`,
      fixed(s.vsDirect, 2), fixed(s.gatewayCpu, 0), fixed(s.bareCpu, 0), `×${fixed(s.cpuVsBare, 2)}`,
      s.vsBare >= res.scenario.target ? 'ok' : 'BELOW TARGET',
    ];
  });
  printTable(['scenario', 'gateway/bare', 'spread', 'target', 'gateway/direct', 'gateway CPU µs/req', 'bare CPU µs/req', 'CPU ratio', ''], cells);
}

export function printTable(columns: string[], cells: string[][]): void {
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: string[]): string => row.map((c, i) => (i <= 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(columns));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells) console.log(line(row));
}

export function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}
