// Lists the .proto files of the package, relative to its root.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return name.endsWith(".proto") ? [relative(root, path)] : [];
  });
}

export function protoFiles() {
  return [...walk(join(root, "gateway")), ...walk(join(root, "grpc"))].sort();
}
