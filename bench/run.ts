// `make bench`: every part in one run, each with its baselines measured in the same run.
// 1. throughput on the minimal upstream (the proxies' own cost), in rounds with rotated order;
// 2. one connection: added first byte and p99; 3. 1,000 slow open streams: memory per stream
// (fresh processes); 4. the request machine alone; 5. throughput on the provider simulator (what
// `make run` users see), one round.
import { runScenarios, startServers, stopServers } from './harness.ts';
import { runFirstByte } from './first-byte.ts';
import { runOpenStreams } from './open-streams.ts';
import { spawn } from 'node:child_process';
import { bundledChild, startFlags } from './bundle.ts';
import { MINIMAL_SCENARIOS } from './minimal.ts';
import { responsesNonstream } from './responses-nonstream.ts';
import { responsesStream } from './responses-stream.ts';
import { chatTranslatedStream } from './chat-translated-stream.ts';
import { responsesFlexStream } from './responses-flex-stream.ts';

/** bench/machine.ts bundled and run on plain node with `npm start`'s flags, as the gateway runs. */
async function runMachineBundled(): Promise<void> {
  const child = spawn(process.execPath, [...startFlags(), await bundledChild('machine')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`bench/machine exited ${code}`);
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const minimal = await startServers('minimal');
  try {
    await runScenarios(MINIMAL_SCENARIOS, 'minimal', minimal);
    await runFirstByte(minimal);
  } finally {
    await stopServers(minimal);
  }
  await runOpenStreams();   // fresh processes: idle memory is that of a process that has not been loaded
  await runMachineBundled();
  process.env.BENCH_ROUNDS = '1';
  await runScenarios([responsesNonstream, responsesStream, chatTranslatedStream, responsesFlexStream], 'simulator');
  console.log(`\n# make bench took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exit(1);
});
