import { WORLDS, drawRequests, runMachine, learnedPolicy, BUDGETS_MS } from './flex-policy.ts';
const seed = Number(process.env.SEED ?? 1);
const n = Number(process.env.N ?? 3000);
for (const w of WORLDS.filter((_, i) => process.env.W === undefined || String(i) === process.env.W)) {
  const draws = drawRequests(n, seed, w);
  const hedge: Array<{ at: number; unlikely: boolean } | undefined> = [];
  let k = 0;
  const served = await runMachine(draws, (c) => {
    const p = learnedPolicy(c);
    return { ...p, advisor: (arrival: number, deadlineAt: number) => {
      const i = k++; const a = p.advisor(arrival, deadlineAt);
      return { standardAt: (now: number) => { const d = a.standardAt(now); if (d.at <= now) hedge[i] = { at: now - arrival, unlikely: d.flexUnlikely }; return d; } };
    } };
  });
  console.log(`\n== ${w.name}`);
  for (const b of BUDGETS_MS) {
    const cat: Record<string, number> = {};
    const add = (s: string) => { cat[s] = (cat[s] ?? 0) + 1; };
    const hs: number[] = [];
    draws.forEach((d, i) => {
      if (d.budgetMs !== b) return;
      const s = served[i]!, h = hedge[i];
      if (h && !h.unlikely) hs.push(h.at);
      const oracleFlex = !d.flexRefused && d.flexDelayMs <= d.budgetMs;
      if (s.commitMs > b) add(`MISS@${Math.round(d.arrivalMs/1000)}s ${s.reason} hedge@${h?.at} std=${d.stdTtfeMs} flex=${d.flexRefused ? 'ref' : d.flexDelayMs}`);
      if (oracleFlex && s.tier === 'standard') add(`lostflex ${s.reason}${h?.unlikely ? ' (unlikely@' + Math.round(h.at / 1000) * 1000 + ')' : ''}`);
    });
    hs.sort((a, c) => a - c);
    const q = (p: number) => hs[Math.floor(p * (hs.length - 1))];
    console.log(`  B=${b}: hedge-at p10 ${q(0.1)} p50 ${q(0.5)} p90 ${q(0.9)} (n ${hs.length})`);
    for (const [k2, v] of Object.entries(cat).sort((a, c) => c[1] - a[1]).slice(0, 12)) console.log(`    ${v}  ${k2}`);
  }
}
