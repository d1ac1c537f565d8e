#!/usr/bin/env bash
# Runs a command with a supported Node.js first on PATH: the machine's own when it is one of the
# supported lines (22, 24, 26), otherwise the pinned build of the default line from the tools cache,
# fetched once from the npm registry. With ENRICHFLOW_NODE_LINE=N set, always the cached build of N.
#   bash scripts/with-node.sh node bin/enrichflow.js demo
set -euo pipefail
# shellcheck source=scripts/node-lines.sh
source "$(dirname "$0")/node-lines.sh"

if [[ -n "${ENRICHFLOW_NODE_LINE:-}" ]]; then
  node_install "$ENRICHFLOW_NODE_LINE"
  dir="$(node_cached_bin_dir "$ENRICHFLOW_NODE_LINE")"
else
  dir="$(node_dir_for_quick_start)"
fi
if [[ -n "$dir" ]]; then
  export PATH="$dir:$PATH"
fi
exec "$@"
