#!/usr/bin/env node
// pnpm cycles: fails when the relative imports of any apps/*/src or packages/*/src form a cycle,
// or when a file inside a service imports one of a layer above its own (see LAYERS below), or
// when a managed-ai domain file imports from outside its domain/ (see PORTS_AND_ADAPTERS).
// Type-only imports count: a cycle of types is still two modules that cannot be read apart.
// Imports between workspace packages are not followed (turbo's ^build already refuses a cycle there).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

if (process.argv.includes("-h") || process.argv.includes("--help")) {
  console.log(`Usage: node scripts/cycles.mjs   (also: pnpm cycles)

Reads every source file under apps/*/src and packages/*/src (TypeScript's own import
scanner: static imports, type-only imports, export ... from, import()), follows the
relative imports and fails, listing each cycle, when any modules import each other in a
cycle. ALLOWED below lists the cycles known and being removed; a listed cycle that is gone
is reported so the entry can be deleted. Also fails on an import that goes up a service's
layers (see LAYERS), and on a managed-ai domain file importing by a relative path anything
outside its domain/ (docs/decisions/0290). Needs the workspace's dependencies installed.`);
  process.exit(0);
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Known cycles, as the set of files in them; each has an issue that removes it. Add none. */
const ALLOWED = [];

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", "generated"]);

function sourceFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP_DIRS.has(name)) sourceFiles(path, out);
    } else if (SOURCE.test(name) && !name.endsWith(".d.ts")) {
      out.push(path);
    }
  }
  return out;
}

const roots = ["apps", "packages"].flatMap((top) =>
  existsSync(join(ROOT, top))
    ? readdirSync(join(ROOT, top))
        .map((name) => join(ROOT, top, name, "src"))
        .filter((src) => existsSync(src))
    : [],
);
const files = roots.flatMap((src) => sourceFiles(src));
const known = new Set(files);

/** `./x.js` written for `./x.ts` (NodeNext), a directory's index, or the file as named. */
function resolveImport(from, specifier) {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|cjs|jsx)$/, "");
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, join(base, "index.ts"), join(base, "index.tsx")];
  return candidates.find((c) => known.has(c));
}

const graph = new Map();
/** Every file's import specifiers as written (the domain rule below reads those that resolve to no source file too, e.g. generated/). */
const specifiers = new Map();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const targets = new Set();
  for (const { fileName } of info.importedFiles) {
    const target = resolveImport(file, fileName);
    if (target) targets.add(target);
  }
  graph.set(file, [...targets]);
  specifiers.set(
    file,
    info.importedFiles.map((i) => i.fileName),
  );
}

// Tarjan's strongly connected components: every cycle lies inside one.
const index = new Map();
const low = new Map();
const onStack = new Set();
const stack = [];
const components = [];
let next = 0;
function connect(v) {
  index.set(v, next);
  low.set(v, next);
  next++;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v)) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v), index.get(w)));
    }
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v).includes(v)) components.push(component);
  }
}
for (const file of files) if (!index.has(file)) connect(file);

/** One cycle through the component's first file, for the message: a → b → … → a. */
function cycleThrough(component) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v)) {
      if (w === start) {
        const path = [];
        for (let x = v; x !== null; x = previous.get(x)) path.unshift(x);
        return [...path, start];
      }
      if (members.has(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

const rel = (file) => relative(ROOT, file);
const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
const found = components.map((c) => c.map(rel).sort());
const failures = components.filter((c) => !ALLOWED.some((allowed) => sameSet(c.map(rel), allowed)));

for (const allowed of ALLOWED) {
  if (found.some((c) => sameSet(c, allowed))) console.log(`allowed (being removed): ${allowed.join(", ")}`);
  else console.log(`an allowed cycle is gone; delete it from ALLOWED in scripts/cycles.mjs: ${allowed.join(", ")}`);
}
if (failures.length > 0) {
  console.error(`${failures.length} import cycle(s):`);
  for (const c of failures) console.error(`  ${cycleThrough(c).map(rel).join(" → ")}${c.length > 2 ? ` (${c.length} files in the cycle's component)` : ""}`);
  process.exit(1);
}
console.log(`no import cycles in ${files.length} files of ${roots.length} source trees`);

/*
 * Upward arrows (issue 39): inside every service (apps/<service>/src, the console aside),
 * each file belongs to a layer, and a file may import its own layer or those below it:
 *   0 wiring     main.ts and the other entry points that put a service together
 *   1 transport  grpc/, http/, routes/, runner/ and the other loops that call the domain
 *   2 domain     domain/ (the verbs and their context)
 *   3 adapters   storage/, providers/, crypto/, tron/, metrics/, callbacks/ (what the domain's ports are made of)
 *   4 base       db.ts (the Prisma client), env.ts, generated/
 * A file that is in none is reported. Tests and test support (testing/) are left out.
 *
 * Ports and adapters (docs/decisions/0290): in the services of PORTS_AND_ADAPTERS the domain
 * declares what it needs (its ports) and the adapters implement them, so the arrow between
 * them points inward: adapters sit above the domain (they may import it, it may not import
 * them), transport → domain ← adapters, wiring composing both:
 *   0 wiring, 1 transport, 2 adapters, 3 domain, 4 base.
 * And there a domain file (tests aside) imports nothing outside its domain/ by a relative
 * path but DOMAIN_EXCEPTIONS (none now); workspace and third-party packages (`@gateway/...`,
 * `zod`) it may. Its rows are its own types (domain/rows.ts), its transaction an opaque `Tx`
 * (domain/ports.ts); storage/ maps the tables onto them (docs/decisions/0290, addendum of issue 39).
 */
const LAYERS = [
  ["main.ts", "app-wiring.ts", "hub.ts", "reencrypt-keys.ts", "sweeper.ts", "app.ts", "wiring.ts", "console-api-types.ts"],
  ["grpc/", "http/", "routes/", "runner/", "socialops/", "account-webhooks/"],
  ["domain/"],
  ["storage/", "providers/", "crypto/", "tron/", "metrics/", "callbacks/", "sql-source/"],
  ["db.ts", "env.ts", "generated/"],
];
/** Where a service's own names mean another layer: the ledger's metrics read its domain (a transport). */
const SERVICE_LAYERS = {
  ledger: { "metrics/": 1 },
  // The edge: routes' context (the services' clients and stores it works with), those clients and its Redis connection.
  edge: { "deps.ts": 2, "clients.ts": 3, "redis.ts": 3 },
};
/** Services laid out as ports and adapters: their adapters (LAYERS[3]) sit above their domain. */
const PORTS_AND_ADAPTERS = new Set(["managed-ai"]);
/**
 * What such a domain may still import from outside domain/ (paths under src/, e.g. "generated/"):
 * nothing. The generated Prisma client was the last exception; since the domain has row types
 * of its own and reaches the tables only through its ports (decision 0290's addendum), an
 * entry here is a step back and needs a decision of its own.
 */
const DOMAIN_EXCEPTIONS = [];
function layerOf(service, file) {
  const path = relative(join(ROOT, "apps", service, "src"), file);
  const top = path.includes("/") ? `${path.split("/")[0]}/` : path;
  const layer = SERVICE_LAYERS[service]?.[top] ?? LAYERS.findIndex((names) => names.includes(top));
  if (!PORTS_AND_ADAPTERS.has(service)) return layer;
  return layer === 2 ? 3 : layer === 3 ? 2 : layer;
}
const upward = [];
/** Imports of a ports-and-adapters domain from outside its domain/. */
const outside = [];
const unplaced = new Set();
for (const file of files) {
  const where = relative(ROOT, file).split("/");
  if (where[0] !== "apps" || where[1] === "console" || where.includes("testing") || /\.test\.tsx?$/.test(file)) continue;
  const from = layerOf(where[1], file);
  if (from < 0) {
    unplaced.add(rel(file));
    continue;
  }
  for (const target of graph.get(file)) {
    const to = layerOf(where[1], target);
    if (to >= 0 && to < from) upward.push(`${rel(file)} → ${rel(target)}`);
  }
  if (PORTS_AND_ADAPTERS.has(where[1]) && where[3] === "domain") {
    const src = join(ROOT, "apps", where[1], "src");
    for (const specifier of specifiers.get(file)) {
      if (!specifier.startsWith(".")) continue;
      const path = relative(src, resolve(dirname(file), specifier));
      if (!path.startsWith("domain/") && !DOMAIN_EXCEPTIONS.some((allowed) => path.startsWith(allowed))) outside.push(`${rel(file)} → ${specifier}`);
    }
  }
}
if (unplaced.size > 0 || upward.length > 0 || outside.length > 0) {
  for (const f of unplaced) console.error(`  in no layer (place it in scripts/cycles.mjs's LAYERS or move it): ${f}`);
  for (const arrow of upward) console.error(`  upward: ${arrow}`);
  for (const arrow of outside) console.error(`  out of its domain (reach it through a port, domain/ports.ts): ${arrow}`);
  console.error(
    `${upward.length} upward import(s), ${outside.length} domain import(s) from outside domain/ and ${unplaced.size} file(s) in no layer inside the services`,
  );
  process.exit(1);
}
console.log(
  `no upward imports inside the services (wiring → transport → domain → adapters → base; in ${[...PORTS_AND_ADAPTERS].join(", ")} ` +
    `transport → domain ← adapters, its domain importing only ${["domain/", ...DOMAIN_EXCEPTIONS].join(", ")})`,
);
