import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidEventError } from "@gateway/events";
import { createPool, dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { runWithContext } from "@gateway/logger";
import { loneEvents } from "./lone-events.js";

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const name = `edge_lone_events_${randomBytes(4).toString("hex")}`;
const prismaDir = fileURLToPath(new URL("../../prisma", import.meta.url));
let db: { pool: ReturnType<typeof createPool> };
beforeAll(async () => {
  const url = await prepareDatabase({ serverUrl, name, schemaPath: `${prismaDir}/schema.prisma`, migrationsDir: `${prismaDir}/migrations`, migrate: true });
  db = { pool: createPool(url, { poolSize: 4 }) };
});
afterAll(async () => {
  await db?.pool.end();
  await dropDatabase(serverUrl, name);
});

describe("loneEvents", () => {
  it("writes events that arrive together to the outbox in one statement, each with its request id, and wakes the relay", async () => {
    let kicks = 0;
    const statements: string[] = [];
    const pool = {
      query: (text: string, values: unknown[]) => {
        statements.push(text);
        return db.pool.query(text, values);
      },
    };
    const emit = loneEvents({ pool, relay: { kick: () => kicks++ } });
    const data = (i: number) => ({
      key_id: `key_${i}`,
      tenant_id: "ten_1",
      reason: "rate_limit" as const,
      method: "GET",
      path: "/v1/key",
      client_ip: "127.0.0.1",
    });
    const ids = await Promise.all([0, 1, 2, 3].map((i) => runWithContext({ requestId: `req_${i}` }, () => emit("key.policy_denied", data(i)))));
    const rows = await db.pool.query<{ id: string; type: string; payload: { key_id: string }; request_id: string }>(
      "SELECT id, type, payload, request_id FROM outbox_events ORDER BY seq",
    );
    expect(rows.rows.map((r) => [r.id, r.type, r.payload.key_id, r.request_id])).toEqual(
      [0, 1, 2, 3].map((i) => [ids[i], "key.policy_denied", `key_${i}`, `req_${i}`]),
    );
    // The first went alone; the three that waited for it, together.
    expect(statements).toHaveLength(2);
    expect(kicks).toBe(2);
  });

  it("refuses a payload the catalog refuses, writing nothing", async () => {
    const emit = loneEvents({ pool: db.pool, relay: { kick: () => undefined } });
    await expect(emit("key.policy_denied", { key_id: "key_1" } as never)).rejects.toThrow(InvalidEventError);
  });
});
