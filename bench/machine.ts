// What the request machine costs a request: CPU per request of startRequest → commit
// in one process, attempts that commit at once (no network), for the shapes the gateway runs: a
// "now" request on one route (every request pays this), a flex race whose flex commits first, and
// a fallback chain whose first route fails. The figure to set beside the gateway's CPU µs/req.
// `make bench` runs it as the gateway runs: bundled, on plain node with `npm start`'s flags
// (bench/run.ts). `npx tsx bench/machine.ts` measures tsx's transform as well (its `__name`
// wrapper on every closure made): a `"now"` request measured 23.6 µs under tsx, 14.5 bundled.
import { startRequest, type HedgeAdvisor, type MachineInput } from '../lib/machine/request-machine.ts';
import { AttemptFailed, type Committed } from '../lib/stream/attempt.ts';
import type { RouteName, Tier } from '../lib/routes.ts';
import { isMain } from './processes.ts';
import { printTable, fixed } from './report.ts';

const N = Number(process.env.BENCH_MACHINE_N ?? 20_000);
const hedge: HedgeAdvisor = { standardAt: (now) => ({ at: now + 20_000, flexUnlikely: false }) };
const refused = new AttemptFailed({ kind: 'transient', status: 503, message: 'down' });

function launcher(failRoute?: RouteName): MachineInput['launch'] {
  return (route: RouteName, tier: Tier) => ({
    committed: route === failRoute ? Promise.reject(refused) : Promise.resolve({ route, tier, committedAt: 0 } as unknown as Committed),
    abort() {},
  });
}

async function cpuPerRequest(input: Omit<MachineInput, 'now' | 'random' | 'hedge' | 'deadlineAt'>): Promise<number> {
  const run = async (n: number): Promise<number> => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const r = startRequest({ ...input, hedge, deadlineAt: Date.now() + 30_000, now: Date.now, random: Math.random });
      const o = await r.outcome;
      if (!o.winner) throw new Error('no winner');
    }
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n;
  };
  await run(N / 4);   // warm-up
  return run(N);
}

export async function runMachineBench(): Promise<void> {
  const rows = [
    ['"now", one route', await cpuPerRequest({ routes: ['vendor_a'], flex: 'off', launch: launcher() })],
    ['flex race, flex commits', await cpuPerRequest({ routes: ['vendor_a'], flex: 'race', launch: launcher() })],
    ['fallback: route 1 fails', await cpuPerRequest({ routes: ['vendor_a', 'vendor_b'], flex: 'off', launch: launcher('vendor_a') })],
  ] as const;
  console.log(`\n## machine — CPU µs per request through the xstate request machine alone (${N} requests each, one process, attempts commit at once; ${process.argv[1]?.endsWith('.mjs') ? 'bundled, node flags ' + process.execArgv.join(' ') : 'under tsx'})`);
  printTable(['request', 'machine CPU µs/req'], rows.map(([name, us]) => [name, fixed(us, 1)]));
}

if (isMain(import.meta.url)) runMachineBench().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
