import { BlockList, isIP } from "node:net";
import type { KeyRequest } from "./key-request.js";

/** `::ffff:1.2.3.4` → `1.2.3.4`; zone ids dropped. */
export function normalizeIp(ip: string): string {
  const bare = ip.split("%")[0]!.trim();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(bare);
  return mapped ? mapped[1]! : bare;
}

export function ipFamily(ip: string): "ipv4" | "ipv6" | undefined {
  const v = isIP(ip);
  return v === 4 ? "ipv4" : v === 6 ? "ipv6" : undefined;
}

/** Parses IPs and CIDRs (v4 and v6); throws on the first invalid entry. */
export function parseCidrs(entries: string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const [address = "", bits, extra] = raw.trim().split("/");
    const ip = normalizeIp(address);
    const family = ipFamily(ip);
    if (!family || extra !== undefined) throw new Error(`not an IP or CIDR: ${raw}`);
    if (bits === undefined) {
      list.addAddress(ip, family);
      continue;
    }
    const prefix = Number(bits);
    if (!/^\d{1,3}$/.test(bits) || prefix > (family === "ipv4" ? 32 : 128)) throw new Error(`bad prefix length: ${raw}`);
    list.addSubnet(ip, prefix, family);
  }
  return list;
}

export function ipAllowed(list: BlockList, ip: string): boolean {
  const family = ipFamily(ip);
  return family !== undefined && list.check(ip, family);
}

/**
 * The client's address: the trusted proxy's header when the TCP peer is a
 * trusted proxy, otherwise the peer itself. X-Forwarded-For and X-Real-IP are
 * never read (CONTRACT.md section 3).
 */
export class ClientIpResolver {
  private readonly trusted: BlockList;
  private readonly header: string;
  /**
   * A connection's peer, normalized and checked against the trusted proxies once:
   * every request on a keep-alive connection would parse and look up the same
   * address again (a fifth of the key policy's time on the metered route).
   */
  private readonly peers = new WeakMap<object, { address: string; trusted: boolean }>();

  constructor(trustedCidrs: string, header: string) {
    this.trusted = parseCidrs(
      trustedCidrs
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    );
    this.header = header.toLowerCase();
  }

  resolve(req: Pick<KeyRequest, "headers" | "socket">): string {
    const peer = this.peer(req.socket);
    if (!peer.trusted) return peer.address;
    const raw = req.headers[this.header];
    if (raw === undefined) return peer.address;
    const value = normalizeIp((Array.isArray(raw) ? raw[0] : raw) ?? "");
    return ipFamily(value) ? value : peer.address;
  }

  private peer(socket: KeyRequest["socket"]): { address: string; trusted: boolean } {
    const known = this.peers.get(socket);
    if (known) return known;
    const address = normalizeIp(socket.remoteAddress ?? "");
    const peer = { address, trusted: ipAllowed(this.trusted, address) };
    // A socket that has no address (yet, or any more) is not remembered.
    if (address) this.peers.set(socket, peer);
    return peer;
  }
}
