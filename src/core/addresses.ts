import ipaddr from "ipaddr.js";

/**
 * Which IP addresses the service's own outbound requests (domain verification,
 * manifest fetches, webhook deliveries) may reach: only the public internet.
 * The special-purpose registries come from ipaddr.js (maintained, pinned): an
 * address is public only when it falls in none of its named ranges. IPv4-mapped
 * addresses (`::ffff:10.0.0.1`) are judged by their IPv4 rules; every other form
 * that embeds or translates an IPv4 address (NAT64 `64:ff9b::/96` and
 * `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo, SIIT `::ffff:0:a.b.c.d`) is refused
 * outright, since it may reach any IPv4 address, private ones included.
 */
const publicRange = "unicast";

/**
 * The deprecated IPv4-compatible form (`::a.b.c.d`, RFC 4291 §2.5.5.1) has no name
 * in ipaddr.js, which would call it unicast; it embeds an IPv4 address like the others.
 */
const ipv4Compatible = ipaddr.parseCIDR("::/96");

function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // ipaddr.js also accepts legacy IPv4 spellings (octal, hex, three parts); an address from DNS never has them.
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return ipaddr.IPv4.parse(address);
  if (!ipaddr.IPv6.isValid(address)) return undefined;
  // ipaddr.js reads any dotted tail as IPv4-mapped (`::10.0.0.1` as `::ffff:a00:1`): the
  // WHATWG URL parser writes the address out in hex first, so it is read as what it is.
  let ip: ipaddr.IPv6;
  try {
    ip = ipaddr.IPv6.parse(new URL(`http://[${address}]`).hostname.slice(1, -1));
  } catch {
    return undefined; // a zone id (fe80::1%eth0) or another form URLs do not take
  }
  return ip.isIPv4MappedAddress() ? ip.toIPv4Address() : ip;
}

/** True for addresses outbound requests must never reach; anything that is not an address counts as one. */
export function isNonPublicAddress(address: string): boolean {
  const ip = parsed(address);
  if (!ip) return true;
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).match(ipv4Compatible)) return true;
  return ip.range() !== publicRange;
}

/** True for loopback addresses (127.0.0.0/8, ::1, and their IPv4-mapped forms). */
export function isLoopbackAddress(address: string): boolean {
  return parsed(address)?.range() === "loopback";
}
