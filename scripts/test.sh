#!/usr/bin/env bash
# The one test command: sets the machine up (scripts/setup.sh), then runs every
# test of every package, unit and integration, against real PostgreSQL and NATS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

log "type-checking sources and tests"
pnpm exec turbo run typecheck --output-logs=errors-only

export TEST_LOG_DIR="${TEST_LOG_DIR:-$ROOT/.test-logs}"
log "tests (process logs of stack tests in $TEST_LOG_DIR)"
pnpm exec turbo run test --concurrency=1 --output-logs=new-only

# The compose file must stay valid: `docker compose config`, or Debian's
# docker-compose where the compose plugin is not installed.
if docker compose version >/dev/null 2>&1; then
  log "docker compose config"
  docker compose config --quiet
else
  command -v docker-compose >/dev/null 2>&1 || apt_install docker-compose
  log "docker-compose config"
  docker-compose config --quiet
fi
log "all tests passed"
