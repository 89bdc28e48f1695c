// Generates TypeScript types for every .proto with the same options the runtime
// loader uses (loader-options.json), so the types describe what the code receives.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { protoFiles, root } from "./protos.mjs";

const require = createRequire(import.meta.url);
const options = JSON.parse(readFileSync(join(root, "loader-options.json"), "utf8"));
const bin = join(require.resolve("@grpc/proto-loader/package.json"), "..", "build", "bin", "proto-loader-gen-types.js");
const outDir = join(root, "src", "generated");

const flags = ["--grpcLib=@grpc/grpc-js", `--outDir=${outDir}`, "--importFileExtension=.js", `-I=${root}`, "--includeComments"];
if (options.keepCase) flags.push("--keepCase");
if (options.longs) flags.push(`--longs=${options.longs}`);
if (options.enums) flags.push(`--enums=${options.enums}`);
if (options.defaults) flags.push("--defaults");
if (options.oneofs) flags.push("--oneofs");

rmSync(outDir, { recursive: true, force: true });
execFileSync(process.execPath, [bin, ...flags, ...protoFiles()], { cwd: root, stdio: "inherit" });

// A barrel per proto package, so callers write `import type { ledger } from "@gateway/protos"`.
// The generator writes each .proto's absolute path into a header comment; it is
// made relative so the output is the same in every checkout and worktree.
import { readdirSync, statSync, writeFileSync } from "node:fs";
const rootPrefix = root.endsWith("/") ? root : `${root}/`;
function barrels(dir) {
  const entries = readdirSync(dir);
  const files = entries.filter((n) => n.endsWith(".ts") && n !== "index.ts" && statSync(join(dir, n)).isFile());
  if (dir !== outDir && files.length > 0) {
    const lines = files.sort().map((f) => `export type * from "./${f.replace(/\.ts$/, ".js")}";`);
    writeFileSync(join(dir, "index.ts"), `${lines.join("\n")}\n`);
  }
  for (const f of files) {
    const path = join(dir, f);
    const text = readFileSync(path, "utf8");
    const relative = text.replaceAll(`// Original file: ${rootPrefix}`, "// Original file: ");
    if (relative !== text) writeFileSync(path, relative);
  }
  for (const n of entries) if (statSync(join(dir, n)).isDirectory()) barrels(join(dir, n));
}
barrels(outDir);
