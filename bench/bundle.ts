// The gateway as users run it: `npm start` executes an esbuild bundle (build.mjs), not tsx's
// per-file transform. The bench's gateway child is bundled the same way, with the same options,
// so what is measured is what runs in production.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { BUNDLE_OPTIONS } from '../build.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Bundles bench/<name>.ts to dist/bench/<name>.mjs; returns the bundle's path. */
export async function bundledChild(name: string): Promise<string> {
  const outfile = `${ROOT}dist/bench/${name}.mjs`;
  await build({ ...BUNDLE_OPTIONS, entryPoints: [`${ROOT}bench/${name}.ts`], outfile });
  return outfile;
}

/** The node flags `npm start` runs the gateway with (package.json's start script), so a bench
 *  child runs as production does; BENCH_GATEWAY_FLAGS adds to them (a later flag wins), e.g.
 *  `--max-semi-space-size=16` to compare young-generation sizes. */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } };
  const own = pkg.scripts.start.split(' ').filter((w) => w.startsWith('--'));
  return [...own, ...envFlags('BENCH_GATEWAY_FLAGS')];
}

/** Node flags from an environment variable, space-separated (BENCH_GATEWAY_FLAGS,
 *  BENCH_BARE_FLAGS, BENCH_UPSTREAM_FLAGS: e.g. `--trace-gc-nvp` on one child). */
export function envFlags(name: string): string[] {
  return (process.env[name] ?? '').split(' ').filter(Boolean);
}
