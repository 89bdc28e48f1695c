#!/usr/bin/env bash
# Writes the documents generated from runs: the console's screenshots, the fault suite's
# figures and the environment-variable tables. Tests never write them (decision 0192).
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'USAGE'
Usage: ./scripts/docs.sh        (also: pnpm docs)

Sets this machine up (scripts/setup.sh), then rewrites the generated documents:
  docs/screenshots/*.png     the console's browser tests (tests/src/console*.e2e.test.ts)
  docs/reliability.md        the fault suite, profile ci (pnpm reliability --profile=ci)
  docs/configuration.md and the README's variable tables (scripts/env-docs.mjs)
Commit what changed. ./scripts/test.sh runs the same tests and writes none of these.
Takes several minutes.

Environment (all optional):
  DATABASE_URL / NATS_URL / REDIS_URL   use servers elsewhere instead of local ones
  CHROMIUM_PATH                         a Chromium other than /usr/bin/chromium
USAGE
    exit 0
    ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi

export WRITE_DOCS=1
export TEST_LOG_DIR="${TEST_LOG_DIR:-$ROOT/.test-logs}"
log "environment-variable tables (docs/configuration.md, README)"
node "$ROOT/scripts/env-docs.mjs"
log "console screenshots (docs/screenshots/)"
(cd "$ROOT/tests" && pnpm exec vitest run src/console)
log "fault suite, profile ci (docs/reliability.md)"
pnpm reliability --profile=ci
log "generated documents written; review and commit them (git status)"
