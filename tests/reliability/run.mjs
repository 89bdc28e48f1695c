#!/usr/bin/env node
// pnpm reliability [--profile=ci|long] [vitest args...]
// ci: bounded (a few minutes), run by scripts/test.sh; long: more load, longer faults.
// The report goes to tests/.reliability/<profile>.md; to docs/reliability.md only with
// WRITE_DOCS=1 (pnpm docs), so a test run leaves the working tree as it found it.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const profileArg = args.find((a) => a.startsWith("--profile="));
const profile = profileArg ? profileArg.slice("--profile=".length) : "ci";
if (!["ci", "long"].includes(profile)) {
  console.error(`unknown profile ${profile}: use --profile=ci or --profile=long`);
  process.exit(2);
}
const rest = args.filter((a) => a !== profileArg);
const cwd = fileURLToPath(new URL("..", import.meta.url));
const r = spawnSync("pnpm", ["exec", "vitest", "run", "--config", "vitest.reliability.config.ts", ...rest], {
  cwd,
  stdio: "inherit",
  env: { ...process.env, RELIABILITY_PROFILE: profile },
});
const report = process.env.WRITE_DOCS === "1" ? "docs/reliability.md" : `tests/.reliability/${profile}.md`;
console.log(`reliability report: ${report}`);
process.exit(r.status ?? 1);
