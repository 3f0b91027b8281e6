// `replay`: answer with a recorded file instead of generated content. A `.json` file is the body
// as-is; any other file is one payload per line (split on \n, empty lines skipped), each sent
// byte-for-byte in the route's own framing. Paths must stay inside fixturesDir.
import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

export type Replay =
  | { ok: true; kind: 'json'; body: Buffer }
  | { ok: true; kind: 'lines'; lines: string[] }
  | { ok: false; message: string };

export async function loadReplay(fixturesDir: string, relative: string): Promise<Replay> {
  const root = resolve(fixturesDir);
  const file = resolve(root, relative);
  if (!file.startsWith(root + sep)) return { ok: false, message: `#sim replay: ${relative} is outside the fixtures directory` };
  let bytes: Buffer;
  try { bytes = await readFile(file); } catch {
    return { ok: false, message: `#sim replay: cannot read ${relative}` };
  }
  if (file.endsWith('.json')) return { ok: true, kind: 'json', body: bytes };
  return { ok: true, kind: 'lines', lines: bytes.toString('utf8').split('\n').filter((l) => l.length > 0) };
}
