import { WORLDS, drawRequests, runMachine, learnedPolicy } from './flex-policy.ts';
const seed = Number(process.env.SEED ?? 1), n = Number(process.env.N ?? 9000), W = Number(process.env.W ?? 1), B = Number(process.env.B ?? 120000);
const w = WORLDS[W]!;
const draws = drawRequests(n, seed, w);
const info: any[] = [];
let k = 0;
const served = await runMachine(draws, (c) => {
  const p = learnedPolicy(c);
  const est = (p.scheduler as any).est as Map<string, any>;
  return { ...p, advisor: (arrival: number, deadlineAt: number) => {
    const i = k++; const a = p.advisor(arrival, deadlineAt);
    if (draws[i]!.budgetMs === B) {
      const e = [...est.values()][0];
      if (e) {
        const fails = 1 - e.flex.eventBy(B) - e.flex.otherBy(B / 2);
        info[i] = { fails, se: e.flex.survivalError(B, arrival), atRisk: e.flex.atRisk(B * 0.9, arrival), w: e.flex.weight(arrival),
          q50: e.standard.quantile(0.5), q90: e.standard.quantile(0.9), emp: e.standard.quantile(0.998), lead998: p.scheduler.lead(e, 0.998, arrival) };
      }
    }
    return a;
  } };
});
const rows = info.map((x, i) => ({ i, ...x })).filter(Boolean);
const med = (f: (r: any) => number) => { const v = rows.map(f).filter((x) => Number.isFinite(x)).sort((a, b) => a - b); return [v[Math.floor(v.length * 0.1)], v[Math.floor(v.length / 2)], v[Math.floor(v.length * 0.9)]].map((x) => Number(x?.toFixed(4))); };
console.log('fails p10/50/90', med((r) => r.fails), 'se', med((r) => r.se), 'atRisk@0.9B', med((r) => r.atRisk), 'weight', med((r) => r.w));
console.log('std q50', med((r) => r.q50), 'q90', med((r) => r.q90), 'emp q99.8', med((r) => r.emp), 'lead q99.8', med((r) => r.lead998));
const trueFail = draws.filter((d) => d.budgetMs === B).filter((d) => !d.flexRefused && d.flexDelayMs > B).length / draws.filter((d) => d.budgetMs === B).length;
console.log('true fails', trueFail.toFixed(4));
for (const r of rows) if (served[r.i]!.commitMs > B) console.log('MISS', r);
