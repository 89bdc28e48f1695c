import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import { connectionConfig } from "./database.js";

/*
 * The Prisma schema engine compiled to WebAssembly, driven through the pg
 * driver adapter: `prisma migrate` without the native engine binary, which
 * cannot be downloaded on these machines (docs/decisions/0003-migrations-without-native-engine.md).
 *
 * Three defects of @prisma/adapter-pg 7.10 are worked around here, for migrations only:
 *  - the engine's schema describer selects columns of PostgreSQL's internal
 *    `"char"` type (OID 18), which the adapter refuses to map; we report them as text;
 *  - its shadow database is created from `connectionString`, which overrides the
 *    shadow's name (so it used the main database), and dropped while its own pool is
 *    still connected; we create, use and drop the shadow database ourselves;
 *  - its `executeScript` splits a migration on every ";", which cuts dollar-quoted
 *    bodies (functions, triggers) apart; we send the script whole, in one simple
 *    query, as the native engine does (PostgreSQL runs it as one implicit transaction).
 */

/** Shadow databases are `gw_shadow_<pid>_<uuid>`. */
export const SHADOW_PREFIX = "gw_shadow_";

const CHAR_OID = 18;
const TEXT_OID = 25;

/** Prisma's driver-adapter column type for a single character (ColumnTypeEnum.Character). */
const CHARACTER_COLUMN = 6;
/** Marks a result's rows with the positions of its `"char"` columns. */
const CHAR_COLUMNS = Symbol("gateway.charColumns");

type QueryResultLike = { fields?: { dataTypeID: number }[]; rows?: unknown[] };
type MarkedRows = unknown[] & { [CHAR_COLUMNS]?: number[] };

/**
 * The adapter cannot map `"char"`: let it see text, and remember which columns
 * they were so `charColumnsAsCharacter` can report them as the single
 * characters the engine reads them as.
 */
function charAsText<T>(result: T): T {
  for (const r of Array.isArray(result) ? result : [result]) {
    const res = r as QueryResultLike | undefined;
    const positions: number[] = [];
    (res?.fields ?? []).forEach((field, i) => {
      if (field.dataTypeID === CHAR_OID) {
        field.dataTypeID = TEXT_OID;
        positions.push(i);
      }
    });
    if (positions.length > 0 && Array.isArray(res?.rows)) Object.defineProperty(res.rows, CHAR_COLUMNS, { value: positions });
  }
  return result;
}

type RawResult = { columnTypes: number[]; rows: MarkedRows };
type RawQueryable = { queryRaw(query: unknown): Promise<RawResult>; startTransaction?(...args: unknown[]): Promise<RawQueryable> };

/** Reports the `"char"` columns that `charAsText` marked as single characters. */
function charColumnsAsCharacter<A>(queryable: A): A {
  const q = queryable as unknown as RawQueryable;
  const queryRaw = q.queryRaw.bind(q);
  q.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const i of result.rows[CHAR_COLUMNS] ?? []) result.columnTypes[i] = CHARACTER_COLUMN;
    return result;
  };
  if (q.startTransaction) {
    const start = q.startTransaction.bind(q);
    q.startTransaction = async (...args) => charColumnsAsCharacter(await start(...args));
  }
  return queryable;
}

class MigrationClient extends pg.Client {
  override query(...args: unknown[]): never {
    const callbackAt = args.findIndex((a) => typeof a === "function");
    if (callbackAt >= 0) {
      const cb = args[callbackAt] as (err: Error | null, res: unknown) => void;
      args[callbackAt] = (err: Error | null, res: unknown) => cb(err, err ? res : charAsText(res));
    }
    const first = args[0] as { callback?: (err: Error | null, res: unknown) => void } | undefined;
    if (first && typeof first === "object" && typeof first.callback === "function") {
      const cb = first.callback;
      first.callback = (err, res) => cb(err, err ? res : charAsText(res));
    }
    const out = (super.query as (...a: unknown[]) => unknown)(...args);
    if (out && typeof (out as Promise<unknown>).then === "function") return (out as Promise<unknown>).then(charAsText) as never;
    return out as never;
  }
}

type Disposable = { dispose(): Promise<void> };

/** The adapter's internals that `wholeScripts` relies on (checked by the db-kit tests). */
type ScriptRunner = {
  client: { query(text: string): Promise<unknown> };
  onError(error: unknown): never;
  executeScript(script: string): Promise<void>;
};

/** Runs each migration script as one statement batch instead of splitting it on ";". */
function wholeScripts<A>(adapter: A): A {
  const runner = adapter as unknown as ScriptRunner;
  runner.executeScript = async (script: string) => {
    try {
      await runner.client.query(script);
    } catch (error) {
      runner.onError(error);
    }
  };
  return adapter;
}

function adapterFactory(url: string) {
  const config = connectionConfig(url);
  const base = new PrismaPg({ ...config, Client: MigrationClient } as pg.PoolConfig);
  const opened: Disposable[] = [];
  const factory = {
    provider: base.provider,
    adapterName: base.adapterName,
    async connect() {
      const adapter = charColumnsAsCharacter(wholeScripts(await base.connect()));
      opened.push(adapter);
      return adapter;
    },
    async connectToShadowDb() {
      // Named after the process, so a leftover can be traced (and tests check their own only).
      const name = `${SHADOW_PREFIX}${process.pid}_${randomUUID().replaceAll("-", "")}`;
      const admin = new pg.Client(config);
      await admin.connect();
      await admin.query(`CREATE DATABASE "${name}"`);
      const pool = new pg.Pool({ ...config, database: name, Client: MigrationClient } as pg.PoolConfig);
      // DROP ... WITH (FORCE) below may end a connection the pool is still closing;
      // that termination is expected and must not surface as an unhandled 'error'.
      pool.on("error", () => undefined);
      const adapter = charColumnsAsCharacter(wholeScripts(await new PrismaPg(pool).connect()));
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await dispose();
        await pool.end();
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.end();
      };
      return adapter;
    },
  };
  return {
    factory,
    async closeAll() {
      await Promise.allSettled(opened.splice(0).map((a) => a.dispose()));
    },
  };
}

type EngineModule = typeof import("@prisma/schema-engine-wasm");
type WasmExports = Record<string, unknown>;
/** The part of the WebAssembly global we use (its types live in lib.dom, not @types/node). */
const wasm = (
  globalThis as unknown as {
    WebAssembly: { instantiate(bytes: Uint8Array, imports: Record<string, unknown>): Promise<{ instance: { exports: WasmExports } }> };
  }
).WebAssembly;
let enginePromise: Promise<EngineModule> | undefined;

/**
 * Instantiates the wasm module once per process. Node 24 can import the package's .wasm
 * directly, but that path is still experimental there and prints an ExperimentalWarning in
 * every process that migrates; instantiating it by hand is stable and silent.
 */
function loadEngineModule(): Promise<EngineModule> {
  enginePromise ??= (async () => {
    const require = createRequire(import.meta.url);
    const bgPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const bg = (await import(bgPath)) as EngineModule & { __wbg_set_wasm(exports: WasmExports): void };
    const bytes = await readFile(join(dirname(bgPath), "schema_engine_bg.wasm"));
    const { instance } = await wasm.instantiate(bytes, { "./schema_engine_bg.js": bg });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as (() => void) | undefined)?.();
    return bg;
  })();
  return enginePromise;
}

export type EngineHandle = {
  engine: SchemaEngine;
  close(): Promise<void>;
};

/** A schema engine bound to `url` with the given Prisma schema files. */
export async function openEngine(url: string, schemaFiles: [path: string, content: string][], log: (line: string) => void = () => {}): Promise<EngineHandle> {
  const mod = await loadEngineModule();
  const { factory, closeAll } = adapterFactory(url);
  const engine = await mod.SchemaEngine.new({ datamodels: schemaFiles }, (line: string) => log(line), bindMigrationAwareSqlAdapterFactory(factory as never));
  return {
    engine,
    async close() {
      engine.free();
      await closeAll();
    },
  };
}
