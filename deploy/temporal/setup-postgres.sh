#!/bin/sh
# Creates Temporal's two PostgreSQL databases if missing and brings their schemas up to the version of
# the temporal-sql-tool that runs it (the schemas are built into the tool, so its version is the
# server's). Safe to run on every start: existing databases are kept and `update-schema` applies only
# newer versions. docker-compose.yml runs it in the admin-tools image (the `temporal-schema` job); the
# cluster test runs it with the tool the tools installer builds (scripts/install-tools.sh --cluster).
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"
PORT="${DB_PORT:-5432}"
export SQL_PASSWORD

sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$PORT" -u "$POSTGRES_USER" "$@"
}

for db in temporal temporal_visibility; do
  # `create` fails when the database exists; the schema steps below then fail loudly if it truly cannot.
  sql --db "$db" create 2>/dev/null || echo "database $db exists"
done

sql --db temporal setup-schema -v 0.0
sql --db temporal update-schema --schema-name postgresql/v12/temporal
sql --db temporal_visibility setup-schema -v 0.0
sql --db temporal_visibility update-schema --schema-name postgresql/v12/visibility
echo "Temporal schemas are up to date"
