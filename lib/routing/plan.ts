// Plan: for each route of the chain, the key mode (own key, else the service's managed key, else
// a 400 for that route before anything is sent), the wire format it will be spoken in, and the
// upstream body in that wire (translated once per wire, lazily).
import type { FormatName, IRRequest, RouteName } from '../ir.ts';
import { GatewayError } from '../errors.ts';
import type { RouteAdapter } from '../providers/types.ts';
import type { FormatCodec } from '../formats/types.ts';
import { CALLER_CODECS } from '../formats/index.ts';
import type { CheckedRequest } from './validate.ts';

export type KeyMode = 'byok' | 'managed';

export interface RoutePlan {
  route: RouteName;
  mode: KeyMode;
  credential: unknown;
  wire: FormatName;
  passthrough: boolean;          // wire = caller format: the caller's body goes as it is
  modelId: string;               // the id this route expects
}

export interface Plan {
  checked: CheckedRequest;
  routes: RoutePlan[];
  anyManaged: boolean;
  upstreamBody(rp: RoutePlan): Record<string, any>;
}

export interface PlanDeps {
  adapters: Record<RouteName, RouteAdapter>;
  codecs: Record<FormatName, FormatCodec>;
  ownKey(route: RouteName): unknown | undefined;
  managedKey(route: RouteName): unknown | undefined;
}

export function planRequest(c: CheckedRequest, deps: PlanDeps): Plan {
  const routes = c.routes.map((route): RoutePlan => {
    const own = deps.ownKey(route);
    const managed = own === undefined ? deps.managedKey(route) : undefined;
    if (own === undefined && managed === undefined) {
      throw new GatewayError('provider_key_missing', `No key is configured for the route '${route}'; set one with PUT /admin/v1/orgs/{id}/provider-keys/${route}.`, { param: 'provider' });
    }
    const adapter = deps.adapters[route];
    // The route gets the caller's body as it is when it speaks the caller's format and the format
    // allows it for this request (Chat only with Chat-native parameters); else its first wire.
    const speaksCaller = c.ownWire && adapter.wires.includes(c.format);
    const wire = speaksCaller ? c.format : adapter.wires[0]!;
    return {
      route, mode: own !== undefined ? 'byok' : 'managed', credential: own ?? managed, wire,
      passthrough: wire === c.format, modelId: c.model.route_model_ids?.[route] ?? c.model.id,
    };
  });
  let ir: IRRequest | undefined;
  const bodies = new Map<FormatName, Record<string, any>>();
  return {
    checked: c,
    routes,
    anyManaged: routes.some((r) => r.mode === 'managed'),
    upstreamBody(rp) {
      let b = bodies.get(rp.wire);
      if (!b) {
        if (rp.passthrough) b = c.body;
        else {
          ir ??= deps.codecs[c.format].decodeRequest(c.body);
          b = deps.codecs[rp.wire].encodeRequest(ir);
        }
        bodies.set(rp.wire, b);
      }
      return b;
    },
  };
}

/** The caller's output cap, in the field its format names it (the codec's endpoint knows which). */
export function requestedMaxOutput(c: Pick<CheckedRequest, 'format' | 'body'>): number | undefined {
  return CALLER_CODECS[c.format].endpoint.maxOutput(c.body);
}
