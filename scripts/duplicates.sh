#!/usr/bin/env bash
# Counts the duplicate pairs of issue 39's criterion: the `duplicates` finder over apps/ and
# packages/, less what the criterion leaves out (decision 0270). A developer tool: the finder is
# not installed everywhere, and nothing in CI runs this.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'USAGE'
Usage: ./scripts/duplicates.sh [--all]

Runs the duplicate-code finder (`duplicates`, when this machine has it) in apps/ and in
packages/ (`duplicates --most 200 --seconds 120` in each folder), and prints the pairs of six
or more shared lines that count for issue 39, then how many there are and how many of them
touch apps/managed-ai. A row is left out when either of its places is
  - a migration (prisma/migrations/), an SQL source (.sql) or a proto (.proto);
  - generated (console/src/api-types.ts, anything under generated/);
  - not hand-written TypeScript (.ts or .tsx; the .mjs benches and scripts are not);
or when the finder marks the row `boilerplate` (alike in shape only, and most of what it
shares is punctuation, keywords or a shape that recurs across a folder).

  --all   print the finder's rows as they are, before anything is left out

Exits 0 whatever the count (the finder gives a place to look, not a verdict); 2 when the
finder is missing, 3 when a run says it is incomplete or its 200 rows were not enough.
USAGE
    exit 0
    ;;
  --all | "") ;;
  *)
    echo "usage: ./scripts/duplicates.sh [--all] (--help explains)" >&2
    exit 64
    ;;
esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v duplicates >/dev/null; then
  echo "duplicates: the finder is not installed on this machine; nothing counted" >&2
  exit 2
fi

rows="$(mktemp)"
trap 'rm -f "$rows"' EXIT
status=0
for dir in apps packages; do
  out="$(cd "$ROOT/$dir" && duplicates --most 200 --seconds 120)"
  if [ "${1:-}" = "--all" ]; then printf '%s\n' "$out" | sed "1s|^|$dir: |"; fi
  # The finder stops at 200 rows; a count from a cut list would be too low.
  if printf '%s\n' "$out" | grep -qE '^incomplete:|^\(\+[0-9]+ more pairs\)'; then
    printf '%s\n' "$out" | grep -E '^incomplete:|^\(\+[0-9]+ more pairs\)' | sed "s|^|$dir: |" >&2
    status=3
  fi
  # Rows look like `D12 a.ts:10-24 ~ b.ts:40-54 shape (+1 more run)`; name both places from the root.
  printf '%s\n' "$out" | awk -v dir="$dir" '/^D[0-9]+ / { $2 = dir "/" $2; $4 = dir "/" $4; print }' >>"$rows"
done
[ "${1:-}" = "--all" ] && exit "$status"

awk '
  function excluded(place) {
    sub(/:[0-9]+-[0-9]+$/, "", place)
    if (place ~ /\/prisma\/migrations\// || place ~ /\.(sql|proto)$/) return 1
    if (place == "apps/console/src/api-types.ts" || place ~ /\/generated\//) return 1
    return place !~ /\.tsx?$/
  }
  / boilerplate/ { next }
  excluded($2) || excluded($4) { next }
  { kept++; if ($2 ~ /^apps\/managed-ai\// || $4 ~ /^apps\/managed-ai\//) mai++; $1 = "P" kept; print }
  END { printf "%d pairs in hand-written TypeScript (%d of them touch apps/managed-ai)\n", kept, mai }
' "$rows"
exit "$status"
