#!/usr/bin/env bash
# Before/after of optimizations in one run on one machine. Each git ref is checked out
# into its own worktree ($BENCH_STEPS_DIR, default ${TMPDIR:-/tmp}/gw-steps/<commit>),
# installed and built; "." is this checkout as it is (build it first). Then this
# checkout's bench (bench/src/quick.ts: this gateway alone, metered JSON or stream at 1
# and 32 connections, accounting audit) measures every ref's services with the same
# measuring code, in the order given and back (A B C C B A), and prints the means.
#   scripts/bench-steps.sh <ref> [<ref> ...]      MODE=json|stream (default json)
# Needs what the tests need running (scripts/setup.sh starts it).
set -euo pipefail
usage() {
  cat <<'EOF'
Usage: scripts/bench-steps.sh <ref> [<ref> ...]

Before/after of optimizations: checks each git ref out into its own worktree
($BENCH_STEPS_DIR, default ${TMPDIR:-/tmp}/gw-steps/<commit>), installs and builds
it ("." is this checkout as it is), then measures every ref's services with this
checkout's quick bench in the order given and back (A B B A), and prints the means.
Writes nothing in this checkout.

Environment:
  MODE              json | stream (default json)
  BENCH_STEPS_DIR   where the worktrees go
EOF
}
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/node.sh"
MODE="${MODE:-json}"
DIR="${BENCH_STEPS_DIR:-${TMPDIR:-/tmp}/gw-steps}"
[ $# -ge 1 ] || { usage >&2; exit 2; }
mkdir -p "$DIR"

declare -a TREES NAMES
for ref in "$@"; do
  if [ "$ref" = "." ]; then
    TREES+=("$ROOT"); NAMES+=("working tree"); continue
  fi
  sha="$(git -C "$ROOT" rev-parse --short "$ref^{commit}")"
  tree="$DIR/$sha"
  if [ ! -f "$tree/.built" ]; then
    echo "==> preparing $ref ($sha) in $tree" >&2
    git -C "$ROOT" worktree add --force --detach "$tree" "$sha" >/dev/null 2>&1 || true
    # An old commit's lockfile may lag its package.json (it was committed apart): then resolve again.
    (cd "$tree" && (pnpm install --frozen-lockfile --offline >/dev/null 2>&1 || pnpm install --offline --no-frozen-lockfile >/dev/null 2>&1 || pnpm install --no-frozen-lockfile >/dev/null) \
      && pnpm turbo build --output-logs=errors-only >/dev/null && touch .built)
  fi
  TREES+=("$tree"); NAMES+=("$ref ($sha)")
done

LOG="$(mktemp)"
order=($(seq 0 $(($# - 1))) $(seq $(($# - 1)) -1 0))
for i in "${order[@]}"; do
  echo "==> ${NAMES[$i]}" >&2
  (cd "$ROOT/bench" && BENCH_APPS_ROOT="${TREES[$i]}" QUICK_ROUNDS=1 ./node_modules/.bin/tsx src/quick.ts "$MODE") 2>&1 \
    | awk '/^(json|stream) c=/ { line = $0; next } line != "" && /^    / { sub(/^ +/, ""); print line " || " $0; line = "" }' \
    | sed "s|^|$i\t|" | tee -a "$LOG" >&2
done

# Means per ref and connection count.
node - "$LOG" "${NAMES[@]}" <<'EOF'
const [log, ...names] = process.argv.slice(2);
const lines = require("node:fs").readFileSync(log, "utf8").trim().split("\n");
const runs = {};
for (const line of lines) {
  const [i, text] = line.split("\t");
  const m = /c=(\d+): (\d+) req\/s, [\d.]+ ms\/request, p50 ([\d.]+) p99 ([\d.]+), CPU ([\d.]+) ms\/req,(?: ledger calls [\d.]+\/req,)? accounting (\w+)/.exec(text);
  if (!m) continue;
  const key = `${i}|${m[1]}`;
  // CPU per process ("edge 0.52 · managed-ai 0.61 · ..."), after " || ".
  const procs = Object.fromEntries((text.split(" || ")[1] ?? "").split(" · ").map((p) => /^(.+) ([\d.-]+)$/.exec(p.trim())).filter(Boolean).map((p) => [p[1], +p[2]]));
  (runs[key] ??= []).push({ rps: +m[2], p50: +m[3], p99: +m[4], cpu: +m[5], ok: m[6] === "ok", procs });
}
const mean = (xs, f) => xs.reduce((s, x) => s + f(x), 0) / xs.length;
console.log(`| build | connections | req/s | p50 ms | p99 ms | CPU ms/request | accounting |`);
console.log(`| --- | ---: | ---: | ---: | ---: | ---: | --- |`);
for (const c of ["1", "32"]) {
  names.forEach((name, i) => {
    const r = runs[`${i}|${c}`];
    if (!r) return;
    console.log(`| ${name} | ${c} | ${mean(r, (x) => x.rps).toFixed(0)} | ${mean(r, (x) => x.p50).toFixed(2)} | ${mean(r, (x) => x.p99).toFixed(2)} | ${mean(r, (x) => x.cpu).toFixed(2)} | ${r.every((x) => x.ok) ? "ok" : "FAILED"} |`);
  });
}
console.log(`\nCPU ms/request per process (means):\n`);
console.log(`| build | connections | processes |`);
console.log(`| --- | ---: | --- |`);
for (const c of ["1", "32"]) {
  names.forEach((name, i) => {
    const r = runs[`${i}|${c}`];
    if (!r) return;
    const procs = Object.keys(r[0].procs);
    console.log(`| ${name} | ${c} | ${procs.map((p) => `${p} ${mean(r, (x) => x.procs[p] ?? 0).toFixed(2)}`).join(" · ")} |`);
  });
}
EOF
rm -f "$LOG"
