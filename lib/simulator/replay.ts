// `replay`: answer with a recorded file instead of generated content. A `.json` file is the body
// as-is; any other file is one payload per line (split on \n, empty lines skipped), each sent
// byte-for-byte in the route's own framing. Files are read only from the configured folder
// (simulator option `fixturesDir`); a path that leaves it, by `../`, an absolute path or a symbolic
// link, is refused, and without a folder every replay is.
import { readFile, realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

export type Replay =
  | { ok: true; kind: 'json'; body: Buffer }
  | { ok: true; kind: 'lines'; lines: string[] }
  | { ok: false; message: string };

export async function loadReplay(fixturesDir: string | undefined, relative: string): Promise<Replay> {
  if (fixturesDir === undefined) {
    return { ok: false, message: '#sim replay: no replay folder is configured (simulator option fixturesDir)' };
  }
  const outside = { ok: false, message: `#sim replay: ${relative} is outside the fixtures directory` } as const;
  const root = resolve(fixturesDir);
  const file = resolve(root, relative);
  if (!file.startsWith(root + sep)) return outside;
  let bytes: Buffer;
  try {
    // The real paths too: a symbolic link inside the folder must not lead out of it.
    const realRoot = await realpath(root);
    if (!(await realpath(file)).startsWith(realRoot + sep)) return outside;
    bytes = await readFile(file);
  } catch {
    return { ok: false, message: `#sim replay: cannot read ${relative}` };
  }
  if (file.endsWith('.json')) return { ok: true, kind: 'json', body: bytes };
  return { ok: true, kind: 'lines', lines: bytes.toString('utf8').split('\n').filter((l) => l.length > 0) };
}
