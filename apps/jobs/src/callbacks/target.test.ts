import { describe, expect, it } from "vitest";
import { parseKeyring } from "@gateway/secrets";
import { TEST_KEYS } from "../testing/context.js";
import { checkCallback, openCallbackSecret, sealCallbackSecret } from "./target.js";

const strict = { allowHttpLoopback: false, baseDelayMs: 1_000, timeoutMs: 1_000 };
const loose = { ...strict, allowHttpLoopback: true };
const SECRET = "0123456789abcdef";

describe("callback fields", () => {
  it("takes HTTPS URLs with a secret of 16 to 256 characters", () => {
    expect(checkCallback(strict, "https://hooks.example.com/jobs", SECRET)).toEqual({ url: "https://hooks.example.com/jobs", secret: SECRET });
    expect(checkCallback(strict, "https://hooks.example.com/jobs", "s".repeat(256))).not.toBeNull();
    expect(checkCallback(strict, "", "")).toBeNull();
  });

  it("refuses what the contract refuses (400)", () => {
    const refused = (settings: typeof strict, url: string, secret: string) => {
      try {
        checkCallback(settings, url, secret);
        return "accepted";
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    expect(refused(strict, "http://hooks.example.com/jobs", SECRET)).toBe("invalid_request");
    expect(refused(strict, "http://127.0.0.1:9/jobs", SECRET)).toBe("invalid_request");
    expect(refused(strict, "ftp://hooks.example.com/", SECRET)).toBe("invalid_request");
    expect(refused(strict, "https://user:pw@hooks.example.com/", SECRET)).toBe("invalid_request");
    expect(refused(strict, "nonsense", SECRET)).toBe("invalid_request");
    expect(refused(strict, "https://hooks.example.com/jobs", "")).toBe("invalid_request");
    expect(refused(strict, "https://hooks.example.com/jobs", "s".repeat(15))).toBe("invalid_request");
    expect(refused(strict, "https://hooks.example.com/jobs", "s".repeat(257))).toBe("invalid_request");
    expect(refused(strict, "", SECRET)).toBe("invalid_request");
    // The test flag opens loopback HTTP only.
    expect(refused(loose, "http://127.0.0.1:9/jobs", SECRET)).toBe("accepted");
    expect(refused(loose, "http://localhost:9/jobs", SECRET)).toBe("accepted");
    expect(refused(loose, "http://10.0.0.1/jobs", SECRET)).toBe("invalid_request");
    expect(refused(loose, "http://hooks.example.com/jobs", SECRET)).toBe("invalid_request");
  });

  it("seals the secret bound to its job", () => {
    const ring = parseKeyring(TEST_KEYS);
    const sealed = sealCallbackSecret(ring, "job_1", SECRET);
    expect(Buffer.from(sealed.ciphertext).includes(Buffer.from(SECRET))).toBe(false);
    expect(openCallbackSecret(ring, "job_1", sealed)).toBe(SECRET);
    expect(() => openCallbackSecret(ring, "job_2", sealed)).toThrow();
  });
});
