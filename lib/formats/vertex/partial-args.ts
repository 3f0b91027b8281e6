// Rebuilds function-call arguments that Vertex streams as partialArgs: {jsonPath, stringValue |
// numberValue | boolValue | nullValue, willContinue}. A string whose part had willContinue goes on
// in the next part for the same path, so those pieces are appended.
type Key = string | number;

export class PartialArgs {
  private readonly root: Record<string, unknown>;
  private continuing: string | undefined;

  constructor(initial?: unknown) {
    const isObject = initial && typeof initial === 'object' && !Array.isArray(initial);
    this.root = isObject ? structuredClone(initial as Record<string, unknown>) : {};
  }

  apply(partials: unknown): void {
    if (!Array.isArray(partials)) return;
    for (const partial of partials) {
      if (!partial || typeof partial.jsonPath !== 'string') continue;
      const value = 'stringValue' in partial ? partial.stringValue
        : 'numberValue' in partial ? partial.numberValue
        : 'boolValue' in partial ? partial.boolValue
        : 'nullValue' in partial ? null
        : undefined;
      const path = parsePath(partial.jsonPath);
      if (value !== undefined && path) {
        const prev = this.continuing === partial.jsonPath ? get(this.root, path) : undefined;
        set(this.root, path, typeof value === 'string' && typeof prev === 'string' ? prev + value : value);
      }
      this.continuing = partial.willContinue ? partial.jsonPath : undefined;
    }
  }

  json(): string {
    return JSON.stringify(this.root);
  }
}

/** "$.a.b[0]['c d']" → ['a', 'b', 0, 'c d']; undefined for paths this reader does not know. */
export function parsePath(path: string): Key[] | undefined {
  if (!path.startsWith('$')) return undefined;
  const keys: Key[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]/y;
  re.lastIndex = 1;
  while (re.lastIndex < path.length) {
    const match = re.exec(path);
    if (!match) return undefined;
    keys.push(match[1] ?? (match[2] !== undefined ? Number(match[2]) : (match[3] ?? match[4]!).replace(/\\(.)/g, '$1')));
  }
  return keys;
}

function get(root: unknown, path: Key[]): unknown {
  let cur: any = root;
  for (const k of path) { if (cur === null || typeof cur !== 'object') return undefined; cur = cur[k]; }
  return cur;
}

function set(root: Record<string, unknown>, path: Key[], value: unknown): void {
  if (!path.length) return;
  let cur: any = root;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    if (cur[k] === null || typeof cur[k] !== 'object') cur[k] = typeof path[i + 1] === 'number' ? [] : {};
    cur = cur[k];
  }
  cur[path[path.length - 1]!] = value;
}
