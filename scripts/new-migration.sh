#!/usr/bin/env bash
# Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL from the schema as committed
# (git HEAD) to the working-tree prisma/schema.prisma. With a driver adapter in prisma.config.ts the
# WASM schema engine cannot diff against a live or shadow database (`--from-url`/`--shadow-database-url`
# are refused), so the diff is schema-to-schema: generate the migration before committing the schema.
# The WASM engine splits a migration at every `;`, in comments too: keep semicolons out of comments.
# Usage: npm run db:new-migration -- <name> [<git-rev of the old schema, default HEAD>]
set -euo pipefail
name="${1:?usage: new-migration.sh <name> [rev]}"
rev="${2:-HEAD}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
old="$(mktemp --suffix=.prisma)"
trap 'rm -f "$old"' EXIT
git show "$rev:prisma/schema.prisma" > "$old"
dir="prisma/migrations/$(date -u +%Y%m%d%H%M%S)_${name}"
mkdir -p "$dir"
scripts/prisma-cli.sh migrate diff --from-schema-datamodel "$old" --to-schema-datamodel prisma/schema.prisma --script -o "$dir/migration.sql"
echo "wrote $dir/migration.sql"
