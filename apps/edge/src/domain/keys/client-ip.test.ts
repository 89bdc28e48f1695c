import { describe, expect, it } from "vitest";
import { ClientIpResolver, ipAllowed, normalizeIp, parseCidrs } from "./client-ip.js";

const req = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, headers });

describe("parseCidrs / ipAllowed", () => {
  it("matches IPv4 and IPv6 addresses and networks", () => {
    const list = parseCidrs(["10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::1"]);
    expect(ipAllowed(list, "10.255.0.1")).toBe(true);
    expect(ipAllowed(list, "11.0.0.1")).toBe(false);
    expect(ipAllowed(list, "192.0.2.7")).toBe(true);
    expect(ipAllowed(list, "192.0.2.8")).toBe(false);
    expect(ipAllowed(list, "2001:db8:ffff::1")).toBe(true);
    expect(ipAllowed(list, "2001:db9::1")).toBe(false);
    expect(ipAllowed(list, "::1")).toBe(true);
    expect(ipAllowed(list, "not an ip")).toBe(false);
  });

  it("rejects what is not an address or network", () => {
    for (const bad of ["300.0.0.1", "10.0.0.0/33", "2001:db8::/129", "10.0.0.0/8/8", "example.com", "10.0.0.0/x", ""]) {
      expect(() => parseCidrs([bad]), bad).toThrow();
    }
  });

  it("treats IPv4-mapped IPv6 as IPv4", () => {
    expect(normalizeIp("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(normalizeIp("fe80::1%eth0")).toBe("fe80::1");
    expect(ipAllowed(parseCidrs(["203.0.113.0/24"]), normalizeIp("::ffff:203.0.113.9"))).toBe(true);
  });
});

describe("ClientIpResolver", () => {
  const resolver = new ClientIpResolver("127.0.0.1/32,::1/128,10.0.0.0/8", "X-Connecting-IP");

  it("believes the header only from a trusted proxy", () => {
    expect(resolver.resolve(req("127.0.0.1", { "x-connecting-ip": "203.0.113.5" }))).toBe("203.0.113.5");
    expect(resolver.resolve(req("::ffff:10.1.2.3", { "x-connecting-ip": "2001:db8::5" }))).toBe("2001:db8::5");
    expect(resolver.resolve(req("198.51.100.9", { "x-connecting-ip": "203.0.113.5" }))).toBe("198.51.100.9");
  });

  it("falls back to the peer when the header is missing or not an address, and never reads forwarding headers", () => {
    expect(resolver.resolve(req("127.0.0.1"))).toBe("127.0.0.1");
    expect(resolver.resolve(req("127.0.0.1", { "x-connecting-ip": "garbage" }))).toBe("127.0.0.1");
    expect(resolver.resolve(req("127.0.0.1", { "x-forwarded-for": "203.0.113.5", "x-real-ip": "203.0.113.6" }))).toBe("127.0.0.1");
  });

  it("reads each request's header on a connection whose peer it has already checked", () => {
    const trustedSocket = { remoteAddress: "::ffff:127.0.0.1" };
    expect(resolver.resolve({ socket: trustedSocket, headers: { "x-connecting-ip": "203.0.113.5" } })).toBe("203.0.113.5");
    expect(resolver.resolve({ socket: trustedSocket, headers: { "x-connecting-ip": "203.0.113.6" } })).toBe("203.0.113.6");
    expect(resolver.resolve({ socket: trustedSocket, headers: {} })).toBe("127.0.0.1");
    const otherSocket = { remoteAddress: "198.51.100.9" };
    expect(resolver.resolve({ socket: otherSocket, headers: { "x-connecting-ip": "203.0.113.5" } })).toBe("198.51.100.9");
    expect(resolver.resolve({ socket: otherSocket, headers: { "x-connecting-ip": "203.0.113.5" } })).toBe("198.51.100.9");
    // A socket without an address (closed) is not remembered as one.
    const closing: { remoteAddress?: string } = {};
    expect(resolver.resolve({ socket: closing, headers: {} })).toBe("");
    closing.remoteAddress = "127.0.0.1";
    expect(resolver.resolve({ socket: closing, headers: { "x-connecting-ip": "203.0.113.7" } })).toBe("203.0.113.7");
  });
});
