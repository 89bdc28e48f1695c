import { describe, expect, it } from "vitest";
import { parseKeyring } from "@gateway/secrets";
import { TEST_KEYS } from "../testing/context.js";
import { checkCallback, openCallbackSecret, sealCallbackSecret } from "./target.js";

const strict = { allowHttpLoopback: false, baseDelayMs: 1_000, timeoutMs: 1_000 };
const loose = { ...strict, allowHttpLoopback: true };
const SECRET = "0123456789abcdef";

describe("callback fields", () => {
  it("takes HTTPS URLs with a secret of 16 to 256 characters", async () => {
    expect(await checkCallback(strict, "https://hooks.example.com/jobs", SECRET)).toEqual({ url: "https://hooks.example.com/jobs", secret: SECRET });
    expect(await checkCallback(strict, "https://hooks.example.com/jobs", "s".repeat(256))).not.toBeNull();
    expect(await checkCallback(strict, "https://93.184.215.14/jobs", SECRET)).not.toBeNull();
    expect(await checkCallback(strict, "", "")).toBeNull();
  });

  it("refuses what the contract refuses (400)", async () => {
    const refused = async (settings: typeof strict, url: string, secret: string) => {
      try {
        await checkCallback(settings, url, secret);
        return "accepted";
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    expect(await refused(strict, "http://hooks.example.com/jobs", SECRET)).toBe("invalid_request");
    expect(await refused(strict, "http://127.0.0.1:9/jobs", SECRET)).toBe("invalid_request");
    expect(await refused(strict, "ftp://hooks.example.com/", SECRET)).toBe("invalid_request");
    expect(await refused(strict, "https://user:pw@hooks.example.com/", SECRET)).toBe("invalid_request");
    expect(await refused(strict, "nonsense", SECRET)).toBe("invalid_request");
    expect(await refused(strict, "https://hooks.example.com/jobs", "")).toBe("invalid_request");
    expect(await refused(strict, "https://hooks.example.com/jobs", "s".repeat(15))).toBe("invalid_request");
    expect(await refused(strict, "https://hooks.example.com/jobs", "s".repeat(257))).toBe("invalid_request");
    expect(await refused(strict, "", SECRET)).toBe("invalid_request");
    // The test flag opens loopback HTTP only.
    expect(await refused(loose, "http://127.0.0.1:9/jobs", SECRET)).toBe("accepted");
    expect(await refused(loose, "http://localhost:9/jobs", SECRET)).toBe("accepted");
    expect(await refused(loose, "http://10.0.0.1/jobs", SECRET)).toBe("invalid_request");
    expect(await refused(loose, "http://hooks.example.com/jobs", SECRET)).toBe("invalid_request");
  });

  it("refuses HTTPS URLs that reach private, loopback or link-local addresses, by literal or by name", async () => {
    const refused = async (settings: typeof strict, url: string) => {
      try {
        await checkCallback(settings, url, SECRET);
        return "accepted";
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    for (const url of [
      "https://10.0.0.1/jobs",
      "https://192.168.1.1/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[::1]/",
      "https://[fe80::1]/",
      "https://0x7f000001/",
      "https://localhost/jobs",
    ]) {
      expect(await refused(strict, url), url).toBe("invalid_request");
    }
    // The test flag opens loopback, never the private ranges.
    expect(await refused(loose, "https://127.0.0.1/jobs")).toBe("accepted");
    expect(await refused(loose, "https://10.0.0.1/jobs")).toBe("invalid_request");
  });

  it("seals the secret bound to its job", () => {
    const ring = parseKeyring(TEST_KEYS);
    const sealed = sealCallbackSecret(ring, "job_1", SECRET);
    expect(Buffer.from(sealed.ciphertext).includes(Buffer.from(SECRET))).toBe(false);
    expect(openCallbackSecret(ring, "job_1", sealed)).toBe(SECRET);
    expect(() => openCallbackSecret(ring, "job_2", sealed)).toThrow();
  });
});
