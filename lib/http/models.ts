// GET /v1/models and GET /v1/models/{id}: the catalog, serialised once at start with
// fast-json-stringify. `flex_capable` is the catalog-level flag naming models that race flex.
//
// One body serves the three official SDKs, whatever headers arrive (a proxy or curl sends none of
// theirs), since each reads only its own fields and ignores the rest:
// - OpenAI reads `data` (entries `id`, `object`, `created`, `owned_by`; `family`, `routes` and
//   `flex_capable` are the gateway's);
// - Anthropic reads `data`, `has_more`, `first_id`, `last_id` (entries `type`, `display_name`,
//   `created_at` besides `id`);
// - @google/genai reads `models` and `nextPageToken` (entries `name` "models/<id>", `displayName`),
//   so `models` repeats `data`.
// The whole catalog is one page (tens of entries): has_more false and no nextPageToken end every
// SDK's auto-pagination, so the paging parameters (limit, after_id, before_id, pageSize, pageToken)
// are not read. The entry of GET /v1/models/{id} is the list's entry, for all three alike.
import type { IncomingMessage } from 'node:http';
import fastJson from 'fast-json-stringify';
import { GatewayError } from '../errors.ts';
import type { FormatName } from '../ir.ts';
import type { Catalog } from '../catalog/catalog.ts';

const entrySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' }, object: { type: 'string' }, created: { type: 'integer' }, owned_by: { type: 'string' },
    family: { type: 'string' }, routes: { type: 'array', items: { type: 'string' } }, flex_capable: { type: 'boolean' },
    type: { type: 'string' }, display_name: { type: 'string' }, created_at: { type: 'string' },
    name: { type: 'string' }, displayName: { type: 'string' },
  },
} as const;

const serializeEntry = fastJson(entrySchema);
const serializeList = fastJson({
  type: 'object',
  properties: {
    object: { type: 'string' },
    data: { type: 'array', items: entrySchema },
    has_more: { type: 'boolean' },
    first_id: { type: 'string', nullable: true },
    last_id: { type: 'string', nullable: true },
    models: { type: 'array', items: entrySchema },
  },
});

const PATH = '/v1/models';
const ENTRY_PREFIX = `${PATH}/`;

/** The catalog's answers, built once: the list and each model's entry by id. */
export interface CatalogBodies { list: string; byId: Map<string, string> }

export function catalogBodies(catalog: Catalog): CatalogBodies {
  // The catalog has no dates: `created` 0 and `created_at` name the same instant.
  const entries = catalog.models.map((model) => ({
    id: model.id, object: 'model', created: 0, owned_by: model.family,
    family: model.family, routes: model.routes, flex_capable: model.flex,
    type: 'model', display_name: model.id, created_at: '1970-01-01T00:00:00Z',
    name: `models/${model.id}`, displayName: model.id,
  }));
  return {
    list: serializeList({
      object: 'list', data: entries, has_more: false,
      first_id: entries[0]?.id ?? null, last_id: entries.at(-1)?.id ?? null, models: entries,
    }),
    byId: new Map(entries.map((entry) => [entry.id, serializeEntry(entry)])),
  };
}

/** Is this path the catalog's (the list or one entry)? */
export const isCatalogPath = (path: string): boolean => path === PATH || path.startsWith(ENTRY_PREFIX);

/** The body a catalog path answers with; an id not in the catalog is model_not_found. The id is
 *  percent-decoded: the OpenAI and Anthropic SDKs encode it into the path (genai sends the id of
 *  a `models/<id>` name at the same place). */
export function catalogAnswer(bodies: CatalogBodies, path: string): string {
  if (path === PATH) return bodies.list;
  let id: string;
  try { id = decodeURIComponent(path.slice(ENTRY_PREFIX.length)); } catch { id = ''; }
  const body = bodies.byId.get(id);
  if (body === undefined) throw new GatewayError('model_not_found');
  return body;
}

/** The error envelope of a catalog refusal (401, 404, 429): the envelope of the SDK that asked,
 *  known by the header each always sends (Anthropic's `anthropic-version`, genai's
 *  `x-goog-api-client`), so its error object reads as from its own API (the Anthropic SDK's
 *  requestID among it); any other caller gets the gateway's plain envelope. The status alone
 *  picks each SDK's error class, so a caller without the header loses only the envelope. */
export function catalogEnvelope(req: IncomingMessage): FormatName | 'plain' {
  if (req.headers['anthropic-version'] !== undefined) return 'messages';
  if (req.headers['x-goog-api-client'] !== undefined) return 'interactions';
  return 'plain';
}
