// The body each route adapter builds, recorded: for tests of what reaches a provider where the
// simulator does not enforce the provider's own rules (Anthropic's thinking, signatures, grounding).
import type { TestGateway } from './gateway.ts';
import type { RouteName } from '../../lib/routes.ts';

export interface UpstreamBodies {
  /** Every body built, oldest first. */
  readonly sent: Array<{ route: RouteName; body: any }>;
  /** The newest body built for `route`. */
  last(route: RouteName): any;
}

/** Wraps `routes`' adapters of the gateway so every body they build is recorded. */
export function recordUpstreamBodies(t: TestGateway, routes: readonly RouteName[]): UpstreamBodies {
  const sent: UpstreamBodies['sent'] = [];
  const adapters = t.gw.services.adapters as Record<RouteName, any>;
  for (const route of routes) {
    const real = adapters[route];
    adapters[route] = {
      ...real,
      async build(args: any) {
        const built = await real.build(args);
        sent.push({ route, body: JSON.parse(String(built.body)) });
        return built;
      },
    };
  }
  return { sent, last: (route) => sent.filter((s) => s.route === route).at(-1)?.body };
}
