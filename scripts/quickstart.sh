#!/usr/bin/env bash
# The main job on embedded defaults: build, list the targets and devices, assemble the sample kernels in
# process, inspect the vector add (descriptor, metadata, occupancy, disassembly) and run it on the CDNA
# emulator with random inputs and a ragged size. Outputs go to ./quickstart-out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
BUILD_DIR="${ISATUNE_BUILD_DIR:-build}"
ISATUNE="$BUILD_DIR/tools/isatune"
mkdir -p quickstart-out
"$ISATUNE" targets
echo
for k in vector_add lds_reduce mfma_tile; do
  "$ISATUNE" asm "tests/fixtures/$k.s" -o "quickstart-out/$k.hsaco"
done
echo
"$ISATUNE" inspect quickstart-out/vector_add.hsaco --disasm
echo
"$ISATUNE" devices
echo
"$ISATUNE" run quickstart-out/vector_add.hsaco --grid 4 --block 256 --arg buf:f32:1000:random \
  --arg buf:f32:1000:random --arg buf:f32:1000:zero:out=quickstart-out/c.bin --arg u32:1000 --strict
