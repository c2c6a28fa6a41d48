// A client's network for counting: an IPv4 address is its own network; an
// IPv6 client usually holds a whole /64, so that is what counts as one.
import ipaddr from 'ipaddr.js';

export function networkOf(ip: string | undefined): { ip: string | null; network: string | null } {
  if (!ip) return { ip: null, network: null };
  if (!ipaddr.isValid(ip)) return { ip, network: ip };
  // IPv4-mapped IPv6 (::ffff:1.2.3.4) is the IPv4 client it maps.
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return { ip: address.toString(), network: address.toString() };
  const groups = (address as ipaddr.IPv6).toNormalizedString().split(':').slice(0, 4);
  return { ip: address.toString(), network: `${groups.join(':')}::/64` };
}
