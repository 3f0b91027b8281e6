// Structured output: what each wire format calls "answer in JSON (matching this schema)". The
// decoders put it on the prompt; composeAnswer then answers with JSON valid against the schema
// (or `{}`-shaped JSON for a schema-less JSON mode), the way tool arguments already are.
import { isRecord } from './prompt.ts';

/** `schema` undefined = JSON mode without a schema. */
export interface JsonOutput { schema?: unknown }

const withSchema = (schema: unknown): JsonOutput => (isRecord(schema) ? { schema } : {});

/** Responses `text.format`. */
export function responsesJsonOutput(text: unknown): JsonOutput | undefined {
  const f = isRecord(text) ? text.format : undefined;
  if (!isRecord(f)) return undefined;
  if (f.type === 'json_schema') return withSchema(f.schema);
  return f.type === 'json_object' ? {} : undefined;
}

/** Chat `response_format`. */
export function chatJsonOutput(rf: unknown): JsonOutput | undefined {
  if (!isRecord(rf)) return undefined;
  if (rf.type === 'json_schema') return withSchema(isRecord(rf.json_schema) ? rf.json_schema.schema : undefined);
  return rf.type === 'json_object' ? {} : undefined;
}

/** Messages `output_config.format` (and the earlier beta's top-level `output_format`). */
export function messagesJsonOutput(body: Record<string, unknown>): JsonOutput | undefined {
  const f = isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format : body.output_format;
  return isRecord(f) && f.type === 'json_schema' ? withSchema(f.schema) : undefined;
}

/** Interactions `response_format` (one format or a list) or `response_mime_type`. */
export function interactionsJsonOutput(body: Record<string, unknown>): JsonOutput | undefined {
  const formats = Array.isArray(body.response_format) ? body.response_format : [body.response_format];
  for (const f of formats) {
    if (isRecord(f) && f.mime_type === 'application/json') return withSchema(f.schema);
  }
  return body.response_mime_type === 'application/json' ? {} : undefined;
}

/** Vertex `generationConfig.responseJsonSchema` / `responseSchema` / `responseMimeType`. */
export function vertexJsonOutput(gen: Record<string, unknown>): JsonOutput | undefined {
  if (isRecord(gen.responseJsonSchema)) return { schema: gen.responseJsonSchema };
  if (isRecord(gen.responseSchema)) return { schema: gen.responseSchema };
  return gen.responseMimeType === 'application/json' ? {} : undefined;
}
