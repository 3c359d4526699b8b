#!/usr/bin/env bash
# Installs, builds and runs the whole test suite: every GoogleTest program through CTest, then a brief
# libFuzzer run of the code object reader (clang build in ./build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
BUILD_DIR="${ISATUNE_BUILD_DIR:-build}"
scripts/fuzz.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
