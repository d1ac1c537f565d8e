#!/usr/bin/env bash
# Installs the two Go-built servers the local stack needs (Temporal CLI, versitygw) into a
# versioned cache outside the repository, so later runs and later clones reuse them.
# Idempotent: when the binaries are already cached (or given by env/PATH) it does nothing.
set -euo pipefail

TEMPORAL_VERSION="${ENRICHFLOW_TEMPORAL_VERSION:-v1.5.1}"
VERSITYGW_VERSION="${ENRICHFLOW_VERSITYGW_VERSION:-v1.7.0}"
CACHE_ROOT="${ENRICHFLOW_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/enrichflow/tools}"

log() { printf '[install-tools] %s\n' "$*" >&2; }

# install_one NAME MODULE VERSION ENV_VAR
install_one() {
  local name="$1" module="$2" version="$3" env_var="$4"
  local given="${!env_var:-}"
  if [[ -n "$given" ]]; then
    if [[ -x "$given" ]]; then log "$name: using $env_var=$given"; return 0; fi
    log "$name: $env_var=$given is not an executable file"; return 1
  fi
  local dir="$CACHE_ROOT/$name/$version"
  local bin="$dir/$name"
  if [[ -x "$bin" ]]; then log "$name $version: cached at $bin"; return 0; fi
  if ! command -v go >/dev/null 2>&1; then
    if command -v "$name" >/dev/null 2>&1; then
      log "$name: no Go toolchain; using $(command -v "$name") from PATH"; return 0
    fi
    cat >&2 <<MSG
[install-tools] $name $version is needed and Go is not installed, so it cannot be built here.
  Either install Go 1.22+ (https://go.dev/dl/) and run this script again, or download the
  release binary of $name $version for your platform, and point $env_var at it
  (or put it on PATH as '$name').
MSG
    return 1
  fi
  log "$name $version: building with 'go install $module@$version' (first run only)"
  mkdir -p "$dir"
  local started=$SECONDS
  GOBIN="$dir" GOFLAGS="${GOFLAGS:--buildvcs=false}" go install "$module@$version"
  log "$name $version: built in $((SECONDS - started)) s -> $bin"
}

mkdir -p "$CACHE_ROOT"
started=$SECONDS
install_one temporal github.com/temporalio/cli/cmd/temporal "$TEMPORAL_VERSION" ENRICHFLOW_TEMPORAL_BIN &
p1=$!
install_one versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION" ENRICHFLOW_VERSITYGW_BIN &
p2=$!
rc=0
wait $p1 || rc=1
wait $p2 || rc=1
log "done in $((SECONDS - started)) s (cache: $CACHE_ROOT)"
exit $rc
