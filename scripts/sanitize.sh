#!/usr/bin/env bash
# Builds isatune with sanitizers in a folder of its own and runs the test suite there.
#
#   scripts/sanitize.sh SANITIZERS [--ci] [extra ctest arguments...]
#
# SANITIZERS: address, undefined, thread, or a comma-separated mix such as address,undefined (the CMake option
# ISATUNE_SANITIZE). The build goes to build-sanitize-<sanitizers> (e.g. build-sanitize-address-undefined), so
# it never touches ./build. Any sanitizer report fails the test that caused it: AddressSanitizer aborts by
# itself, UndefinedBehaviorSanitizer is made to (halt_on_error), and ThreadSanitizer exits non-zero.
#
# --ci: only the programs every tuner compile goes through, the assembler (test_toolchain) and the tuner
#       (test_tune, which also replays every fuzz target's seeds and regressions and the bad-input table),
#       which is what CI runs within its time budget; without it, the whole suite.
# thread: only the programs and tests that run threads (THREAD_TESTS below: the compile pool, the assembler
#       and PTX caches from many threads, the loader's selection cache, the emulators' host workers, the
#       concurrent database writers): a ThreadSanitizer build of the whole tree is hours on a 2-core machine
#       and the other tests run one thread.
#
# Suppressions: none. One test is skipped under AddressSanitizer with its reason printed
# (Comgr.BothLlvmsInterleavedAndConcurrent: comgr's own LLVM replaces the sanitizer's alternate signal stack),
# and the comgr tests run without LeakSanitizer (below); docs/reliability.md has the evidence for both.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
[ $# -ge 1 ] || usage
case "$1" in -h | --help) usage ;; esac
SANITIZERS="$1"
shift
IFS=',' read -ra parts <<<"$SANITIZERS"
for s in "${parts[@]}"; do
  case "$s" in
  address | undefined | thread) ;;
  *) echo "sanitize: unknown sanitizer '$s' (expected address, undefined or thread, comma-separated)" >&2; exit 2 ;;
  esac
done
if [[ ",$SANITIZERS," == *",thread,"* && ",$SANITIZERS," == *",address,"* ]]; then
  echo "sanitize: thread and address cannot be combined (the compilers refuse it)" >&2
  exit 2
fi
SUBSET=all
if [ "${1:-}" = "--ci" ]; then
  SUBSET=ci
  shift
fi

# ccache keys on paths relative to the checkout, so a fresh clone reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD"
# -g builds would otherwise hash the build folder's absolute path, so a clone elsewhere would miss every entry.
export CCACHE_NOHASHDIR=1
scripts/deps.sh
BUILD_DIR="${ISATUNE_SANITIZE_BUILD_DIR:-build-sanitize-${SANITIZERS//,/-}}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O1 -g: line numbers in every report, and quicker to compile than -O2 (CI builds this folder cold).
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DISATUNE_SANITIZE="$SANITIZERS" -DISATUNE_BUILD_BENCH=OFF
fi

export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"

start=$(date +%s)
# The comgr tests run with LeakSanitizer off: comgr's own LLVM 15 starts threads with alternate signal stacks of
# its own, and LSan's stop-the-world tracer at exit crashed once on such a process ("Tracer caught signal 11",
# after the test had passed; docs/reliability.md). Third-party, so only those tests lose leak checking.
COMGR='^Comgr\.'
THREAD_PROGRAMS=(test_toolchain test_codeobj test_loader test_ptx test_emu test_emu_ptx test_tune isatune)
THREAD_TESTS='^(Concurrency\.|KernelAssembler\.ThreadsGiveIdenticalResults|PtxCache\.CompilesEachVariantOnceAndInParallel|DisassembleBytes\.ManyThreads|Fixture\.SameAnswerFromManyThreads|Database\.EightProcessesWriteConcurrently|EmuPtxDevice\.DeterministicAcrossHostThreads|Emu\.RacingWorkgroupsOnHostThreads|.*AiterGemm\.Bf16GemmSplitKAtomics|TunePipeline\.|TuneResume\.|TuneIsolation\.|Jit\.UntunedGemmIsBuiltFromTheNearestTunedConfigurationReusedAndBuiltOnceBySixteenThreads)'
if [[ ",$SANITIZERS," == *",thread,"* ]]; then
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${THREAD_PROGRAMS[@]}"
  ctest --test-dir "$BUILD_DIR" -R "$THREAD_TESTS" -E "$COMGR" --output-on-failure -j "$(nproc)" "$@"
elif [ "$SUBSET" = ci ]; then
  # test_tune runs the isatune program (device worker), so it is built too.
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target test_toolchain test_tune isatune
  ctest --test-dir "$BUILD_DIR" -L '^(test_toolchain|test_tune)$' -E "$COMGR" --output-on-failure -j "$(nproc)" "$@"
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    ctest --test-dir "$BUILD_DIR" -L '^test_toolchain$' -R "$COMGR" --output-on-failure -j "$(nproc)" "$@"
else
  cmake --build "$BUILD_DIR" -j "$(nproc)"
  ctest --test-dir "$BUILD_DIR" -E "$COMGR" --output-on-failure -j "$(nproc)" "$@"
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    ctest --test-dir "$BUILD_DIR" -R "$COMGR" --output-on-failure -j "$(nproc)" "$@"
fi
[[ ",$SANITIZERS," == *",thread,"* ]] && SUBSET=threaded
echo "sanitize: $SANITIZERS ($SUBSET) passed in $(($(date +%s) - start)) s"
