// V8's collector on demand, for tests that assert what a structure lets go of: `gc()` a full
// collection, `gc({ type: 'minor' })` a scavenge only. Exposed at run time, so the suite needs no
// node flag.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');

export const gc = runInNewContext('gc') as (opts?: { type: 'minor' | 'major' }) => void;
