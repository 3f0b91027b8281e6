// `make install` / `npm run build`: bundles the entry points into dist/ as plain ES modules: the
// gateway, the demo, and the offline SQLite → PostgreSQL migration.
// Kept outside the bundle: better-sqlite3 (a native addon) and google-auth-library + gaxios (loaded
// on the first cloud_a call only, so a start never parses them). Identifiers are not minified, so
// stack traces keep every name without esbuild's keepNames (which wraps each closure as it is made).
//
// The bundles sit in dist/lib/ and the static files modules read relative to their own URL
// (lib/dashboard/) are copied to the same place under dist/, so `new URL('../dashboard/',
// import.meta.url)` finds them from the bundle as it does from the source.
import { build } from 'esbuild';
import { cpSync, rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** How every bundle of the project is built (the bench's gateway child uses the same). */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'google-auth-library', 'gaxios'],
  minifyWhitespace: true,
  minifySyntax: true,
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: { js: "import { createRequire as __gatewayRequire } from 'node:module'; const require = __gatewayRequire(import.meta.url);" },
  logLevel: 'warning',
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  rmSync('dist', { recursive: true, force: true });
  cpSync('lib/dashboard', 'dist/dashboard', { recursive: true });
  await build({
    ...BUNDLE_OPTIONS,
    entryPoints: { main: 'lib/main.ts', 'run-demo': 'lib/run-demo.ts', 'migrate-to-postgres': 'lib/migrate-to-postgres.ts' },
    outdir: 'dist/lib',
    outExtension: { '.js': '.mjs' },
  });
}
