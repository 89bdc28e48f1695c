import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseKeyring } from "@gateway/secrets";
import { contextPerFile } from "../../testing/context-per-file.js";
import { reencryptCallbackSecrets } from "./reencrypt.js";
import { openCallbackSecret, sealCallbackSecret, sealedIn, secretColumns } from "../../callbacks/target.js";

const oldKey = `old:${randomBytes(32).toString("base64")}`;
const newKey = `new:${randomBytes(32).toString("base64")}`;

const t = contextPerFile();

describe("re-sealing callback secrets after a key rotation", () => {
  it("seals every secret again under the current key, once, and reports the ones whose key is gone", async () => {
    const before = parseKeyring(oldKey);
    const lost = parseKeyring(`lost:${randomBytes(32).toString("base64")}`);
    const rows = [
      { jobId: "job_r1", keyring: before, secret: "callback-secret-0000001" },
      { jobId: "job_r2", keyring: before, secret: "callback-secret-0000002" },
      { jobId: "job_r3", keyring: lost, secret: "callback-secret-0000003" },
    ];
    for (const r of rows) {
      const sealed = sealCallbackSecret(r.keyring, r.jobId, r.secret);
      await t.ctx.prisma.jobCallbackTarget.create({
        data: { jobId: r.jobId, url: "https://hooks.example.com/jobs", ...secretColumns(sealed) },
      });
    }
    const rotated = parseKeyring(`${newKey},${oldKey}`);
    expect(await reencryptCallbackSecrets({ ...t.ctx, keyring: rotated })).toEqual({ reencrypted: 2, current: 0, failed: ["job_r3"] });
    expect(await reencryptCallbackSecrets({ ...t.ctx, keyring: rotated })).toEqual({ reencrypted: 0, current: 2, failed: ["job_r3"] });
    const onlyNew = parseKeyring(newKey);
    for (const r of rows.slice(0, 2)) {
      const row = await t.ctx.prisma.jobCallbackTarget.findUniqueOrThrow({ where: { jobId: r.jobId } });
      expect(row.secretKeyId).toBe("new");
      expect(openCallbackSecret(onlyNew, r.jobId, sealedIn(row))).toBe(r.secret);
    }
    expect((await t.ctx.prisma.jobCallbackTarget.findUniqueOrThrow({ where: { jobId: "job_r3" } })).secretKeyId).toBe("lost");
  });
});
