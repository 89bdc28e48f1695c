// Every command the README tells a newcomer to run answers --help with what it does,
// exits 0 at once and changes nothing: `pnpm bench --help` once started the whole
// benchmark and rewrote docs/benchmarks.md.
import { execFile, execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "@gateway/testkit";

const run = promisify(execFile);
const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
const rootScripts = Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

function packageScripts(name: string): string[] {
  const out = execFileSync("pnpm", ["--filter", name, "exec", "node", "-p", "Object.keys(require('./package.json').scripts).join(' ')"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  return out.trim().split(/\s+/);
}

type Command = { label: string; file: string; args: string[]; cwd: string };

/** The commands the README names: ./scripts/*, scripts/*, node scripts/*, pnpm <script>, pnpm --filter <pkg> <script>, gateway-migrate. */
function namedCommands(): Command[] {
  const out = new Map<string, Command>();
  const add = (c: Command) => out.set(c.label, c);
  for (const m of readme.matchAll(/(?<![\w/])(?:\.\/)?scripts\/([\w.-]+\.(?:sh|mjs))/g)) {
    const file = `scripts/${m[1]}`;
    if (file.endsWith(".sh")) add({ label: `./${file}`, file: join(REPO_ROOT, file), args: ["--help"], cwd: REPO_ROOT });
    else add({ label: `node ${file}`, file: process.execPath, args: [join(REPO_ROOT, file), "--help"], cwd: REPO_ROOT });
  }
  for (const m of readme.matchAll(/pnpm --filter (@gateway\/[\w-]+) ([\w:-]+)/g)) {
    if (!packageScripts(m[1]!).includes(m[2]!)) throw new Error(`the README names ${m[0]}, which is no script of ${m[1]}`);
    add({ label: m[0], file: "pnpm", args: ["--filter", m[1]!, m[2]!, "--help"], cwd: REPO_ROOT });
  }
  for (const m of readme.matchAll(/(?<![\w-])pnpm (?!--filter|exec\b|install\b|i\b)([\w:-]+)/g)) {
    if (rootScripts.includes(m[1]!)) add({ label: `pnpm ${m[1]}`, file: "pnpm", args: [m[1]!, "--help"], cwd: REPO_ROOT });
  }
  if (readme.includes("gateway-migrate"))
    add({ label: "gateway-migrate", file: "pnpm", args: ["exec", "gateway-migrate", "--help"], cwd: join(REPO_ROOT, "apps", "ledger") });
  return [...out.values()];
}

const commands = namedCommands();
const status = () => execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: REPO_ROOT, encoding: "utf8" });
const watched = ["docs/benchmarks.md", "docs/benchmarks/keys.md", "docs/configuration.md", "protos/compat-snapshot.json", "README.md"];
const mtimes = () => watched.map((f) => statSync(join(REPO_ROOT, f)).mtimeMs);

describe("the README's commands", () => {
  it("include the ones a newcomer runs first", () => {
    const labels = commands.map((c) => c.label);
    for (const expected of ["./scripts/stack.sh", "./scripts/test.sh", "./scripts/seed.sh", "pnpm seed", "pnpm bench"]) expect(labels).toContain(expected);
  });

  it.each(commands.map((c) => [c.label, c] as const))("%s --help prints its usage, exits 0 at once and changes nothing", async (_label, command) => {
    const before = { status: status(), mtimes: mtimes() };
    const { stdout } = await run(command.file, command.args, { cwd: command.cwd, timeout: 30_000, env: { ...process.env, FORCE_COLOR: "0" } });
    expect(stdout).toMatch(/usage/i);
    expect(status()).toBe(before.status);
    expect(mtimes()).toEqual(before.mtimes);
  });
});
