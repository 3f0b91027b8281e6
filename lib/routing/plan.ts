// Plan: for each route of the chain, the key mode (own key, else the service's managed key, else
// a 400 for that route before anything is sent), the wire format it will be spoken in, and the
// upstream body in that wire (translated once per wire, lazily).
import type { FormatName, IRRequest } from '../ir.ts';
import type { RouteName } from '../routes.ts';
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
  /** After commit no attempt is built again: drops the caller's parsed body and its translations,
   *  so a stream that lasts minutes does not hold its prompt (a coding agent's is hundreds of KB,
   *  several times that as objects). `checked.body` is empty from then on. */
  releaseBodies(): void;
}

const RELEASED: Record<string, any> = Object.freeze({});

export interface PlanDeps {
  adapters: Record<RouteName, RouteAdapter>;
  codecs: Record<FormatName, FormatCodec>;
  ownKey(route: RouteName): unknown | undefined;
  managedKey(route: RouteName): unknown | undefined;
}

export function planRequest(checked: CheckedRequest, deps: PlanDeps): Plan {
  const routes = checked.routes.map((route): RoutePlan => {
    const own = deps.ownKey(route);
    const managed = own === undefined ? deps.managedKey(route) : undefined;
    if (own === undefined && managed === undefined) {
      const how = `set one with PUT /admin/v1/orgs/{id}/provider-keys/${route}`;
      throw new GatewayError('provider_key_missing', `No key is configured for the route '${route}'; ${how}.`, { param: 'provider' });
    }
    const adapter = deps.adapters[route];
    // The route gets the caller's body as it is when it speaks the caller's format and the format
    // allows it for this request (Chat only with Chat-native parameters); else its first wire.
    const speaksCaller = checked.ownWire && adapter.wires.includes(checked.format);
    const wire = speaksCaller ? checked.format : adapter.wires[0]!;
    return {
      route, mode: own !== undefined ? 'byok' : 'managed', credential: own ?? managed, wire,
      passthrough: wire === checked.format, modelId: checked.model.route_model_ids?.[route] ?? checked.model.id,
    };
  });
  let ir: IRRequest | undefined;
  const bodies = new Map<FormatName, Record<string, any>>();
  return {
    checked,
    routes,
    anyManaged: routes.some((route) => route.mode === 'managed'),
    upstreamBody(rp) {
      let body = bodies.get(rp.wire);
      if (!body) {
        if (rp.passthrough) body = checked.body;
        else {
          ir ??= deps.codecs[checked.format].decodeRequest(checked.body);
          body = deps.codecs[rp.wire].encodeRequest(ir);
        }
        bodies.set(rp.wire, body);
      }
      return body;
    },
    releaseBodies() {
      bodies.clear();
      ir = undefined;
      checked.body = RELEASED;
    },
  };
}

/** The caller's output cap, in the field its format names it (the codec's endpoint knows which). */
export function requestedMaxOutput(checked: Pick<CheckedRequest, 'format' | 'body'>): number | undefined {
  return CALLER_CODECS[checked.format].endpoint.maxOutput(checked.body);
}
