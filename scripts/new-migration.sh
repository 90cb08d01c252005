#!/usr/bin/env bash
# Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL from the migrations already in the
# repo (as applied to DATABASE_URL) to prisma/schema.prisma. `prisma migrate dev` needs a shadow database
# and the native engine; `migrate diff` works with the WASM engine.
# Usage: npm run db:new-migration -- <name>   (DATABASE_URL must have every existing migration applied)
set -euo pipefail
name="${1:?usage: new-migration.sh <name>}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/prisma/migrations/$(date -u +%Y%m%d%H%M%S)_${name}"
mkdir -p "$dir"
if ls "$root"/prisma/migrations/*/migration.sql >/dev/null 2>&1 && [ "$(ls -d "$root"/prisma/migrations/*/ | wc -l)" -gt 1 ]; then
  "$root/scripts/prisma-cli.sh" migrate diff --from-url "$DATABASE_URL" --to-schema-datamodel prisma/schema.prisma --script -o "$dir/migration.sql"
else
  "$root/scripts/prisma-cli.sh" migrate diff --from-empty --to-schema-datamodel prisma/schema.prisma --script -o "$dir/migration.sql"
fi
echo "wrote $dir/migration.sql"
