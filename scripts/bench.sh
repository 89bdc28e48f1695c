#!/usr/bin/env bash
# The benchmark of record: sets the machine up (scripts/setup.sh), then measures this
# gateway against the Portkey gateway and the provider directly, the ledger, and key
# verification; writes docs/benchmarks.md. BENCH_SECONDS (default 8) per measured run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
log "benchmarks (several minutes)"
pnpm --filter @gateway/bench run all
