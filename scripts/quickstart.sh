#!/usr/bin/env bash
# The main job on embedded defaults (the emulator device and a local SQLite file): build; list the targets,
# devices and generators; assemble the hand-written sample kernels in process and inspect one; generate a GEMM
# variant, run and check it on the CDNA emulator; tune a small bf16 GEMM and an f16 softmax shape on the
# emulator into ./quickstart-out/tuning.db (a rerun resumes: what is recorded is not measured again); then the
# same for NVIDIA on the PTX emulator (an sm_90a wgmma + TMA GEMM checked and tuned, an sm_80 softmax tuned);
# and show the best variants. Outputs go to ./quickstart-out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
BUILD_DIR="${ISATUNE_BUILD_DIR:-build}"
ISATUNE="$BUILD_DIR/tools/isatune"
OUT=quickstart-out
mkdir -p "$OUT"
"$ISATUNE" targets
echo
for k in vector_add lds_reduce mfma_tile; do
  "$ISATUNE" asm "tests/fixtures/$k.s" -o "$OUT/$k.hsaco"
done
echo
"$ISATUNE" inspect "$OUT/vector_add.hsaco" --disasm
echo
"$ISATUNE" devices
echo
"$ISATUNE" run "$OUT/vector_add.hsaco" --grid 4 --block 256 --arg buf:f32:1000:random \
  --arg buf:f32:1000:random --arg buf:f32:1000:zero:out="$OUT/c.bin" --arg u32:1000 --strict
echo
"$ISATUNE" space
echo
GEMM_SIG=a=bf16,b=bf16,cd=f32,layout=NT
"$ISATUNE" gen gemm --target gfx942 --sig "$GEMM_SIG" --param tile_m=64,tile_n=64 -o "$OUT/gemm.hsaco" \
  --problem M=4096,N=4096,K=4096
echo
"$ISATUNE" run gemm --target gfx942 --sig "$GEMM_SIG" --param tile_m=64,tile_n=64 --problem M=100,N=72,K=33
echo
"$ISATUNE" tune gemm --target gfx942 --device emu --sig "$GEMM_SIG" --problem M=128,N=128,K=64 --budget 16 \
  --db "$OUT/tuning.db"
echo
"$ISATUNE" tune softmax --target gfx942 --device emu --sig dtype=f16 --problem rows=8,N=3000 --budget 16 \
  --db "$OUT/tuning.db"
echo
# NVIDIA, on the PTX emulator (no GPU needed): a wgmma + TMA GEMM for sm_90a checked and tuned, an sm_80 softmax
# tuned, into the same database. With ptxas present (CUDA toolkit) every candidate is also compiled by it.
"$ISATUNE" run gemm --target sm_90a --device emu:sm_90a --sig "$GEMM_SIG" --problem M=130,N=70,K=100
echo
"$ISATUNE" tune gemm --target sm_90a --device emu:sm_90a --sig a=bf16,b=bf16,cd=bf16,layout=TN \
  --problem M=256,N=256,K=128 --budget 16 --db "$OUT/tuning.db"
echo
"$ISATUNE" tune softmax --target sm_80 --device emu:sm_80 --sig dtype=f16 --problem rows=8,N=3000 --budget 16 \
  --db "$OUT/tuning.db"
echo
"$ISATUNE" db best --db "$OUT/tuning.db"
