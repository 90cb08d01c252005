#!/usr/bin/env bash
# README quick start, step 1: install everything (Node 24 arrives as an npm dependency), bring up Redis
# and PostgreSQL (starting project-local ones if needed), apply migrations, start the API and workers
# and run the simulated fleet against them.  Usage: bash scripts/quickstart.sh [demo flags]
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
npm run demo -- "$@"
