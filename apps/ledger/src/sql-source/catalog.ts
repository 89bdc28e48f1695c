import type pg from "pg";

/** One function, view or trigger of the ledger's schema as PostgreSQL stores it. */
export type CatalogObject = {
  kind: "function" | "view" | "trigger";
  /** The statement that removes it (for objects no file in sql/ defines any more). */
  drop: string;
  /** PostgreSQL's own rendering: pg_get_functiondef (arguments, result, language, SET options, body), pg_get_viewdef, pg_get_triggerdef. */
  definition: string;
};

/** By key: `function ledger_apply(text[], …)`, `view holds`, `trigger transfers_settlement_valid on transfers`. */
export type Catalog = Record<string, CatalogObject>;

export type Queryable = Pick<pg.ClientBase, "query">;

// Every function, view and trigger of the schema "public" (the ledger's database holds no others).
const CATALOG_SQL = `
SELECT 'function' AS kind, 'function ' || p.oid::regprocedure::text AS key,
       'DROP FUNCTION ' || p.oid::regprocedure::text || ';' AS drop, pg_get_functiondef(p.oid) AS definition
FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
UNION ALL
SELECT 'view', 'view ' || c.relname, 'DROP VIEW ' || quote_ident(c.relname) || ';', pg_get_viewdef(c.oid, true)
FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'trigger', 'trigger ' || t.tgname || ' on ' || c.relname,
       'DROP TRIGGER ' || quote_ident(t.tgname) || ' ON ' || quote_ident(c.relname) || ';', pg_get_triggerdef(t.oid, true)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal
ORDER BY 2`;

export async function readCatalog(db: Queryable): Promise<Catalog> {
  const { rows } = await db.query<CatalogObject & { key: string }>(CATALOG_SQL);
  return Object.fromEntries(rows.map(({ key, ...object }) => [key, object]));
}

/** Keys whose definitions differ between two catalogs, or that only one of them has. */
export function catalogDifferences(a: Catalog, b: Catalog): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((key) => a[key]?.definition !== b[key]?.definition);
}

/** Drops every function, view and trigger of the catalog: triggers first, then views, then functions (no CASCADE). */
export async function dropAll(db: Queryable, catalog: Catalog): Promise<void> {
  for (const kind of ["trigger", "view", "function"] as const) {
    for (const object of Object.values(catalog)) if (object.kind === kind) await db.query(object.drop);
  }
}
