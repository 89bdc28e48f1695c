#!/usr/bin/env bash
# Demo data for the running local stack, from any terminal: a new terminal does not have
# the project's Node.js and pnpm (scripts/stack.sh installs them into .tools/) on its PATH,
# so this puts that Node.js first (scripts/node.sh) and runs scripts/seed.mjs with it.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'EOF_USAGE'
Usage: ./scripts/seed.sh        (with ./scripts/stack.sh running in another terminal)

Creates demo data through the gateway's public API: the tenant demo@gateway.local with
a USD 10 balance (credited once), the local mock provider as upstream demo-mock, the
priced model demo-small, the managed instance demo and a new API key (earlier demo
keys keep working). Prints the key once, the real balance, a curl line and an openai
SDK snippet. Safe to run again. Works from a fresh terminal: it finds the project's
Node.js itself (scripts/node.sh). `pnpm seed` does the same where pnpm is on PATH.

Environment (all optional): GATEWAY_URL, BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD,
MOCK_PROVIDER_URL / MOCK_PROVIDER_PORT / MOCK_PROVIDER_API_KEY (see node scripts/seed.mjs --help).
EOF_USAGE
    exit 0
    ;;
esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/node.sh"
exec node "$ROOT/scripts/seed.mjs" "$@"
