#!/usr/bin/env bash
# Brings a fresh clone to a runnable state: npm packages, the Go-built servers, the compiled CLI.
# Idempotent: each step is skipped or quick when it is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1; then
  echo "[setup] Node.js >= 20.19 is required (https://nodejs.org/)" >&2
  exit 1
fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`[setup] Node.js >= 20.19 is required; this is ${process.version}`); process.exit(1) }'

# Install only when node_modules is missing or older than the lock file. `npm install` rather than
# `npm ci`: npm 11 writes lock files without entries for other platforms' optional binaries (DuckDB,
# swc, rollup) and its `npm ci` then refuses them as out of sync; `npm install` follows the lock.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[setup] installing npm packages" >&2
  npm install --no-audit --no-fund
fi

bash scripts/install-tools.sh

echo "[setup] compiling TypeScript" >&2
npm run --silent build
