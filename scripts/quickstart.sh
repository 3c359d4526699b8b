#!/usr/bin/env bash
# The main job on embedded defaults: build, list the targets, assemble the sample kernels in process and
# inspect the vector add (descriptor, metadata, occupancy, disassembly). Outputs go to ./quickstart-out.
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
