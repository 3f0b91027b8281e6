// Run the provider simulator standalone: `npx tsx lib/simulator/main.ts`.
// Env: SIM_PORT (default 9090), SIM_HOST, SIM_SEED, and realistic timing knobs
// SIM_STANDARD_START_MS, SIM_FLEX_START_MIN_MS, SIM_FLEX_START_MAX_MS, SIM_FLEX_REFUSE_RATE,
// SIM_TOKENS_PER_S, SIM_OUTPUT_TOKENS, SIM_FIXTURES_DIR (the `replay` folder; none by default).
import { startSimulator } from './server.ts';

const num = (name: string): number | undefined => {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(v)}`);
  return n;
};

const flexMin = num('SIM_FLEX_START_MIN_MS');
const flexMax = num('SIM_FLEX_START_MAX_MS');
const sim = await startSimulator({
  port: num('SIM_PORT') ?? 9090,
  host: process.env.SIM_HOST || undefined,
  seed: num('SIM_SEED'),
  standard: { startMs: num('SIM_STANDARD_START_MS') },
  flex: {
    startMs: flexMin !== undefined || flexMax !== undefined
      ? { min: flexMin ?? 0, max: flexMax ?? flexMin ?? 0 } : undefined,
    refuseRate: num('SIM_FLEX_REFUSE_RATE'),
  },
  tokensPerS: num('SIM_TOKENS_PER_S'),
  outputTokens: num('SIM_OUTPUT_TOKENS'),
  fixturesDir: process.env.SIM_FIXTURES_DIR || undefined,
});
console.log(`provider simulator listening on ${sim.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { void sim.close().then(() => process.exit(0)); });
}
