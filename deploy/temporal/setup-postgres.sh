#!/bin/sh
# One-shot schema job (temporalio/admin-tools): creates Temporal's two PostgreSQL databases if missing
# and brings their schemas up to the version of the admin-tools image. Safe to run on every
# `docker compose up`: existing databases are kept and `update-schema` applies only newer versions.
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"
PORT="${DB_PORT:-5432}"
SCHEMA=/etc/temporal/schema/postgresql/v12

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$PORT" -u "$POSTGRES_USER" "$@"
}

for db in temporal temporal_visibility; do
  # `create` fails when the database exists; the schema steps below then fail loudly if it truly cannot.
  sql --db "$db" create 2>/dev/null || echo "database $db exists"
done

sql --db temporal setup-schema -v 0.0
sql --db temporal update-schema -d "$SCHEMA/temporal/versioned"
sql --db temporal_visibility setup-schema -v 0.0
sql --db temporal_visibility update-schema -d "$SCHEMA/visibility/versioned"
echo "Temporal schemas are up to date"
