#!/usr/bin/env bash
# The one command for a local full stack: sets the machine up (scripts/setup.sh),
# then runs every service on local defaults until Ctrl-C. Databases are created
# and migrated by the services themselves on start.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
exec node "$ROOT/scripts/stack.mjs"
