#!/usr/bin/env bash
# Builds isatune against LLVM 19 in ./build-llvm19 and runs the whole CTest suite there: the check that
# "LLVM 19 and newer" holds. Not part of .ci/run (CI builds and tests the default, LLVM 22).
# Needs the Debian packages llvm-19-dev, liblld-19-dev, lld-19 and llvm-19. Jobs: ISATUNE_JOBS (default nproc).
# gfx950 cases skip with the reason printed ("gfx950 needs LLVM >= 20; this build uses LLVM 19.1.7").
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"
# -g builds would otherwise hash the build folder's absolute path, so a clone elsewhere would miss every entry.
export CCACHE_NOHASHDIR=1
BUILD_DIR="${ISATUNE_LLVM19_BUILD_DIR:-build-llvm19}"
JOBS="${ISATUNE_JOBS:-$(nproc)}"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DISATUNE_LLVM_VERSION=19 "${launcher[@]}" "$@"
cmake --build "$BUILD_DIR" -j "$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
