// docs/errors.md and the code table (lib/errors.ts) list the same codes with the same statuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERRORS } from '../lib/errors.ts';

test('docs/errors.md lists every code of lib/errors.ts, with its status, and no other', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])] as const);
  const documented = new Map(rows);
  assert.equal(documented.size, rows.length, 'each code documented once');
  assert.deepEqual([...documented.keys()].sort(), Object.keys(ERRORS).sort());
  for (const [code, spec] of Object.entries(ERRORS)) assert.equal(documented.get(code), spec.status, `${code}: status`);
});
