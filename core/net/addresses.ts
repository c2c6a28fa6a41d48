// Which IP addresses a user-given URL may reach: the public internet only.
// Everything that leads back into our own host or network, or into address
// space that is not routed on the internet, is refused. The list is explicit
// rather than a library's notion of "private", so that a reader can check it
// range by range.
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4'); // IPv4 loopback, the whole /8 (not only 127.0.0.1)
loopback.addAddress('::1', 'ipv6'); // IPv6 loopback

const refused = new BlockList();
// IPv4
refused.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network": connecting to 0.0.0.0 reaches the local host
refused.addSubnet('10.0.0.0', 8, 'ipv4'); // private (RFC 1918)
refused.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT, shared with the provider (RFC 6598)
refused.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, where cloud metadata services live
refused.addSubnet('172.16.0.0', 12, 'ipv4'); // private (RFC 1918)
refused.addSubnet('192.0.0.0', 24, 'ipv4'); // IETF protocol assignments (RFC 6890)
refused.addSubnet('192.0.2.0', 24, 'ipv4'); // documentation, TEST-NET-1
refused.addSubnet('192.168.0.0', 16, 'ipv4'); // private (RFC 1918)
refused.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking (RFC 2544)
refused.addSubnet('198.51.100.0', 24, 'ipv4'); // documentation, TEST-NET-2
refused.addSubnet('203.0.113.0', 24, 'ipv4'); // documentation, TEST-NET-3
refused.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
refused.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, and the broadcast 255.255.255.255 at its end
// IPv6 (IPv4-mapped and NAT64 addresses never get here: their IPv4 is checked instead)
refused.addSubnet('::', 96, 'ipv6'); // unspecified (::) and the deprecated IPv4-compatible ::a.b.c.d
refused.addSubnet('64:ff9b:1::', 48, 'ipv6'); // local-use NAT64 (RFC 8215): translates into a site's own network
refused.addSubnet('100::', 64, 'ipv6'); // discard-only (RFC 6666)
refused.addSubnet('2001:db8::', 32, 'ipv6'); // documentation
refused.addSubnet('fc00::', 7, 'ipv6'); // unique-local, the IPv6 private ranges
refused.addSubnet('fe80::', 10, 'ipv6'); // link-local
refused.addSubnet('fec0::', 10, 'ipv6'); // site-local, deprecated but still routed inside some networks
refused.addSubnet('ff00::', 8, 'ipv6'); // multicast

// IPv6 forms that carry an IPv4 address and reach it: the IPv4 is what gets connected to.
const nat64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96'); // well-known NAT64 prefix (RFC 6052)

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) address reaches, if it is one. */
function embeddedIPv4(address: string): string | null {
  if (!isIPv6(address)) return null;
  const parsed = ipaddr.IPv6.parse(address);
  if (!parsed.isIPv4MappedAddress() && !parsed.match(nat64)) return null;
  return parsed.toByteArray().slice(12).join('.');
}

/**
 * Whether a connection to `address` (an IP address as text, as dns.lookup or
 * a URL's host gives it) stays on the public internet. Anything that is not an
 * IP address is refused. `allowLoopback` lets tests and benches reach servers
 * on 127.0.0.1; it allows loopback and nothing else.
 */
export function isAllowedAddress(address: string, options: { allowLoopback?: boolean } = {}): boolean {
  // A zone ("fe80::1%eth0") is not part of the address, and BlockList would not match it.
  const bare = address.replace(/%.*$/, '');
  const ip = embeddedIPv4(bare) ?? bare;
  const family = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : null;
  if (!family) return false;
  if (loopback.check(ip, family)) return options.allowLoopback === true;
  return !refused.check(ip, family);
}
