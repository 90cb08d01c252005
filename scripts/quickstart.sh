#!/usr/bin/env bash
# README quick start, step 1: install everything (Node 24 arrives as an npm dependency), bring up Redis
# and PostgreSQL (starting project-local ones if needed), apply migrations, build to dist/, start the API
# and workers and run the simulated fleet against them.  Usage: bash scripts/quickstart.sh [demo flags]
set -euo pipefail
cd "$(dirname "$0")/.."
# `npm install` with the committed lock, not `npm ci`: npm 11 writes lock files without the other
# platforms' optional packages of msgpackr-extract (a BullMQ dependency) and `npm ci` then refuses them
# as "out of sync"; `npm install` installs the locked versions and leaves the lock unchanged.
npm install --no-audit --no-fund
npm run build
npm run demo -- "$@"
