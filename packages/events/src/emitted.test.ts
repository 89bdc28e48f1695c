import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isEventType } from "./catalog.js";

/*
 * Every event kind that leaves any service is in the catalog (issue 39). An event leaves by
 * one of the two relay sources (docs/decisions/0225, 0250): an outbox row, written by `emit`
 * in a transaction, by `emitAlone` (the edge's denials) or by a single statement built with
 * `outboxRow`; or a row of a tailed log, a view whose `type` column is SQL. The compiler
 * checks the TypeScript calls (they take an `EventType`); this test reads the sources as
 * text, so that a kind written in SQL, or smuggled past the types, fails here too.
 */

const APPS = fileURLToPath(new URL("../../../apps/", import.meta.url));

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name === "generated") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

const services = readdirSync(APPS).filter((name) => statSync(join(APPS, name, "prisma", "schema.prisma"), { throwIfNoEntry: false })?.isFile());

type Found = { service: string; file: string; type: string };

const NODE_STREAM_EVENTS = new Set(["error", "data", "end", "close", "finish", "drain", "readable", "pause", "resume", "metadata", "status"]);

/** Kinds written as the first argument of an event-writing call in a service's TypeScript. */
function fromTypeScript(service: string): Found[] {
  const src = join(APPS, service, "src");
  const code = filesUnder(src, (p) => p.endsWith(".ts") && !p.endsWith(".test.ts") && !p.includes("/testing/"));
  const found: Found[] = [];
  for (const file of code) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\b(?:emit|emitAlone|outboxRow|enqueueEvent)\(\s*(?:tx,\s*)?["'`]([^"'`]+)["'`]/g)) {
      // A Node stream's own events (`stream.emit("error", …)`) are not domain events.
      if (NODE_STREAM_EVENTS.has(m[1]!) && text[m.index - 1] === ".") continue;
      found.push({ service, file: relative(APPS, file), type: m[1]! });
    }
  }
  return found;
}

/**
 * Kinds a tailed log's view gives in SQL: `'kind' AS "type"`, or `'prefix.' || CASE … THEN
 * 'name' … ELSE 'name' END AS "type"`. A `type` column of any other shape fails the test, so
 * that a new shape is taught to it rather than passed over.
 */
function fromSql(service: string): { found: Found[]; unread: string[] } {
  const root = join(APPS, service);
  const sql = [join(root, "sql"), join(root, "prisma", "migrations")].flatMap((dir) =>
    statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? filesUnder(dir, (p) => p.endsWith(".sql")) : [],
  );
  const found: Found[] = [];
  const unread: string[] = [];
  for (const file of sql) {
    const text = readFileSync(file, "utf8").replace(/--[^\n]*/g, "");
    const columns = [...text.matchAll(/\bAS\s+"?type"?(?![\w"])/gi)].length;
    let read = 0;
    for (const m of text.matchAll(/'([a-z_]+\.[a-z_]+)'(?:::text)?\s+AS\s+"?type"?(?![\w"])/gi)) {
      found.push({ service, file: relative(APPS, file), type: m[1]! });
      read++;
    }
    for (const m of text.matchAll(/'([a-z_]+\.)'\s*\|\|\s*CASE\b((?:(?!\bEND\b)[\s\S])*)\bEND\s+AS\s+"?type"?(?![\w"])/gi)) {
      for (const name of m[2]!.matchAll(/\b(?:THEN|ELSE)\s+'([a-z_]+)'/gi)) found.push({ service, file: relative(APPS, file), type: `${m[1]}${name[1]}` });
      read++;
    }
    if (read !== columns) unread.push(`${relative(APPS, file)}: ${columns - read} "type" column(s) of a shape this test cannot read`);
  }
  return { found, unread };
}

describe("the events that leave the services", () => {
  const sql = services.map(fromSql);
  const found = [...services.flatMap(fromTypeScript), ...sql.flatMap((s) => s.found)];

  it("are found in every service with an outbox or a tailed log, the edge among them", () => {
    expect(services).toEqual(expect.arrayContaining(["edge", "files", "jobs", "ledger", "managed-ai", "messaging"]));
    for (const service of services)
      expect(
        found.filter((f) => f.service === service),
        service,
      ).not.toHaveLength(0);
    expect(sql.flatMap((s) => s.unread)).toEqual([]);
  });

  it("are all in the catalog", () => {
    expect(found.filter((f) => !isEventType(f.type)).map((f) => `${f.file}: ${f.type}`)).toEqual([]);
  });

  it("include the kinds written in SQL and the edge's denials", () => {
    const types = new Set(found.map((f) => f.type));
    for (const t of [
      "ledger.credited",
      "ledger.released",
      "managed_ai.request_settled",
      "key.policy_denied",
      "key.quota_exceeded",
      "identity.user_registered",
    ]) {
      expect(types.has(t), t).toBe(true);
    }
  });
});
