// A client's network for counting: an IPv4 address is its own network; an
// IPv6 client usually holds a whole /64, so that is what counts as one.
import ipaddr from 'ipaddr.js';

/** What a missing or unreadable address counts as: one shared key, so it gets no free pass. */
export const unknownNetwork = 'unknown';

export function networkOf(raw: string | undefined): { ip: string; network: string } {
  // Proxies may forward "1.2.3.4:5678" or "[2001:db8::1]:443".
  const ip = raw
    ?.trim()
    .replace(/^\[([^\]]+)\](?::\d+)?$/, '$1')
    .replace(/^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/, '$1');
  if (!ip || !ipaddr.isValid(ip)) return { ip: unknownNetwork, network: unknownNetwork };
  // IPv4-mapped IPv6 (::ffff:1.2.3.4) is the IPv4 client it maps.
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return { ip: address.toString(), network: address.toString() };
  const prefix = ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`);
  return { ip: address.toString(), network: `${prefix.toString()}/64` };
}
