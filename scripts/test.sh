#!/usr/bin/env bash
# The one test command: sets the machine up (scripts/setup.sh), then runs every
# test of every package, unit and integration, against real PostgreSQL and NATS.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'EOF'
Usage: ./scripts/test.sh        (also: pnpm test)

Sets this machine up (pnpm, PostgreSQL, NATS, Redis, Chromium, dependencies, build;
see scripts/setup.sh), checks formatting (pnpm format:check; pnpm format fixes it), lints (pnpm lint) and checks for import cycles (pnpm cycles),
type-checks everything, runs every package's tests (unit, stack-level integration,
the console's browser tests) and the fault suite, and validates docker-compose.yml.
It leaves the working tree as it found it: the screenshots and docs/reliability.md
are written only by ./scripts/docs.sh (pnpm docs). Takes several minutes.

Environment (all optional):
  DATABASE_URL / NATS_URL / REDIS_URL   use servers elsewhere instead of local ones
  TEST_LOG_DIR                          process logs of stack tests (default .test-logs/)
  CHROMIUM_PATH                         a Chromium other than /usr/bin/chromium
EOF
    exit 0
    ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

# The console's end-to-end tests drive Debian's Chromium (tests/src/console.e2e.test.ts).
if [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi

log "format check, lint (biome) and import cycles"
pnpm format:check
pnpm lint
pnpm cycles

# The stack tests validate docker-compose.yml (tests/src/repository.test.ts): Debian's
# docker-compose, unless docker's compose plugin is there.
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then apt_install docker-compose; fi

log "type-checking sources and tests"
pnpm exec turbo run typecheck --output-logs=errors-only

export TEST_LOG_DIR="${TEST_LOG_DIR:-$ROOT/.test-logs}"
log "tests (process logs of stack tests in $TEST_LOG_DIR)"
pnpm exec turbo run test --concurrency=1 --output-logs=new-only

# The fault suite's bounded profile: faults under load, then hostile input. Its report goes to
# tests/.reliability/ci.md; docs/reliability.md is written only by pnpm docs.
log "reliability suite (profile ci: faults under load, hostile input)"
pnpm reliability --profile=ci

# The compose file must stay valid: `docker compose config`, or Debian's
# docker-compose where the compose plugin is not installed. It names no secret of its
# own (decision 0182), so it is rendered with a freshly generated set.
compose_env="$(mktemp)"
trap 'rm -f "$compose_env"' EXIT
bash "$ROOT/scripts/gen-secrets.sh" >"$compose_env"
if docker compose version >/dev/null 2>&1; then
  log "docker compose config (with generated secrets)"
  docker compose --env-file "$compose_env" config --quiet
else
  command -v docker-compose >/dev/null 2>&1 || apt_install docker-compose
  log "docker-compose config (with generated secrets)"
  docker-compose --env-file "$compose_env" config --quiet
fi
log "all tests passed"
