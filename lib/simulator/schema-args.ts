// Tool-call arguments that satisfy the tool's JSON Schema: a small deterministic generator for the
// subset real tools use (object/required/properties, string/number/integer/boolean/array/null,
// enum/const, anyOf/oneOf/allOf, local $ref). Gemini's OpenAPI-style upper-case types
// ("OBJECT", "STRING") and `nullable` are accepted too.
//
// The schema is the caller's (a tool's parameters, a response_format), and the simulator runs
// inside the gateway on `make run`, so what one schema can ask for is bounded like a directive's
// numbers (SCHEMA_MAX): `minItems` 1000 three levels deep once asked for a billion integers and
// took the heap down, and `{anyOf: [{$ref: '#'}]}` recursed until the stack overflowed. Past a
// bound the generator gives what fits, which then no longer satisfies the schema: arrays and
// objects stop growing, strings stop lengthening. Ordinary schemas never come near the bounds.
import type { Rng } from './rng.ts';
import { generateWord } from './words.ts';

type Schema = Record<string, unknown>;
/** Nesting past which objects are left empty and arrays get only their minimum. */
const MAX_DEPTH = 6;

/** What one generated value (one tool call's arguments, one structured answer) may cost. */
export const SCHEMA_MAX = {
  /** `minItems` and `minProperties` are read as at most this. */
  items: 64,
  /** `minLength` is read as at most this. */
  length: 4_096,
  /** Values generated (every array item, property and scalar); past it nothing more is added. */
  values: 10_000,
  /** Characters of strings, property names and `const`/`enum` values. */
  chars: 256 * 1024,
  /** Nesting of values (a self-referencing array with `minItems` has no end otherwise). */
  nesting: 32,
  /** anyOf/oneOf/allOf/$ref steps in a row without a value between them (a schema that refers to
   *  itself through a combinator generates no value at all otherwise). */
  hops: 8,
} as const;

/** One generation: the schema's root, the seeded draws, what is left of the budget, and the work
 *  done once per schema node (refs resolved, allOf merged, property names listed), so a schema
 *  node used by many values costs its size once. */
interface Gen {
  root: Schema;
  rng: Rng;
  values: number;
  chars: number;
  readonly resolved: Map<Schema, Schema>;
  readonly merged: Map<Schema, Schema>;
  readonly names: Map<Schema, string[]>;
  readonly sizes: Map<object, number>;
}

export function argsForSchema(schema: unknown, rng: Rng): unknown {
  const value = valueForSchema(schema, rng);
  // Function arguments are always an object, even when the schema says nothing.
  return isObject(value) ? value : {};
}

/** A value of any type that satisfies the schema (structured output: the answer itself). */
export function valueForSchema(schema: unknown, rng: Rng): unknown {
  const root = isObject(schema) ? schema : {};
  const g: Gen = {
    root, rng, values: SCHEMA_MAX.values, chars: SCHEMA_MAX.chars,
    resolved: new Map(), merged: new Map(), names: new Map(), sizes: new Map(),
  };
  return generate(root, g, 0, 0);
}

const spent = (g: Gen): boolean => g.values <= 0 || g.chars <= 0;

/** `depth` counts nested values, `hops` the combinator and $ref steps since the last one. */
function generate(schema: Schema, g: Gen, depth: number, hops: number): unknown {
  g.values--;
  const s = resolveRef(schema, g);
  if ('const' in s) return charged(s.const, g);
  if (Array.isArray(s.enum) && s.enum.length) return charged(g.rng.pick(s.enum), g);
  const variants = (s.anyOf ?? s.oneOf) as unknown;
  if (Array.isArray(variants) && variants.length) {
    if (hops >= SCHEMA_MAX.hops) return leaf(s, g);
    const usable = variants.filter((v) => isObject(v) && typeOf(v as Schema) !== 'null');
    const chosen = usable[0] ?? variants[0];
    return generate(isObject(chosen) ? chosen : {}, g, depth, hops + 1);
  }
  if (Array.isArray(s.allOf)) return hops >= SCHEMA_MAX.hops ? leaf(s, g) : generate(mergeAllOf(s, g), g, depth, hops + 1);
  switch (typeOf(s)) {
    case 'object': return generateObject(s, g, depth);
    case 'array': return generateArray(s, g, depth);
    default: return leaf(s, g);
  }
}

/** A value of the schema's type with nothing nested in it. */
function leaf(s: Schema, g: Gen): unknown {
  switch (typeOf(s)) {
    case 'object': return {};
    case 'array': return [];
    case 'string': return generateString(s, g);
    case 'integer': return generateNumber(s, g.rng, true);
    case 'number': return generateNumber(s, g.rng, false);
    case 'boolean': return g.rng.next() < 0.5;
    case 'null': return null;
    default: return word(g);
  }
}

function typeOf(s: Schema): string | undefined {
  let t = s.type;
  if (Array.isArray(t)) t = t.find((x) => String(x).toLowerCase() !== 'null') ?? t[0];
  if (typeof t === 'string') return t.toLowerCase();
  if (isObject(s.properties) || Array.isArray(s.required)) return 'object';
  if (s.items !== undefined) return 'array';
  return undefined;
}

function generateObject(s: Schema, g: Gen, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (depth >= MAX_DEPTH || spent(g)) return out;
  const props = isObject(s.properties) ? s.properties : {};
  // Every declared property is generated (optional ones are valid too and exercise more paths);
  // a required name without a declared schema still gets a value.
  let size = 0;
  for (const name of propertyNames(s, props, g)) {
    if (spent(g)) return out;
    g.chars -= name.length;
    const sub = Object.hasOwn(props, name) ? props[name] : undefined;
    put(out, name, generate(isObject(sub) ? sub : {}, g, depth + 1, 0));
    size++;
  }
  const minProps = bounded(s.minProperties, 0, SCHEMA_MAX.items);
  for (let i = size; size < minProps && !spent(g); i++) {
    const name = `extra_${i}`;
    if (Object.hasOwn(out, name)) continue;
    g.values--;
    put(out, name, word(g));
    size++;
  }
  return out;
}

/** The names an object of this schema gets: the required ones, then the declared ones. */
function propertyNames(s: Schema, props: Schema, g: Gen): string[] {
  let names = g.names.get(s);
  if (!names) {
    const required = Array.isArray(s.required) ? s.required.filter((n): n is string => typeof n === 'string') : [];
    names = [...new Set([...required, ...Object.keys(props)])];
    g.names.set(s, names);
  }
  return names;
}

function generateArray(s: Schema, g: Gen, depth: number): unknown[] {
  const out: unknown[] = [];
  if (depth >= SCHEMA_MAX.nesting) return out;
  const min = bounded(s.minItems, 1, SCHEMA_MAX.items);
  const max = typeof s.maxItems === 'number' ? s.maxItems : Math.max(min, 2);
  const count = depth >= MAX_DEPTH ? min : g.rng.int(min, Math.max(min, Math.min(max, min + 2)));
  const items = isObject(s.items) ? s.items : {};
  for (let i = 0; i < count && !spent(g); i++) out.push(generate(items, g, depth + 1, 0));
  if (s.uniqueItems === true) return [...new Map(out.map((v) => [JSON.stringify(v), v])).values()];
  return out;
}

function generateString(s: Schema, g: Gen): string {
  const { rng } = g;
  switch (s.format) {
    case 'date-time': return '2026-01-15T10:30:00Z';
    case 'date': return '2026-01-15';
    case 'time': return '10:30:00';
    case 'email': return `${word(g)}@example.com`;
    case 'uri': case 'url': return `https://example.com/${word(g)}`;
    case 'uuid': return '123e4567-e89b-42d3-a456-426614174000';
  }
  const min = Math.min(bounded(s.minLength, 0, SCHEMA_MAX.length), Math.max(0, g.chars));
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  let text = generateWord(rng);
  while (text.length < min) text += ' ' + generateWord(rng);
  g.chars -= text.length;
  return text.length > max ? text.slice(0, max) : text;
}

function word(g: Gen): string {
  const text = generateWord(g.rng);
  g.chars -= text.length;
  return text;
}

function generateNumber(s: Schema, rng: Rng, integer: boolean): number {
  const exMin = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : undefined;
  const exMax = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : undefined;
  let lo = typeof s.minimum === 'number' ? s.minimum : exMin !== undefined ? exMin + (integer ? 1 : 0.5) : 0;
  let hi = typeof s.maximum === 'number' ? s.maximum : exMax !== undefined ? exMax - (integer ? 1 : 0.5) : lo + 100;
  if (hi < lo) hi = lo;
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined;
  if (step !== undefined) {
    const first = Math.ceil(lo / step);
    const last = Math.max(first, Math.floor(hi / step));
    return rng.int(first, last) * step;
  }
  const v = Math.round((lo + rng.next() * (hi - lo)) * 100) / 100;
  return Math.min(hi, Math.max(lo, v));
}

/** allOf's parts as one schema: their properties and required names joined, the first type. */
function mergeAllOf(s: Schema, g: Gen): Schema {
  const cached = g.merged.get(s);
  if (cached) return cached;
  const merged: Schema = { ...s };
  delete merged.allOf;
  // No prototype: a part's own "__proto__" property is a property name like any other.
  const props: Schema = Object.assign(Object.create(null) as Schema, isObject(s.properties) ? s.properties : {});
  const required: unknown[] = Array.isArray(s.required) ? [...s.required] : [];
  for (const part of s.allOf as unknown[]) {
    if (!isObject(part)) continue;
    const p = resolveRef(part, g);
    if (isObject(p.properties)) Object.assign(props, p.properties);
    if (Array.isArray(p.required)) required.push(...p.required);
    if (p.type && !merged.type) merged.type = p.type;
  }
  const out = { ...merged, properties: props, required };
  g.merged.set(s, out);
  return out;
}

function resolveRef(s: Schema, g: Gen): Schema {
  if (typeof s.$ref !== 'string') return s;
  let cur = g.resolved.get(s);
  if (cur) return cur;
  cur = s;
  for (let hops = 0; typeof cur.$ref === 'string' && hops < 8; hops++) {
    const path = (cur.$ref as string).replace(/^#\/?/, '').split('/').filter(Boolean);
    let target: unknown = g.root;
    for (const key of path) {
      const name = key.replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) && Object.hasOwn(target, name) ? target[name] : undefined;
    }
    if (!isObject(target)) { cur = {}; break; }
    cur = target;
  }
  g.resolved.set(s, cur);
  return cur;
}

/** A `const` or `enum` value, charged to the budget by its JSON size (measured once per value). */
function charged(value: unknown, g: Gen): unknown {
  if (typeof value === 'string') g.chars -= value.length;
  else if (value !== null && typeof value === 'object') {
    let size = g.sizes.get(value);
    if (size === undefined) g.sizes.set(value, size = JSON.stringify(value)?.length ?? 0);
    g.chars -= size;
  }
  return value;
}

/** A schema's count keyword as a whole number from 0 to `max` (`1e999` parses as Infinity). */
function bounded(value: unknown, fallback: number, max: number): number {
  if (typeof value !== 'number' || Number.isNaN(value)) return Math.min(fallback, max);
  return Math.min(Math.max(0, Math.ceil(value)), max);
}

/** An own property even when the name is "__proto__" (an assignment would set the prototype). */
function put(out: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
