# Sourced by the other scripts: the Node.js lines enrichflow supports, the exact build pinned for each,
# and where the tools cache keeps them. The official binaries come from the npm registry (package
# node-<os>-<arch>), so a machine that reaches only package registries can still fetch them.
#
#   node_supported_line           prints the major line of `node` on PATH if it is supported, else nothing
#   node_pin LINE                 prints the pinned version of a line (e.g. 24 -> 24.21.0)
#   node_cached_bin_dir LINE      prints the cache folder holding that build's `node`
#   node_install LINE             fetches and caches the pinned build of LINE (idempotent)
#   node_dir_for_quick_start      prints a folder to put first on PATH, or nothing when `node` will do

NODE_SUPPORTED_LINES="22 24 26"
# The quick start's line when the machine's Node is not a supported one: the newest LTS the suite
# passed on (the Dockerfile's base image uses the same line).
NODE_DEFAULT_LINE="${ENRICHFLOW_NODE_LINE:-26}"
NODE_CACHE_ROOT="${ENRICHFLOW_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/enrichflow/tools}/node"

node_pin() {
  case "$1" in
    22) echo "22.23.3" ;;
    24) echo "24.21.0" ;;
    26) echo "26.10.0" ;;
    *) return 1 ;;
  esac
}

node_supported_line() {
  command -v node >/dev/null 2>&1 || return 0
  local major
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)"
  for line in $NODE_SUPPORTED_LINES; do
    if [[ "$major" == "$line" ]]; then
      echo "$line"
      return 0
    fi
  done
}

node_cached_bin_dir() {
  echo "$NODE_CACHE_ROOT/v$(node_pin "$1")/bin"
}

node_package_name() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) return 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) return 1 ;;
  esac
  echo "node-$os-$arch"
}

node_install() {
  local line="$1" version dir package tmp started
  version="$(node_pin "$line")" || {
    echo "[node] unsupported Node line: $line (supported: $NODE_SUPPORTED_LINES)" >&2
    return 1
  }
  dir="$NODE_CACHE_ROOT/v$version"
  if [[ -x "$dir/bin/node" ]]; then return 0; fi
  package="$(node_package_name)" || {
    echo "[node] no official Node build for $(uname -s)/$(uname -m); install Node $line yourself" >&2
    return 1
  }
  if ! command -v npm >/dev/null 2>&1; then
    echo "[node] npm is needed to fetch $package@$version; install Node $line yourself" >&2
    return 1
  fi
  started=$SECONDS
  tmp="$(mktemp -d)"
  # npm pack checks the tarball against the registry's integrity hash.
  if ! (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null); then
    rm -rf "$tmp"
    echo "[node] could not fetch $package@$version from the npm registry" >&2
    return 1
  fi
  mkdir -p "$tmp/x"
  tar -xzf "$tmp/$package-$version.tgz" -C "$tmp/x" package/bin/node package/LICENSE
  if [[ "$("$tmp/x/package/bin/node" --version)" != "v$version" ]]; then
    rm -rf "$tmp"
    echo "[node] $package@$version does not run here" >&2
    return 1
  fi
  # Move into place in one step so a concurrent reader never sees half a binary.
  mkdir -p "$NODE_CACHE_ROOT"
  rm -rf "$dir.partial"
  mv "$tmp/x/package" "$dir.partial"
  mv -T "$dir.partial" "$dir" 2>/dev/null || rm -rf "$dir.partial"
  rm -rf "$tmp"
  echo "[node] $version: fetched in $((SECONDS - started)) s -> $dir/bin/node" >&2
}

node_dir_for_quick_start() {
  if [[ -n "$(node_supported_line)" ]]; then return 0; fi
  node_install "$NODE_DEFAULT_LINE" || return 1
  node_cached_bin_dir "$NODE_DEFAULT_LINE"
}
