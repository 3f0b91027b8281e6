// The provider routes a request can be served by (vendor A/B/C, cloud A/B) and the two tiers a
// route may offer. Routes are named after who serves them; each route's wire format and adapter
// live in lib/providers/.
export type RouteName = 'vendor_a' | 'vendor_b' | 'vendor_c' | 'cloud_a' | 'cloud_b';
export const ROUTES: RouteName[] = ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b'];
export type Tier = 'flex' | 'standard';
