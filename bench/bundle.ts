// The gateway as users run it: `npm start` executes an esbuild bundle (build.mjs), not tsx's
// per-file transform. The bench's gateway child is bundled the same way, with the same options,
// so what is measured is what runs in production.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** Where a position in a script came from: the source file of a position in bundled child
 *  `name` (line and column from 0), any other script's URL as it is. */
export type Locate = (url: string, line: number, column: number) => string;

/** A Locate for bundledChild(name)'s bundle, through a source map of the same bundle built
 *  with the same options (the code is the same; the map is not kept beside the bundle that runs,
 *  so the gateway never loads it). A profile of the bundle then names each file of `lib/`. */
export async function bundleLocator(name: string): Promise<Locate> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-map-'));
  let map: SourceMap;
  try {
    const outfile = join(dir, `${name}.mjs`);
    await build({ ...BUNDLE_OPTIONS, entryPoints: [`${ROOT}bench/${name}.ts`], outfile, sourcemap: 'external' });
    map = new SourceMap(JSON.parse(readFileSync(`${outfile}.map`, 'utf8')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const bundle = `/dist/bench/${name}.mjs`;
  const cache = new Map<string, string>();
  return (url, line, column) => {
    if (!url.endsWith(bundle)) return url;
    const key = `${line}:${column}`;
    let source = cache.get(key);
    if (source === undefined) {
      source = (map.findEntry(line, column) as { originalSource?: string }).originalSource ?? url;
      cache.set(key, source);
    }
    return source;
  };
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
