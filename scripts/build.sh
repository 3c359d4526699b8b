#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds isatune in ./build (incremental, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a fresh clone reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD"
# -g builds would otherwise hash the build folder's absolute path, so a clone elsewhere would miss every entry.
export CCACHE_NOHASHDIR=1
scripts/deps.sh
BUILD_DIR="${ISATUNE_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
