// GET /v1/models: the catalog in the OpenAI list shape, serialised once at start with
// fast-json-stringify. `flex_capable` is the catalog-level flag naming models that race flex.
import fastJson from 'fast-json-stringify';
import type { Catalog } from '../catalog/catalog.ts';

const serialize = fastJson({
  type: 'object',
  properties: {
    object: { type: 'string' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' }, object: { type: 'string' }, created: { type: 'integer' }, owned_by: { type: 'string' },
          family: { type: 'string' }, routes: { type: 'array', items: { type: 'string' } }, flex_capable: { type: 'boolean' },
        },
      },
    },
  },
});

export function catalogBody(catalog: Catalog): string {
  return serialize({
    object: 'list',
    data: catalog.models.map((model) => ({
      id: model.id, object: 'model', created: 0, owned_by: model.family,
      family: model.family, routes: model.routes, flex_capable: model.flex,
    })),
  });
}
