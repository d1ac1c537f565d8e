#!/usr/bin/env bash
# Brings a fresh clone to a runnable state: npm packages, the Go-built servers, the compiled CLI.
# Idempotent: each step is skipped or quick when it is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/node-lines.sh
source scripts/node-lines.sh
if ! command -v npm >/dev/null 2>&1; then
  echo "[setup] Node.js with npm is required (https://nodejs.org/); enrichflow supports the lines $NODE_SUPPORTED_LINES" >&2
  exit 1
fi
# Everything below runs on a supported Node: the machine's when it is one, else the cached pinned build.
if [[ -z "$(node_supported_line)" ]]; then
  echo "[setup] Node.js $(node --version) is not a supported line ($NODE_SUPPORTED_LINES); using Node $(node_pin "$NODE_DEFAULT_LINE") from the tools cache" >&2
  exec bash scripts/with-node.sh bash scripts/setup.sh
fi

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
