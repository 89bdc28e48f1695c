#!/usr/bin/env bash
# The benchmark of record: sets the machine up (scripts/setup.sh), then measures this
# gateway against the Portkey gateway and the provider directly, the ledger, and key
# verification; writes docs/benchmarks.md. BENCH_SECONDS (default 8) per measured run.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'EOF'
Usage: pnpm bench        (or ./scripts/bench.sh)

The benchmark of record. Sets this machine up (scripts/setup.sh), then runs, in
alternating rounds on this machine: this gateway fully metered, the Portkey gateway
and the mock provider directly (JSON and streams, 1 and 32 connections, CPU per
process, an accounting audit of every run), the ledger, and API key verification.
Rewrites docs/benchmarks.md and docs/benchmarks/keys.md. Takes several minutes.

Environment:
  BENCH_SECONDS   length of each measured run in seconds (default 8)
  BENCH_SERVERS   own (default): PostgreSQL, NATS and Redis of the benchmark's own,
                  with docker-compose.yml's settings; machine: the shared ones
EOF
    exit 0
    ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
log "benchmarks (several minutes)"
pnpm --filter @gateway/bench run all
