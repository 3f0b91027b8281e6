// Rebuilds function-call arguments that Vertex streams as partialArgs: {jsonPath, stringValue |
// numberValue | boolValue | nullValue, willContinue}. A string whose part had willContinue goes on
// in the next part for the same path, so those pieces are appended.
//
// The paths name the model's own argument keys, and a model may name one "__proto__",
// "constructor" or "prototype" (a prompt can ask it to). Every object here is made with no
// prototype, so such a key is an ordinary own key of the arguments, and no path reaches
// Object.prototype (a write there once changed every object of the process). Arrays take only
// index keys.
type Key = string | number;
type Container = Record<string, unknown> | unknown[];

export class PartialArgs {
  private readonly root: Record<string, unknown>;
  private continuing: string | undefined;

  constructor(initial?: unknown) {
    const isObject = initial && typeof initial === 'object' && !Array.isArray(initial);
    this.root = isObject ? ownCopy(initial) as Record<string, unknown> : Object.create(null);
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

/** A JSON value with every object in it rebuilt without a prototype (arrays stay arrays). */
function ownCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(ownCopy);
  const out: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) out[key] = ownCopy((value as Record<string, unknown>)[key]);
  return out;
}

/** Can `key` be read or written on `container`? An array takes an index up to its length (an
 *  element or the next one: Vertex streams elements in order, and a far index would make a
 *  sparse array whose JSON is that many nulls); an object any key, its own. */
function fits(container: Container, key: Key): boolean {
  return Array.isArray(container) ? typeof key === 'number' && key <= container.length : true;
}

function get(root: Container, path: Key[]): unknown {
  let cur: unknown = root;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || !fits(cur as Container, k)) return undefined;
    cur = (cur as Record<Key, unknown>)[k];
  }
  return cur;
}

/** Writes `value` at `path`, making the objects and arrays on the way; a path that does not fit
 *  what is there (a name on an array) is left out. */
function set(root: Container, path: Key[], value: unknown): void {
  if (!path.length) return;
  let cur = root as Record<Key, unknown>;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    if (!fits(cur, k)) return;
    let next = cur[k];
    if (next === null || typeof next !== 'object') next = cur[k] = typeof path[i + 1] === 'number' ? [] : Object.create(null);
    cur = next as Record<Key, unknown>;
  }
  const last = path[path.length - 1]!;
  if (fits(cur, last)) cur[last] = value;
}
