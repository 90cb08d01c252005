#!/usr/bin/env bash
# Runs the Prisma 6 CLI offline. The CLI checks for its native query-engine library at start-up and
# downloads it when missing; the project never uses that library (engineType "client" + the pg driver
# adapter, and the WASM schema engine via prisma.config.ts), so any existing file satisfies the check.
# Usage: scripts/prisma-cli.sh generate | migrate deploy | migrate status | ...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export PRISMA_QUERY_ENGINE_LIBRARY="${PRISMA_QUERY_ENGINE_LIBRARY:-$root/package.json}"
export PRISMA_HIDE_UPDATE_MESSAGE=1
exec "$root/node_modules/.bin/prisma" "$@"
