// The gateway as users run it: `npm start` executes an esbuild bundle (build.mjs), not tsx's
// per-file transform. The bench's gateway child is bundled the same way, with the same options,
// so what is measured is what runs in production.
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
