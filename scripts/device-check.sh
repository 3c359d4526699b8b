#!/usr/bin/env bash
# The one-shot device check (issue 12 part 6, docs/performance.md "H200 one-shot check"): on a lent NVIDIA GPU
# (an H200 with 16 cores and PyTorch, no network) it builds isatune, runs every PTX generator's correctness
# check on the GPU, tunes GEMM at 4096^3 and 8192^3 bf16 and a few LLM shapes with short budgets, tunes softmax
# and RMSNorm, checks the sm_90a attention kernel against torch's scaled_dot_product_attention, times cuBLAS
# (torch.matmul) and device-to-device copies (torch clone) on the same shapes, and writes ONE JSON file with every step's outcome and the ratios. Each step has its own time limit and records
# ok / failed / skipped with the reason; nothing aborts the run. The whole run stays under 8 minutes.
#
#   scripts/device-check.sh [--dry-run] [--skip-build] [--device SPEC] [OUT.json]   (default device-check.json)
#
# --dry-run: the same steps against the PTX emulator (emu:sm_90a), tiny shapes, no torch: what can be tested
# without a GPU. --skip-build: use the isatune already in $ISATUNE_BUILD_DIR (default build).
# Environment: DEVICE_CHECK_TOTAL_S (465), CHECK_SECTION_S (130 s of correctness checks; 240 in a dry run).
set -uo pipefail # no -e: every step records its own failure
cd "$(dirname "$0")/.."
ROOT="$PWD"

DRY=0
SKIP_BUILD=0
DEVICE=""
OUT="device-check.json"
while [ $# -gt 0 ]; do
  case "$1" in
  --dry-run) DRY=1 ;;
  --skip-build) SKIP_BUILD=1 ;;
  --device) DEVICE="$2"; shift ;;
  -h|--help) sed -n 2,13p "$0"; exit 0 ;;
  -*) echo "device-check: unknown option $1" >&2; exit 2 ;;
  *) OUT="$1" ;;
  esac
  shift
done
[ -n "$DEVICE" ] || { [ "$DRY" = 1 ] && DEVICE="emu:sm_90a" || DEVICE="cuda:0"; }
case "$OUT" in /*) ;; *) OUT="$ROOT/$OUT" ;; esac

BUILD_DIR="${ISATUNE_BUILD_DIR:-build}"
# The targets checked and the one tuned (other values only to test the script itself, e.g. on gfx942).
CHECK_TARGETS="${DEVICE_CHECK_TARGETS:-sm_90a sm_80}"
TUNE_TARGET="${DEVICE_CHECK_TUNE_TARGET:-sm_90a}"
ISATUNE="$ROOT/$BUILD_DIR/tools/isatune"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX")"
STEPS="$WORK/steps.jsonl"
: >"$STEPS"
START=$(date +%s)
# 8 minutes in all, less a margin for the report.
TOTAL_S="${DEVICE_CHECK_TOTAL_S:-465}"
DB="$WORK/device-check.db"

# A section may end earlier than the run (SECTION_END, seconds since the epoch; 0: no limit of its own).
SECTION_END=0
remaining() {
  local end=$((START + TOTAL_S))
  [ "$SECTION_END" -gt 0 ] && [ "$SECTION_END" -lt "$end" ] && end="$SECTION_END"
  echo $((end - $(date +%s)))
}

# A JSON string (control characters dropped; the step wrapper stays in bash so that it costs nothing).
json_str() {
  local v
  v="$(printf '%s' "$1" | tr -d '\000-\037')"
  v="${v//\\/\\\\}"
  v="${v//\"/\\\"}"
  printf '"%s"' "$v"
}
# record NAME STATUS REASON SECONDS [KEY=VALUE...]: one line of steps.jsonl.
record() {
  local line
  line="{\"name\": $(json_str "$1"), \"status\": $(json_str "$2"), \"reason\": $(json_str "$3"), \"seconds\": $4"
  shift 4
  local kv
  for kv in "$@"; do line+=", $(json_str "${kv%%=*}"): $(json_str "${kv#*=}")"; done
  printf '%s}\n' "$line" >>"$STEPS"
}

# step NAME LIMIT_S [KEY=VALUE...] -- COMMAND...: runs COMMAND under `timeout`, output in $WORK/NAME.{out,err};
# recorded ok, failed (exit status and the last lines of its error output) or skipped (the time is spent).
step() {
  local name="$1" limit="$2"
  shift 2
  local extra=()
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift
  local file="$WORK/${name//\//_}"
  local left
  left=$(remaining)
  if [ "$left" -lt 10 ]; then
    if [ "$SECTION_END" -gt 0 ] && [ "$SECTION_END" -lt $((START + TOTAL_S)) ]; then
      record "$name" skipped "this section's time is spent" 0 "${extra[@]}"
    else
      record "$name" skipped "the run's $TOTAL_S s are spent" 0 "${extra[@]}"
    fi
    echo "device-check: $name: skipped (time spent)"
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit="$left"
  local t0 rc reason
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$file.out" 2>"$file.err"
  rc=$?
  local secs
  local ms=$((($(date +%s%N) - t0) / 1000000))
  secs=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  if [ "$rc" = 0 ]; then
    record "$name" ok "" "$secs" "out=$file.out" "${extra[@]}"
    echo "device-check: $name: ok (${secs}s)"
    return 0
  fi
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    reason="timed out after ${limit}s"
  else
    reason="exit $rc: $( (cat "$file.err"; tail -n 3 "$file.out") | grep -v '^\s*$' | tail -n 4 | tr '\n' ' ' | cut -c1-600)"
  fi
  record "$name" failed "$reason" "$secs" "out=$file.out" "${extra[@]}"
  echo "device-check: $name: FAILED: $reason"
  return 1
}

skip() { # skip NAME REASON [KEY=VALUE...]
  local name="$1" reason="$2"
  shift 2
  record "$name" skipped "$reason" 0 "$@"
  echo "device-check: $name: skipped: $reason"
}

echo "device-check: $([ "$DRY" = 1 ] && echo "dry run on $DEVICE" || echo "$DEVICE"); work folder $WORK"

# ---- 1. the machine ----------------------------------------------------------------------------------------
if [ "$DRY" = 0 ]; then
  step env/nvidia-smi 20 -- nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,memory.total,driver_version,power.limit --format=csv
  step env/torch 60 -- python3 -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
else
  skip env/nvidia-smi "dry run: no GPU"
  skip env/torch "dry run: no torch"
fi
# ptxas (CUDA toolkit) gives the tuner registers, spills and serialisation warnings; without it the driver
# compiles the PTX and those checks are off.
step env/ptxas 10 -- bash -c 'PATH="$PATH:/usr/local/cuda/bin"; command -v ptxas && ptxas --version | tail -n 2'
step env/host 10 -- bash -c 'echo "cores $(nproc)"; uname -srm; git -C "$0" rev-parse HEAD 2>/dev/null || echo "not a git checkout"' "$ROOT"

# ---- 2. the build ------------------------------------------------------------------------------------------
HAVE_TOOL=1
TOOL_REASON="no $ISATUNE"
if [ "$SKIP_BUILD" = 1 ]; then
  skip build "--skip-build: using $ISATUNE"
else
  # Only the command line tool: the tests and benchmarks would take the 8 minutes on their own.
  step build 300 -- env ISATUNE_DEPS_OPTIONAL=1 ISATUNE_BUILD_TARGETS=isatune ISATUNE_BUILD_DIR="$BUILD_DIR" \
    scripts/build.sh -DISATUNE_BUILD_TESTS=OFF -DISATUNE_BUILD_BENCH=OFF \
    || { HAVE_TOOL=0; TOOL_REASON="the build failed (an older isatune would not be what this checkout says)"; }
fi
[ -x "$ISATUNE" ] || HAVE_TOOL=0
[ "$HAVE_TOOL" = 1 ] || echo "device-check: $TOOL_REASON: every isatune step is skipped"
isatune_step() { # isatune_step NAME LIMIT [KEY=VALUE...] -- ARGS...
  local name="$1" limit="$2"
  shift 2
  local extra=()
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift
  if [ "$HAVE_TOOL" = 0 ]; then
    skip "$name" "$TOOL_REASON" "${extra[@]}"
    return 1
  fi
  step "$name" "$limit" "${extra[@]}" -- "$ISATUNE" "$@"
}
isatune_step devices 30 -- devices --json

# The tuned shapes, problem:budget (the references below time the same ones).
if [ "$DRY" = 1 ]; then
  TUNE_GEMM=("M=64,N=64,K=64:3" "M=96,N=80,K=64:3")
  TUNE_ROWS=("rows=8,N=256:3")
else
  # problem:budget. 4096^3 and 8192^3 (the goals), then Llama-3-8B-like projections (prefill 4096 tokens) and
  # one decode-like skinny GEMM.
  TUNE_GEMM=("M=4096,N=4096,K=4096:45s" "M=8192,N=8192,K=8192:45s" "M=4096,N=14336,K=4096:20s"
             "M=4096,N=4096,K=14336:20s" "M=128,N=4096,K=4096:10s")
  TUNE_ROWS=("rows=16384,N=8192:10s")
fi

# ---- 3. the references: cuBLAS (torch.matmul) and device-to-device copies (torch clone) -------------------
if [ "$DRY" = 1 ]; then
  skip bench/torch "dry run: no torch, no GPU"
else
  bench_args=()
  for entry in "${TUNE_GEMM[@]}"; do bench_args+=(--gemm "${entry%%:*}"); done
  for entry in "${TUNE_ROWS[@]}"; do bench_args+=(--rows "${entry%%:*}"); done
  step bench/torch 90 -- python3 scripts/device_check_bench.py "${bench_args[@]}"
fi

# ---- 4. correctness: every PTX generator on the device, ragged problems, both PTX targets ----------------

# sm_80 code runs on sm_90 hardware too (the driver compiles its PTX); the reference is float64 on the host.
if [ "$DRY" = 1 ]; then
  GEMM_PROBLEMS=("M=67,N=45,K=37" "M=1,N=9,K=17")
  ROW_PROBLEMS=("rows=5,N=33" "rows=3,N=129")
  ATTN_PROBLEMS=("B=1,Hq=2,Hkv=1,Sq=70,Sk=90")
  CHECK_LIMIT=120
else
  GEMM_PROBLEMS=("M=257,N=129,K=77" "M=1,N=777,K=1029" "M=1023,N=1031,K=517")
  ROW_PROBLEMS=("rows=1,N=1" "rows=37,N=1000" "rows=4097,N=4096")
  ATTN_PROBLEMS=("B=1,Hq=4,Hkv=2,Sq=500,Sk=700")
  CHECK_LIMIT=45
fi
ATTN_SIGS=("dtype=bf16,head_dim=128,mask=causal" "dtype=f16,head_dim=64,layout=bhsd")
# The checks stop after CHECK_SECTION_S so that the tuning keeps its time (the rest are recorded skipped).
SECTION_END=$(($(date +%s) + ${CHECK_SECTION_S:-$([ "$DRY" = 1 ] && echo 240 || echo 130)}))
GEMM_SIGS=("a=bf16,b=bf16,cd=bf16,layout=TN" "a=f16,b=f16,cd=f32,layout=NN")
ROW_SIGS=("dtype=bf16" "dtype=f32")
for target in $CHECK_TARGETS; do
  for sig in "${GEMM_SIGS[@]}"; do
    for p in "${GEMM_PROBLEMS[@]}"; do
      isatune_step "check/gemm/$target/$sig/$p" "$CHECK_LIMIT" kind=check generator=gemm target="$target" \
        signature="$sig" problem="$p" -- run gemm --target "$target" --device "$DEVICE" --sig "$sig" --problem "$p" --json
    done
  done
  for g in softmax rmsnorm layernorm; do
    for sig in "${ROW_SIGS[@]}"; do
      for p in "${ROW_PROBLEMS[@]}"; do
        isatune_step "check/$g/$target/$sig/$p" "$CHECK_LIMIT" kind=check generator="$g" target="$target" \
          signature="$sig" problem="$p" -- run "$g" --target "$target" --device "$DEVICE" --sig "$sig" --problem "$p" --json
      done
    done
  done
  for sig in "${ATTN_SIGS[@]}"; do # flash-attention forward (sm_90a: wgmma + TMA; sm_80: mma.sync)
    for p in "${ATTN_PROBLEMS[@]}"; do
      isatune_step "check/attention/$target/$sig/$p" "$CHECK_LIMIT" kind=check generator=attention target="$target" \
        signature="$sig" problem="$p" -- run attention --target "$target" --device "$DEVICE" --sig "$sig" --problem "$p" --json
    done
  done
done
# The sm_90a attention kernel against PyTorch's scaled_dot_product_attention on the same GPU (float32
# reference; GQA, ragged Sq != Sk, causal bottom-right): scripts/device_check_attention.py. The third case is the
# heaviest ping-pong point (pingpong=1: named barriers between the two consumer warpgroups; --param first so
# that its step name differs from the first case's in its first 60 characters).
SDPA_CASES=("--causal --dtype bf16 --head-dim 128 --problem B=2,Hq=8,Hkv=2,Sq=1000,Sk=1100"
            "--dtype f16 --head-dim 64 --layout bhsd --problem B=1,Hq=4,Hkv=4,Sq=777,Sk=1029 --param consumers=1,block_n=64,stages=3,overlap=0,reg_split=24/240"
            "--param pingpong=1,consumers=2,block_n=128,stages=2,overlap=1,reg_split=24/240 --causal --dtype bf16 --head-dim 128 --problem B=2,Hq=8,Hkv=2,Sq=1000,Sk=1100")
SDPA_SKIP=""
if [ "$DRY" = 1 ]; then # the same path on the emulator with a CPU torch, when python3 has one
  SDPA_CASES=("--causal --dtype bf16 --head-dim 64 --problem B=1,Hq=2,Hkv=1,Sq=70,Sk=90 --param consumers=1,block_n=32,stages=2,overlap=1,reg_split=24/240"
              "--param pingpong=1,consumers=2,block_n=32,stages=2,overlap=1,reg_split=24/240 --causal --dtype bf16 --head-dim 64 --problem B=1,Hq=2,Hkv=1,Sq=70,Sk=90")
  python3 -c 'import numpy, torch' >/dev/null 2>&1 || SDPA_SKIP="dry run: python3 has no torch (or numpy)"
elif [ "${DEVICE#cuda}" = "$DEVICE" ]; then
  SDPA_SKIP="device $DEVICE is not a CUDA GPU (torch's reference runs on cuda)"
elif ! python3 -c 'import sys, numpy, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  SDPA_SKIP="torch (with numpy) and a CUDA GPU are not available to python3"
fi
if [ -z "$SDPA_SKIP" ] && [ "$HAVE_TOOL" = 0 ]; then
  SDPA_SKIP="$TOOL_REASON"
fi
for c in "${SDPA_CASES[@]}"; do
  name="check/attention-sdpa/sm_90a/$(echo "$c" | tr -d ' -' | cut -c1-60)"
  if [ -n "$SDPA_SKIP" ]; then
    skip "$name" "$SDPA_SKIP" kind=check generator=attention-sdpa target=sm_90a signature="$c" problem=torch-reference
  else
    # shellcheck disable=SC2086 # the case's words are options
    step "$name" 90 kind=check generator=attention-sdpa target=sm_90a signature="$c" problem=torch-reference -- \
      python3 scripts/device_check_attention.py "$ISATUNE" --device "$DEVICE" $c
  fi
done

SECTION_END=0

# ---- 5. tuning: GEMM (square and LLM shapes) and the row kernels, short budgets -------------------------
budget_limit() { # the step's wall limit for a tuner budget: twice the device budget, plus compile time
  case "$1" in *s) echo $(( ${1%s} * 3 / 2 + 20 )) ;; *) echo $(( $1 * 40 + 60 )) ;; esac
}
TUNE_SIG_GEMM="a=bf16,b=bf16,cd=bf16,layout=TN"
tune_gemm() { # tune_gemm PROBLEM:BUDGET
  local p="${1%%:*}" b="${1##*:}"
  isatune_step "tune/gemm/$p" "$(budget_limit "$b")" kind=tune generator=gemm target="$TUNE_TARGET" signature="$TUNE_SIG_GEMM" \
    problem="$p" budget="$b" -- tune gemm --target "$TUNE_TARGET" --device "$DEVICE" --sig "$TUNE_SIG_GEMM" --problem "$p" \
    --budget "$b" --db "$DB" --json
}
tune_rows() { # tune_rows GENERATOR PROBLEM:BUDGET
  local g="$1" p="${2%%:*}" b="${2##*:}"
  isatune_step "tune/$g/$p" "$(budget_limit "$b")" kind=tune generator="$g" target="$TUNE_TARGET" signature=dtype=bf16 \
    problem="$p" budget="$b" -- tune "$g" --target "$TUNE_TARGET" --device "$DEVICE" --sig dtype=bf16 --problem "$p" \
    --budget "$b" --db "$DB" --json
}
# The goals first (4096^3, 8192^3, the row kernels), then the other shapes while time remains.
for entry in "${TUNE_GEMM[@]:0:2}"; do tune_gemm "$entry"; done
for g in softmax rmsnorm; do
  for entry in "${TUNE_ROWS[@]}"; do tune_rows "$g" "$entry"; done
done
for entry in "${TUNE_GEMM[@]:2}"; do tune_gemm "$entry"; done

# ---- 6. the one JSON file ---------------------------------------------------------------------------------
python3 scripts/device_check_report.py --steps "$STEPS" --mode "$([ "$DRY" = 1 ] && echo dry-run || echo gpu)" \
  --device "$DEVICE" --started "$START" --out "$OUT"
rc=$?
if [ "$rc" != 0 ]; then # the steps as they are, so that nothing measured is lost
  { printf '{"format": "isatune-device-check/1", "error": "device_check_report.py failed (exit %s)", "steps": [' "$rc"
    paste -sd, "$STEPS"
    printf ']}\n'; } >"$OUT"
fi
echo "device-check: $(($(date +%s) - START)) s in all; results in $OUT (work folder $WORK)"
exit $rc
