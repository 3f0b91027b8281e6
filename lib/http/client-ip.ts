// Which address a request comes from, for the per-address limits (client IP rate, failed
// authentications, failed admin tokens). By default the connection's peer. With `trust_proxy`
// (addresses or CIDRs, as in express/fastify's proxy-addr) the gateway walks X-Forwarded-For from
// the right, past every trusted proxy, and takes the first address it does not trust: a client
// cannot forge its way past a proxy that appends the real peer, and without trusted proxies the
// header is ignored (so behind an untrusted balancer every caller counts as the balancer). An
// IPv6 caller is counted by its /64.
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

const normalize = (a: string): string => MAPPED_V4.exec(a)?.[1] ?? a;

/** The /64 an IPv6 address belongs to, as `2001:db8:0:7::/64`: the smallest block a subscriber is
 *  given, so one caller, who holds every address in it (counted per address, a lockout would be
 *  2⁶⁴ lockouts). Expects an address isIP() accepted (a zone id is dropped). */
export function subnet64(address: string): string {
  const addr = address.split('%', 1)[0]!.toLowerCase();
  const groups = (part: string): string[] => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const gap = addr.indexOf('::');
  let all: string[];
  if (gap === -1) all = groups(addr);
  else {
    const left = groups(addr.slice(0, gap));
    const right = groups(addr.slice(gap + 2));
    all = [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  }
  return `${all.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** What the per-address limits count: an IPv4 address, an IPv6 address's /64, anything else
 *  (a malformed forwarded hop) as it is. */
const limitKey = (a: string): string => (isIP(a) === 6 ? subnet64(a) : a);

/** Throws on an entry that is neither an address nor a CIDR (checked at start). */
export function trustList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const [addr, bits, extra] = raw.trim().split('/');
    const family = isIP(addr ?? '');
    const prefix = bits === undefined ? undefined : Number(bits);
    const prefixFits = prefix === undefined || (Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128));
    if (!family || extra !== undefined || !prefixFits) {
      throw new Error(`trust_proxy: "${raw}" is not an IP address or CIDR`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(addr!, type); else list.addSubnet(addr!, prefix, type);
  }
  return list;
}

export function clientIpResolver(entries: string[]): (req: IncomingMessage) => string {
  const resolve = addressResolver(entries);
  return (req) => limitKey(resolve(req));
}

function addressResolver(entries: string[]): (req: IncomingMessage) => string {
  if (entries.length === 0) return (req) => normalize(req.socket.remoteAddress ?? 'unknown');
  const list = trustList(entries);
  const trusted = (a: string): boolean => {
    const family = isIP(a);
    return family !== 0 && list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  };
  return (req) => {
    let addr = normalize(req.socket.remoteAddress ?? 'unknown');
    if (!trusted(addr)) return addr;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalize(hops[i]!.trim());
      if (!hop) continue;
      if (!isIP(hop)) return hop.slice(0, 64);   // a malformed hop is where trust ends
      addr = hop;
      if (!trusted(hop)) return hop;
    }
    return addr;
  };
}
