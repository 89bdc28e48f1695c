import { describe, expect, it } from "vitest";
import { isLoopbackAddress, isPrivateAddress } from "./addresses.js";

describe("isPrivateAddress", () => {
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "not-an-ip",
  ])("refuses %s", (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    ["::/96 (IPv4-compatible)", "::7f00:1"],
    ["::/96 (IPv4-compatible, dotted)", "::10.0.0.1"],
    ["2002::/16 (6to4)", "2002:7f00:1::1"],
    ["2002::/16 (6to4 of a public address)", "2002:808:808::1"],
    ["2001::/32 (Teredo)", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    ["64:ff9b:1::/48 (local-use NAT64)", "64:ff9b:1::a00:1"],
    ["fec0::/10 (site-local)", "fec0::1"],
    ["fec0::/10 (site-local, top)", "feff:ffff::1"],
  ])("refuses the tunnelling and deprecated IPv6 range %s: %s", (_range, ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "11.0.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2001:4860:4860::8888", "2003::1", "64:ff9b::808:808"])(
    "allows %s",
    (ip) => {
      expect(isPrivateAddress(ip)).toBe(false);
    },
  );

  it("tells loopback apart", () => {
    expect(isLoopbackAddress("127.0.0.1")).toBe(true);
    expect(isLoopbackAddress("::1")).toBe(true);
    expect(isLoopbackAddress("::ffff:127.0.0.1")).toBe(true);
    expect(isLoopbackAddress("10.0.0.1")).toBe(false);
    expect(isLoopbackAddress("localhost")).toBe(false);
  });
});
