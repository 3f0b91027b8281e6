// The provider simulator as a benchmark upstream, in its own process: no start delays, no
// pacing, no refusals, 16 output tokens, so that what is measured is the proxies in front of it.
import { startSimulator } from '../lib/simulator/server.ts';
import { serveAsChild } from './processes.ts';

serveAsChild(() => startSimulator({
  seed: 1, outputTokens: 16, tokensPerS: 0,
  standard: { startMs: 0 }, flex: { startMs: { min: 0, max: 0 }, refuseRate: 0 },
}));
