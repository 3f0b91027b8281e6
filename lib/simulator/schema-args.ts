// Tool-call arguments that satisfy the tool's JSON Schema: a small deterministic generator for the
// subset real tools use (object/required/properties, string/number/integer/boolean/array/null,
// enum/const, anyOf/oneOf/allOf, local $ref). Gemini's OpenAPI-style upper-case types
// ("OBJECT", "STRING") and `nullable` are accepted too.
import type { Rng } from './rng.ts';
import { generateWord } from './words.ts';

type Schema = Record<string, unknown>;
const MAX_DEPTH = 6;

export function argsForSchema(schema: unknown, rng: Rng): unknown {
  const root = isObject(schema) ? schema : {};
  const value = generate(root, root, rng, 0);
  // Function arguments are always an object, even when the schema says nothing.
  return isObject(value) ? value : {};
}

/** A value of any type that satisfies the schema (structured output: the answer itself). */
export function valueForSchema(schema: unknown, rng: Rng): unknown {
  const root = isObject(schema) ? schema : {};
  return generate(root, root, rng, 0);
}

function generate(schema: Schema, root: Schema, rng: Rng, depth: number): unknown {
  const s = resolveRef(schema, root);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return rng.pick(s.enum);
  const variants = (s.anyOf ?? s.oneOf) as unknown;
  if (Array.isArray(variants) && variants.length) {
    const usable = variants.filter((v) => isObject(v) && typeOf(v as Schema) !== 'null');
    return generate((usable[0] ?? variants[0]) as Schema, root, rng, depth);
  }
  if (Array.isArray(s.allOf)) return generateAllOf(s, root, rng, depth);
  switch (typeOf(s)) {
    case 'object': return generateObject(s, root, rng, depth);
    case 'array': return generateArray(s, root, rng, depth);
    case 'string': return generateString(s, rng);
    case 'integer': return generateNumber(s, rng, true);
    case 'number': return generateNumber(s, rng, false);
    case 'boolean': return rng.next() < 0.5;
    case 'null': return null;
    default: return generateWord(rng);
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

function generateObject(s: Schema, root: Schema, rng: Rng, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (depth >= MAX_DEPTH) return out;
  const props = isObject(s.properties) ? (s.properties as Record<string, Schema>) : {};
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  // Every declared property is generated (optional ones are valid too and exercise more paths);
  // a required name without a declared schema still gets a value.
  for (const name of new Set([...required, ...Object.keys(props)])) {
    out[name] = generate(isObject(props[name]) ? props[name]! : {}, root, rng, depth + 1);
  }
  const minProps = typeof s.minProperties === 'number' ? s.minProperties : 0;
  for (let i = Object.keys(out).length; i < minProps; i++) out[`extra_${i}`] = generateWord(rng);
  return out;
}

function generateArray(s: Schema, root: Schema, rng: Rng, depth: number): unknown[] {
  const min = typeof s.minItems === 'number' ? s.minItems : 1;
  const max = typeof s.maxItems === 'number' ? s.maxItems : Math.max(min, 2);
  const count = depth >= MAX_DEPTH ? min : rng.int(min, Math.max(min, Math.min(max, min + 2)));
  const items = isObject(s.items) ? (s.items as Schema) : {};
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) out.push(generate(items, root, rng, depth + 1));
  if (s.uniqueItems === true) return [...new Map(out.map((v) => [JSON.stringify(v), v])).values()];
  return out;
}

function generateString(s: Schema, rng: Rng): string {
  switch (s.format) {
    case 'date-time': return '2026-01-15T10:30:00Z';
    case 'date': return '2026-01-15';
    case 'time': return '10:30:00';
    case 'email': return `${generateWord(rng)}@example.com`;
    case 'uri': case 'url': return `https://example.com/${generateWord(rng)}`;
    case 'uuid': return '123e4567-e89b-42d3-a456-426614174000';
  }
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  let text = generateWord(rng);
  while (text.length < min) text += ' ' + generateWord(rng);
  return text.length > max ? text.slice(0, max) : text;
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

function generateAllOf(s: Schema, root: Schema, rng: Rng, depth: number): unknown {
  const merged: Schema = { ...s, allOf: undefined };
  const props: Record<string, unknown> = { ...(s.properties as object | undefined) };
  const required: string[] = [...((s.required as string[] | undefined) ?? [])];
  for (const part of s.allOf as unknown[]) {
    if (!isObject(part)) continue;
    const p = resolveRef(part, root);
    Object.assign(props, p.properties as object | undefined);
    required.push(...((p.required as string[] | undefined) ?? []));
    if (p.type && !merged.type) merged.type = p.type;
  }
  delete merged.allOf;
  return generate({ ...merged, properties: props, required }, root, rng, depth);
}

function resolveRef(s: Schema, root: Schema): Schema {
  let cur = s;
  for (let hops = 0; typeof cur.$ref === 'string' && hops < 8; hops++) {
    const path = (cur.$ref as string).replace(/^#\/?/, '').split('/').filter(Boolean);
    let target: unknown = root;
    for (const key of path) target = isObject(target) ? (target as Schema)[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (!isObject(target)) return {};
    cur = target as Schema;
  }
  return cur;
}

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
