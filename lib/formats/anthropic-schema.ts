// A caller's JSON Schema narrowed to what Anthropic's structured outputs compile (output_config.format
// and strict tools): the real API answers 400 for a keyword outside that subset ("For 'integer'
// type, property 'minimum' is not supported"), and zod's `.int()` alone emits minimum/maximum.
// The subset is the one @anthropic-ai/sdk's own transformJSONSchema sends: every object closed
// (additionalProperties false), string formats from a fixed list, minItems 0 or 1 only, and any
// other keyword moved into the description as text, so the model still reads the constraint the
// grammar cannot enforce. `$schema` names a dialect and constrains nothing: it is dropped.
// Pure: the caller's schema is not changed.

type Schema = Record<string, unknown>;

const STRING_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);

const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown): boolean => v === null || typeof v !== 'object';

export function toAnthropicSchema(schema: Schema): Schema {
  return narrow(schema) as Schema;
}

function narrow(node: unknown): unknown {
  if (!isRecord(node)) return node; // a boolean schema (`true`) or a malformed member: as sent
  const rest: Schema = { ...node };
  const take = (key: string): unknown => {
    const value = rest[key];
    delete rest[key];
    return value;
  };
  const out: Schema = {};
  delete rest.$schema;
  // Both spellings of local definitions: pydantic and zod write $defs, draft-07 generators `definitions`.
  for (const key of ['$defs', 'definitions']) {
    const defs = take(key);
    if (isRecord(defs)) out[key] = mapValues(defs, narrow);
  }
  // A reference stands for its definition; Anthropic takes no keywords beside it.
  const ref = take('$ref');
  if (ref !== undefined) return { ...out, $ref: ref };

  if (Array.isArray(rest.enum) && rest.enum.length && rest.enum.every(isPrimitive)) out.enum = take('enum');
  if (rest.const !== undefined && isPrimitive(rest.const)) out.const = take('const');
  const literal = 'enum' in out || 'const' in out;
  const type = take('type');
  const anyOf = take('anyOf') ?? take('oneOf');
  const allOf = take('allOf');
  if (Array.isArray(anyOf)) out.anyOf = anyOf.map(narrow);
  else if (Array.isArray(allOf)) out.allOf = allOf.map(narrow);
  else if (!literal && type !== undefined) out.type = type;
  for (const key of ['description', 'title']) if (rest[key] !== undefined) out[key] = take(key);

  // A type list (["string", "null"]) gets each of its members' handling.
  const types = new Set(literal ? [] : Array.isArray(type) ? type : [type]);
  if (types.has('object') || (type === undefined && isRecord(rest.properties))) {
    const properties = take('properties');
    out.properties = isRecord(properties) ? mapValues(properties, narrow) : {};
    // Anthropic takes no other value: a map (`z.record`) cannot be expressed, as in the SDK.
    delete rest.additionalProperties;
    out.additionalProperties = false;
    if (rest.required !== undefined) out.required = take('required');
  }
  if (types.has('string') && typeof rest.format === 'string' && STRING_FORMATS.has(rest.format)) out.format = take('format');
  if (types.has('array')) {
    const items = take('items');
    if (items !== undefined) out.items = Array.isArray(items) ? items.map(narrow) : narrow(items);
    if (rest.minItems === 0 || rest.minItems === 1) out.minItems = take('minItems');
  }

  const left = Object.entries(rest);
  if (left.length) {
    const text = `{${left.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(', ')}}`;
    out.description = typeof out.description === 'string' && out.description ? `${out.description}\n\n${text}` : text;
  }
  return out;
}

const mapValues = (obj: Schema, fn: (v: unknown) => unknown): Schema =>
  Object.fromEntries(Object.entries(obj).map(([key, value]) => [key, fn(value)]));
