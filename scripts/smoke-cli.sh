#!/usr/bin/env bash
# The CLI's smoke checks, on the `node` first on PATH (CI runs them on Node 22, the oldest supported
# line): the compiled CLI starts, shows its configuration, and runs the demo end to end (Temporal dev
# server, S3-less local output, the sandbox) without Node printing a single warning.
#   bash scripts/smoke-cli.sh
set -euo pipefail
cd "$(dirname "$0")/.."

[[ -f dist/cli/main.js ]] || npm run --silent build
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log() { printf '[smoke %s] %s\n' "$(node --version)" "$*" >&2; }

# check NAME COMMAND...: runs it, fails on a non-zero exit or on any warning in its output.
check() {
  local name="$1"
  shift
  if ! "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    log "$name: FAILED ($*)"
    cat "$work/$name.out" "$work/$name.err" >&2
    return 1
  fi
  if grep -E -i '(^|[^a-z])warning|EBADENGINE|DeprecationWarning|ExperimentalWarning' "$work/$name.out" "$work/$name.err" >&2; then
    log "$name: printed a warning"
    return 1
  fi
  log "$name: ok"
}

check runtime node scripts/check-runtime.js
check help node bin/enrichflow.js --help
check config env ENRICHFLOW_API_KEY=smoke node bin/enrichflow.js config show
check tools node bin/enrichflow.js tools
started=$SECONDS
check demo node bin/enrichflow.js demo --output "$work/output" --data-dir "$work/data" \
  --datasets firmographics
grep -q -i 'completed' "$work/demo.out" "$work/demo.err" || {
  log "demo: no completed run in its output"
  cat "$work/demo.out" >&2
  exit 1
}
log "demo: completed in $((SECONDS - started)) s"
ls "$work/output" >/dev/null
