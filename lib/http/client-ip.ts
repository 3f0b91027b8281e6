// Which address a request comes from, for the per-address limits (client IP rate, failed
// authentications, failed admin tokens). By default the connection's peer. With `trust_proxy`
// (addresses or CIDRs, as in express/fastify's proxy-addr) the gateway walks X-Forwarded-For from
// the right, past every trusted proxy, and takes the first address it does not trust: a client
// cannot forge its way past a proxy that appends the real peer, and without trusted proxies the
// header is ignored (so behind an untrusted balancer every caller counts as the balancer).
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

const normalize = (a: string): string => MAPPED_V4.exec(a)?.[1] ?? a;

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
