#!/usr/bin/env bash
# A brief libFuzzer run of the code object reader (30 s from a seed corpus) plus the saved crash inputs.
# libFuzzer needs clang: this configures a separate clang build in ./build-fuzz and builds only the fuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a fresh clone reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD"
# -g builds would otherwise hash the build folder's absolute path, so a clone elsewhere would miss every entry.
export CCACHE_NOHASHDIR=1
CLANG=""
for v in 22 21 20 19; do
  if command -v "clang++-$v" >/dev/null 2>&1; then CLANG="$v"; break; fi
done
if [ -z "$CLANG" ]; then
  echo "fuzz: SKIPPED: no clang++-19..22 found (scripts/deps.sh installs it)"
  exit 0
fi
FUZZ_DIR="${ISATUNE_FUZZ_BUILD_DIR:-build-fuzz}"
if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  CC="clang-$CLANG" CXX="clang++-$CLANG" cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DISATUNE_BUILD_FUZZ=ON -DISATUNE_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$FUZZ_DIR" -j "$(nproc)" --target fuzz_codeobj
ctest --test-dir "$FUZZ_DIR" -R '^fuzz_codeobj' --output-on-failure
