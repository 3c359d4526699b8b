#!/usr/bin/env bash
# libFuzzer runs (clang build in ./build-fuzz, every library instrumented; tests/fuzz/CMakeLists.txt).
#
#   scripts/fuzz.sh                     CI: the code object reader for 40,000 inputs from its seeds, plus its saved
#                                       crash inputs (the other targets' seeds and regressions are replayed by
#                                       test_tune's FuzzReplay in every build, so CI builds only this fuzzer)
#   scripts/fuzz.sh --long SECONDS [TARGET...]
#                                       each target (default: all) for SECONDS from its seeds and its corpus,
#                                       then a line per target with its executions, the seconds it ran, corpus
#                                       size and crashes (build-fuzz/fuzz-long.txt; a run stopped with SIGINT,
#                                       kill -INT, says so). Crash inputs go to build-fuzz/crash-<target>-*;
#                                       a process killed by a signal (a SEGV inside LLVM, a stack overflow) leaves
#                                       the input it was running as crash-<target>-signal-<N>-* (last_input.h);
#                                       copy one to tests/fuzz/regressions/<target>/ with the fix.
#   scripts/fuzz.sh --list              the target names
#
# Targets: codeobj asm_text asm_builder ptx db replay run_args emu_cdna (docs/reliability.md says what each
# feeds and checks). Long runs are meant for an idle machine: 10^7 executions of the cheap targets take hours.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL_TARGETS=(codeobj asm_text asm_builder ptx db replay run_args emu_cdna)
usage() {
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
MODE=ci
SECONDS_EACH=0
TARGETS=()
case "${1:-}" in
-h | --help) usage ;;
--list) printf '%s\n' "${ALL_TARGETS[@]}"; exit 0 ;;
--long)
  MODE=long
  [ $# -ge 2 ] || usage
  SECONDS_EACH="$2"
  shift 2
  TARGETS=("$@")
  [ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")
  for t in "${TARGETS[@]}"; do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t' (--list names them)" >&2; exit 2; }
  done
  ;;
"") ;;
*) usage ;;
esac
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
  # -O1 -g: line numbers in every report, and quicker to compile (every library is built here with ASan+UBSan).
  CC="clang-$CLANG" CXX="clang++-$CLANG" cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DISATUNE_BUILD_FUZZ=ON -DISATUNE_BUILD_BENCH=OFF >/dev/null
fi
if [ "$MODE" = ci ]; then
  cmake --build "$FUZZ_DIR" -j "$(nproc)" --target fuzz_codeobj
  ctest --test-dir "$FUZZ_DIR" -R '^fuzz_codeobj' --output-on-failure
  exit 0
fi

cmake --build "$FUZZ_DIR" -j "$(nproc)" --target "${TARGETS[@]/#/fuzz_}"
OUT="$FUZZ_DIR/tests/fuzz"
SUMMARY="$FUZZ_DIR/fuzz-long.txt"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) ${SECONDS_EACH}s per target" >>"$SUMMARY"
status=0
for t in "${TARGETS[@]}"; do
  corpus="$OUT/corpus_$t"
  mkdir -p "$corpus"
  seeds=()
  for d in "tests/fuzz/seeds/$t" "$OUT/seeds_$t" "tests/fuzz/regressions/$t"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  [ "$t" = codeobj ] && seeds=("$OUT/seeds" tests/fuzz/regressions)
  log="$FUZZ_DIR/fuzz-long-$t.log"
  started=$SECONDS
  set +e
  # handle_segv=0: inside LLVM's decoder ASan's own handler has been seen to crash before writing the input.
  # A signal that kills the process leaves no crash-* behind; last_input.h keeps the input in $last instead.
  last="$FUZZ_DIR/last-input-$t"
  # fuzz_db writes two SQLite files per input under TMPDIR: in memory (/dev/shm) it runs 1.5 times as fast
  # (75/s against 48/s on /tmp's disk, docs/reliability.md). A TMPDIR set by the caller wins.
  tmp="${TMPDIR:-/tmp}"
  [ "$t" = db ] && [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
  TMPDIR="$tmp" ISATUNE_FUZZ_LAST_INPUT="$last" \
  ASAN_OPTIONS=handle_segv=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$OUT/fuzz_$t" \
    -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$FUZZ_DIR/crash-$t-" "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$((SECONDS - started))
  if [ $rc -gt 128 ] && [ -f "$last" ]; then
    # Killed by a signal (139: SIGSEGV): the 8-byte size, then the input that was running.
    killed="$FUZZ_DIR/crash-$t-signal-$((rc - 128))-$(date -u +%s)"
    python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); n=int.from_bytes(b[:8],"little"); open(sys.argv[2],"wb").write(b[8:8+n])' \
      "$last" "$killed"
    echo "fuzz: $t died of signal $((rc - 128)); the input it was running is $killed" >>"$log"
  fi
  rm -f "$last"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  # A process killed by a signal prints no final stats: its last status line ("#N ...") is the count.
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9][0-9]*\)[[:space:]].*/\1/p' "$log" | tail -1)
  line="$t: ${execs:-?} executions in $elapsed s, corpus $(ls "$corpus" | wc -l) files, exit $rc"
  if [ $rc -eq 72 ] && grep -q 'libFuzzer: run interrupted' "$log"; then
    # libFuzzer's exit status for SIGINT (a run stopped by hand): not a finding, but not the whole run either.
    line+=" (interrupted by SIGINT before its ${SECONDS_EACH} s; no crash)"
  elif [ $rc -ne 0 ]; then
    line+=" (FAILED: $log, $FUZZ_DIR/crash-$t-*)"
    status=1
  fi
  echo "$line" | tee -a "$SUMMARY"
done
exit $status
