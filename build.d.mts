// Types of build.mjs's export, for the TypeScript that imports it (bench/bundle.ts).
import type { BuildOptions } from 'esbuild';
export declare const BUNDLE_OPTIONS: BuildOptions;
