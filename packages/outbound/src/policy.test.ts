import { describe, expect, it } from "vitest";
import { checkUrl } from "./policy.js";

const strict = { allowPrivate: false };

describe("checkUrl", () => {
  it("refuses what is not an http(s) URL", async () => {
    expect(await checkUrl("not a url", strict)).toEqual({ ok: false, reason: "invalid_url" });
    expect(await checkUrl("ftp://example.com/x", strict)).toEqual({ ok: false, reason: "unsupported_scheme" });
    expect(await checkUrl("file:///etc/passwd", strict)).toEqual({ ok: false, reason: "unsupported_scheme" });
  });

  it("refuses private, loopback and link-local literals, in every spelling", async () => {
    for (const url of [
      "http://127.0.0.1/",
      "https://10.0.0.5/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]:8443/",
      "https://[::ffff:127.0.0.1]/",
      "https://0x7f000001/",
      "https://2130706433/",
      "https://017700000001/",
      "https://0/",
    ]) {
      expect(await checkUrl(url, strict), url).toEqual({ ok: false, reason: "private_address" });
    }
  });

  it("refuses a DNS name that resolves to loopback", async () => {
    expect(await checkUrl("https://localhost:9/x", strict)).toEqual({ ok: false, reason: "private_address" });
  });

  it("answers dns_failed for names that do not resolve", async () => {
    expect(await checkUrl("https://no-such-host.invalid/", strict)).toEqual({ ok: false, reason: "dns_failed" });
  });

  it("allows everything with allowPrivate, and only loopback with allowHttpLoopback", async () => {
    expect((await checkUrl("http://10.0.0.5/", { allowPrivate: true })).ok).toBe(true);
    const loopback = { allowPrivate: false, allowHttpLoopback: true, requireHttps: true };
    expect((await checkUrl("http://127.0.0.1:9/cb", loopback)).ok).toBe(true);
    expect(await checkUrl("http://10.0.0.5/cb", loopback)).toEqual({ ok: false, reason: "private_address" });
  });

  it("requires https when asked, except loopback under the test flag", async () => {
    expect(await checkUrl("http://127.0.0.1/cb", { allowPrivate: true, requireHttps: true })).toEqual({ ok: false, reason: "https_required" });
    expect((await checkUrl("https://127.0.0.1/cb", { allowPrivate: true, requireHttps: true })).ok).toBe(true);
  });
});
