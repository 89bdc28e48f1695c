import { describe, expect, it } from "vitest";
import { checkUrl, egressPolicy } from "./policy.js";

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

  it("decides the scheme rules before asking DNS", async () => {
    const https = { allowPrivate: false, requireHttps: true };
    expect(await checkUrl("http://no-such-host.invalid/", https)).toEqual({ ok: false, reason: "https_required" });
    const loopback = { allowPrivate: false, allowHttpLoopback: true, requireHttps: true };
    expect(await checkUrl("http://no-such-host.invalid/", loopback)).toEqual({ ok: false, reason: "https_required" });
    expect(await checkUrl("https://no-such-host.invalid/", loopback)).toEqual({ ok: false, reason: "dns_failed" });
  });

  it("refuses credentials in the URL when the policy says so", async () => {
    const noCredentials = { allowPrivate: true, refuseCredentials: true };
    expect(await checkUrl("https://user:pw@127.0.0.1/", noCredentials)).toEqual({ ok: false, reason: "credentials_in_url" });
    expect((await checkUrl("https://user:pw@127.0.0.1/", { allowPrivate: true })).ok).toBe(true);
  });
});

describe("egressPolicy", () => {
  it("reads the testing knobs in one place", () => {
    expect(egressPolicy()).toEqual({ allowPrivate: false, allowHttpLoopback: false, requireHttps: false, refuseCredentials: false });
    // ALLOW_PRIVATE_TARGETS opens every address and plain http to it, whatever the use requires.
    expect(egressPolicy({ allowPrivateTargets: true, requireHttps: true })).toEqual({
      allowPrivate: true,
      allowHttpLoopback: true,
      requireHttps: false,
      refuseCredentials: false,
    });
    // CALLBACK_ALLOW_HTTP_LOOPBACK opens loopback only (plain http included).
    expect(egressPolicy({ allowHttpLoopback: true, requireHttps: true, refuseCredentials: true })).toEqual({
      allowPrivate: false,
      allowHttpLoopback: true,
      requireHttps: true,
      refuseCredentials: true,
    });
  });

  it("gives a job callback policy that takes https and, under the loopback knob, http to loopback only", async () => {
    const strict = egressPolicy({ requireHttps: true, refuseCredentials: true });
    const loose = egressPolicy({ requireHttps: true, refuseCredentials: true, allowHttpLoopback: true });
    expect(await checkUrl("http://127.0.0.1:9/cb", strict)).toEqual({ ok: false, reason: "https_required" });
    expect((await checkUrl("http://127.0.0.1:9/cb", loose)).ok).toBe(true);
    expect((await checkUrl("http://localhost:9/cb", loose)).ok).toBe(true);
    expect(await checkUrl("http://10.0.0.1/cb", loose)).toEqual({ ok: false, reason: "private_address" });
    expect(await checkUrl("https://10.0.0.1/cb", loose)).toEqual({ ok: false, reason: "private_address" });
  });
});
