// Wire-compatibility gate for the gRPC contracts, in the spirit of `buf breaking`.
//   node scripts/compat.mjs check   fails on a breaking change or a stale snapshot
//   node scripts/compat.mjs update  records the current contracts (after a compatible change)
// Breaking: removing a message, enum, service or method; changing a method's types or
// streaming; reusing or retyping a field number; dropping a field or enum value
// without reserving its number.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import protobuf from "protobufjs";
import { protoFiles, root } from "./protos.mjs";

const snapshotPath = join(root, "compat-snapshot.json");

function load() {
  const pbRoot = new protobuf.Root();
  pbRoot.resolvePath = (_origin, target) => join(root, target);
  pbRoot.loadSync(protoFiles(), { keepCase: true });
  pbRoot.resolveAll();
  return pbRoot;
}

function reservedNumbers(reserved) {
  const out = [];
  for (const r of reserved ?? []) if (Array.isArray(r)) out.push(r);
  return out;
}

function describe(pbRoot) {
  const out = {};
  const visit = (ns) => {
    for (const obj of ns.nestedArray) {
      const name = obj.fullName.slice(1);
      if (obj instanceof protobuf.Type) {
        const fields = {};
        for (const f of obj.fieldsArray) {
          fields[f.id] = { name: f.name, type: f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type, repeated: f.repeated, map: f.map ?? false };
        }
        out[name] = { kind: "message", fields, reserved: reservedNumbers(obj.reserved) };
      } else if (obj instanceof protobuf.Enum) {
        out[name] = { kind: "enum", values: { ...obj.values }, reserved: reservedNumbers(obj.reserved) };
      } else if (obj instanceof protobuf.Service) {
        const methods = {};
        for (const m of obj.methodsArray) {
          methods[m.name] = {
            request: m.resolvedRequestType.fullName.slice(1),
            response: m.resolvedResponseType.fullName.slice(1),
            requestStream: Boolean(m.requestStream),
            responseStream: Boolean(m.responseStream),
          };
        }
        out[name] = { kind: "service", methods };
      }
      if (obj.nestedArray) visit(obj);
    }
  };
  visit(pbRoot);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

const isReserved = (ranges, n) => ranges.some(([lo, hi]) => n >= lo && n <= hi);

export function breakingChanges(before, after) {
  const problems = [];
  for (const [name, old] of Object.entries(before)) {
    const cur = after[name];
    if (!cur) {
      problems.push(`${old.kind} ${name} was removed`);
      continue;
    }
    if (cur.kind !== old.kind) {
      problems.push(`${name} changed from ${old.kind} to ${cur.kind}`);
      continue;
    }
    if (old.kind === "message") {
      for (const [num, f] of Object.entries(old.fields)) {
        const nf = cur.fields[num];
        if (!nf) {
          if (!isReserved(cur.reserved, Number(num))) problems.push(`${name}: field ${num} (${f.name}) removed without reserving its number`);
        } else if (nf.type !== f.type || nf.repeated !== f.repeated || nf.map !== f.map) {
          problems.push(`${name}: field ${num} changed type from ${f.type}${f.repeated ? "[]" : ""} to ${nf.type}${nf.repeated ? "[]" : ""}`);
        }
      }
    } else if (old.kind === "enum") {
      for (const [valueName, num] of Object.entries(old.values)) {
        if (!Object.values(cur.values).includes(num) && !isReserved(cur.reserved, num)) {
          problems.push(`${name}: value ${num} (${valueName}) removed without reserving its number`);
        }
      }
    } else if (old.kind === "service") {
      for (const [method, m] of Object.entries(old.methods)) {
        const nm = cur.methods[method];
        if (!nm) problems.push(`${name}.${method} was removed`);
        else if (JSON.stringify(nm) !== JSON.stringify(m)) problems.push(`${name}.${method} changed its signature`);
      }
    }
  }
  return problems;
}

const mode = process.argv[2];
if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: node scripts/compat.mjs check|update   (pnpm --filter @gateway/protos compat:update)

Wire-compatibility gate of the gRPC contracts.
  check    exit 1 on a breaking change or a stale compat-snapshot.json
  update   record the current contracts in compat-snapshot.json (after a compatible change)`);
  process.exit(0);
}
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && (mode === "check" || mode === "update")) {
  const current = describe(load());
  if (mode === "update") {
    writeFileSync(snapshotPath, `${JSON.stringify(current, null, 2)}\n`);
    console.log(`recorded ${Object.keys(current).length} definitions in compat-snapshot.json`);
  } else {
    if (!existsSync(snapshotPath)) {
      console.error("compat-snapshot.json is missing: run `pnpm --filter @gateway/protos compat:update`");
      process.exit(1);
    }
    const before = JSON.parse(readFileSync(snapshotPath, "utf8"));
    const problems = breakingChanges(before, current);
    if (problems.length > 0) {
      console.error(`breaking proto changes:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
      process.exit(1);
    }
    if (JSON.stringify(before) !== JSON.stringify(current)) {
      console.error("protos changed compatibly but compat-snapshot.json is stale: run `pnpm --filter @gateway/protos compat:update`");
      process.exit(1);
    }
    console.log("protos: no breaking changes, snapshot current");
  }
}
