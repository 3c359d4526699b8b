#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds isatune in ./build (incremental, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a fresh clone reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD"
# -g builds would otherwise hash the build folder's absolute path, so a clone elsewhere would miss every entry.
export CCACHE_NOHASHDIR=1
# ISATUNE_DEPS_OPTIONAL=1: a failing deps.sh (a machine that is not Debian, or offline with something missing)
# is reported and the build goes on with what is installed (scripts/device-check.sh does this).
if ! scripts/deps.sh; then
  if [ "${ISATUNE_DEPS_OPTIONAL:-0}" = 1 ]; then
    echo "build: deps.sh failed; building with what is installed" >&2
  else
    exit 1
  fi
fi
BUILD_DIR="${ISATUNE_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
# ISATUNE_BUILD_TARGETS="isatune test_cuda_driver": only those targets (default: everything).
targets=()
for t in ${ISATUNE_BUILD_TARGETS:-}; do targets+=(-t "$t"); done
cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
