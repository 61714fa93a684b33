import { BlockList, isIP } from "node:net";

/**
 * Which IP addresses the service's own outbound requests (domain verification,
 * webhook deliveries) may reach: only the public internet. Judged with Node's
 * BlockList, which also judges an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`)
 * by its IPv4 rules.
 */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this" network, unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 3], // multicast, reserved, broadcast
] as const) {
  nonPublic.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback, and the deprecated IPv4-compatible form (::10.0.0.1)
  ["64:ff9b::", 96], // NAT64, which can reach any IPv4 address
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["fc00::", 7], // unique local, cloud metadata (fd00:ec2::254)
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const) {
  nonPublic.addSubnet(network, prefix, "ipv6");
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** True for addresses outbound requests must never reach; anything that is not an address counts as one. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return nonPublic.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** True for loopback addresses (127.0.0.0/8, ::1, and their IPv4-mapped forms). */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && loopback.check(address, family === 4 ? "ipv4" : "ipv6");
}
