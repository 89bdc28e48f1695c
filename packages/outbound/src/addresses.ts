import { BlockList, isIP } from "node:net";

/** Addresses no customer-supplied URL may reach: not routable on the public internet. */
const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ["64:ff9b:1::", 48], // local-use NAT64 (RFC 8215): translates to private IPv4 networks
  ["100::", 64], // discard
  ["2001::", 32], // Teredo: tunnels to an IPv4 address the prefix hides
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds any IPv4 address, private ones included
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed inside some networks)
  ["ff00::", 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, "ipv6");
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const match = /^(?:::ffff:|64:ff9b::)(?:0:)?([0-9a-f.:]+)$/.exec(lower);
  if (!match) return null;
  const tail = match[1]!;
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function classify(ip: string, list: BlockList): boolean {
  const family = isIP(ip);
  if (family === 4) return list.check(ip, "ipv4");
  if (family === 6) {
    const v4 = embeddedIpv4(ip);
    if (v4) return list.check(v4, "ipv4");
    return list.check(ip, "ipv6");
  }
  return true; // not an address at all: never treated as public
}

/** True for loopback, private, link-local, reserved and other non-public addresses (IPv4, IPv6 and IPv4 inside IPv6). */
export function isPrivateAddress(ip: string): boolean {
  return classify(ip, blocked);
}

export function isLoopbackAddress(ip: string): boolean {
  return isIP(ip) !== 0 && classify(ip, loopback);
}
