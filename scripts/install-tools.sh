#!/usr/bin/env bash
# Installs the tools enrichflow runs with into a versioned cache outside the repository, so later runs
# and later clones reuse them. Idempotent: what is already cached (or given by env/PATH) is skipped.
#
#   install-tools.sh                  the local stack's two Go-built servers (Temporal CLI, versitygw),
#                                     and a supported Node.js when the machine's is not one
#   install-tools.sh --cluster        also the Temporal server and its SQL schema tool, and the
#                                     OpenTelemetry Collector (test:cluster)
#   install-tools.sh --otelcol        the OpenTelemetry Collector alone (OTLP receiver, file exporter)
#   install-tools.sh --node "22 24"   also the pinned Node.js builds of these lines (CI)
#   install-tools.sh --no-base ...    skip the local stack's two servers
set -euo pipefail
# shellcheck source=scripts/node-lines.sh
source "$(dirname "$0")/node-lines.sh"

TEMPORAL_VERSION="${ENRICHFLOW_TEMPORAL_VERSION:-v1.5.1}"
VERSITYGW_VERSION="${ENRICHFLOW_VERSITYGW_VERSION:-v1.7.0}"
# The newest Temporal server release whose module builds with Go 1.26.8 (later ones need 1.26.10).
# docker-compose.yml and docs/deployment.md name the same version (test/deploy checks it).
TEMPORAL_SERVER_VERSION="${ENRICHFLOW_TEMPORAL_SERVER_VERSION:-v1.30.6}"
# The collector's official builder and the components it builds in, all of one release whose modules
# resolve from the Go module proxy and build with Go 1.26.8 (they declare go 1.26.0).
OTELCOL_VERSION="${ENRICHFLOW_OTELCOL_VERSION:-v0.165.0}"
CACHE_ROOT="${ENRICHFLOW_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/enrichflow/tools}"

base=1
cluster=0
otelcol=0
node_lines=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cluster) cluster=1 otelcol=1 ;;
    --otelcol) otelcol=1 ;;
    --no-base) base=0 ;;
    --node)
      node_lines="$2"
      shift
      ;;
    *)
      echo "usage: install-tools.sh [--cluster] [--otelcol] [--no-base] [--node \"22 24 26\"]" >&2
      exit 2
      ;;
  esac
  shift
done

log() { printf '[install-tools] %s\n' "$*" >&2; }

# install_one NAME MODULE VERSION ENV_VAR [PACKAGE...]
# Builds MODULE's PACKAGEs (default: MODULE itself) at VERSION; the first one's binary becomes NAME,
# the others keep the names given as PACKAGE=NAME.
install_one() {
  local name="$1" module="$2" version="$3" env_var="$4"
  shift 4
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
  local packages=("$@")
  [[ ${#packages[@]} -gt 0 ]] || packages=("$module=$name")
  local targets=() spec
  for spec in "${packages[@]}"; do targets+=("${spec%%=*}@$version"); done
  log "$name $version: building with 'go install ${targets[*]}' (first run only)"
  mkdir -p "$dir"
  local started=$SECONDS
  # Built into a scratch folder and moved into place, so an interrupted build is never taken as cached.
  local scratch="$dir.build"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  GOBIN="$scratch" GOFLAGS="${GOFLAGS:--buildvcs=false}" go install "${targets[@]}"
  local first=1 built
  for spec in "${packages[@]}"; do
    built="$scratch/$(basename "${spec%%=*}")"
    if [[ $first -eq 1 ]]; then
      mv "$built" "$bin"
      first=0
    else
      mv "$built" "$dir/${spec#*=}"
    fi
  done
  rm -rf "$scratch"
  log "$name $version: built in $((SECONDS - started)) s -> $bin"
}

# install_otelcol VERSION
# An OpenTelemetry Collector with the OTLP receiver and the file exporter, built by the collector's own
# builder (ocb) at VERSION from a manifest written here; cached like the other tools.
install_otelcol() {
  local version="$1"
  local given="${ENRICHFLOW_OTELCOL_BIN:-}"
  if [[ -n "$given" ]]; then
    if [[ -x "$given" ]]; then log "otelcol: using ENRICHFLOW_OTELCOL_BIN=$given"; return 0; fi
    log "otelcol: ENRICHFLOW_OTELCOL_BIN=$given is not an executable file"; return 1
  fi
  local dir="$CACHE_ROOT/otelcol/$version"
  local bin="$dir/otelcol"
  if [[ -x "$bin" ]]; then log "otelcol $version: cached at $bin"; return 0; fi
  if ! command -v go >/dev/null 2>&1; then
    cat >&2 <<MSG
[install-tools] otelcol $version (OpenTelemetry Collector) is needed and Go is not installed, so it
  cannot be built here. Either install Go (https://go.dev/dl/) and run this script again, or download
  a release of otelcol-contrib $version and point ENRICHFLOW_OTELCOL_BIN at it.
MSG
    return 1
  fi
  log "otelcol $version: building with the collector builder (first run only)"
  local started=$SECONDS scratch="$dir.build"
  rm -rf "$scratch"
  mkdir -p "$scratch/bin"
  GOBIN="$scratch/bin" GOFLAGS="${GOFLAGS:--buildvcs=false}" go install "go.opentelemetry.io/collector/cmd/builder@$version"
  cat >"$scratch/manifest.yaml" <<YAML
dist:
  name: otelcol
  description: OpenTelemetry Collector for enrichflow's cluster test (OTLP in, JSON files out)
  output_path: $scratch/out
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver $version
exporters:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter $version
YAML
  # -e (taken by the builder's `go mod tidy`): go on when a module only the components' own tests import
  # is missing (some of contrib's test modules are not on the module proxy); the build does not need them.
  # GOTOOLCHAIN=local: a module that wants a newer Go fails the build instead of fetching a toolchain.
  GOTOOLCHAIN=local GOFLAGS="-e -buildvcs=false" "$scratch/bin/builder" --config "$scratch/manifest.yaml" >&2
  mkdir -p "$dir"
  mv "$scratch/out/otelcol" "$bin"
  rm -rf "$scratch"
  log "otelcol $version: built in $((SECONDS - started)) s -> $bin"
}

mkdir -p "$CACHE_ROOT"
started=$SECONDS
rc=0
# Node first: quick to fetch, and `npm install` should already run on it.
if [[ -z "$node_lines" && -z "$(node_supported_line)" ]]; then node_lines="$NODE_DEFAULT_LINE"; fi
for line in $node_lines; do node_install "$line" || rc=1; done
pids=()
if [[ $base -eq 1 ]]; then
  install_one temporal github.com/temporalio/cli/cmd/temporal "$TEMPORAL_VERSION" ENRICHFLOW_TEMPORAL_BIN &
  pids+=($!)
  install_one versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION" ENRICHFLOW_VERSITYGW_BIN &
  pids+=($!)
fi
if [[ $cluster -eq 1 ]]; then
  # One build for both binaries of the server module: they share almost every package.
  install_one temporal-server go.temporal.io/server "$TEMPORAL_SERVER_VERSION" ENRICHFLOW_TEMPORAL_SERVER_BIN \
    go.temporal.io/server/cmd/server=temporal-server \
    go.temporal.io/server/cmd/tools/sql=temporal-sql-tool &
  pids+=($!)
fi
if [[ $otelcol -eq 1 ]]; then
  install_otelcol "$OTELCOL_VERSION" &
  pids+=($!)
fi
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
log "done in $((SECONDS - started)) s (cache: $CACHE_ROOT)"
exit $rc
