#!/usr/bin/env bash
# The one command for a local full stack: sets the machine up (scripts/setup.sh),
# then runs every service on local defaults until Ctrl-C. Databases are created
# and migrated by the services themselves on start.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'EOF'
Usage: ./scripts/stack.sh [--no-setup]        (also: pnpm stack)

Sets this machine up (pnpm, PostgreSQL, NATS, Redis, dependencies, build; see
scripts/setup.sh), then runs the edge, every gRPC service and the local mock AI
provider until Ctrl-C (gRPC between them over mutual TLS with a local CA), and
prints the gateway's URL, the web console's URL and the operator sign-in. Ctrl-C drains in-flight work and stops every service once.
Logs: .stack/logs/<service>.log. Then ./scripts/seed.sh (another terminal) adds demo data.

Options:
  --no-setup               skip the set-up (the tree is built and the servers run)

Environment (all optional):
  PORT                     edge HTTP port (default 8080)
  LEDGER_GRPC_URL, MANAGED_AI_GRPC_URL, JOBS_GRPC_URL, MESSAGING_GRPC_URL, FILES_GRPC_URL
                           where each gRPC service listens (defaults 127.0.0.1:50051 to :50055)
  METRICS_PORT=0           no separate metrics port per gRPC service (defaults 9101 to 9105)
  STACK_DATABASE_PREFIX    database names <prefix>_<service> (default: gateway_<service>)
  MOCK_PROVIDER_PORT       mock AI provider port (default 8090)
  MOCK_PROVIDER_API_KEY    the key it accepts (default sk-local-demo)
  BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD  the operator (default admin@gateway.local)
  DATABASE_URL / NATS_URL / REDIS_URL / NATS_NAMESPACE / REDIS_KEY_PREFIX  servers elsewhere
  STACK_LOG_DIR            where the logs go (default .stack/logs)
  STACK_CERT_DIR           the local CA and certificates of gRPC over mutual TLS
                           (default .stack/certs; made by scripts/certs.sh, kept)
  GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY  files of your own instead, for every process
  Every variable of docs/configuration.md reaches the services.
EOF
    exit 0
    ;;
esac
if [ "${1:-}" = "--no-setup" ]; then
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  source "$ROOT/scripts/node.sh"
elif [ -n "${1:-}" ]; then
  echo "unknown option: $1 (see --help)" >&2
  exit 2
else
  source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
fi
# exec: Ctrl-C reaches the runner itself, which stops each service once.
exec node "$ROOT/scripts/stack.mjs"
