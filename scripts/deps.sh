#!/usr/bin/env bash
# Installs what isatune needs from Debian 12 packages, only what is missing. Safe to run again. Offline (apt
# unreachable) it succeeds when every required package is already there, and fails naming what is missing.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# The newest LLVM with the AMDGPU target that the registry has (gfx950 needs >= 20; 19 is the floor).
pick_llvm() {
  for v in 22 21 20 19; do
    if dpkg -s "llvm-$v-dev" >/dev/null 2>&1 && dpkg -s "liblld-$v-dev" >/dev/null 2>&1; then echo "$v"; return; fi
  done
  for v in 22 21 20 19; do
    if apt-cache show "llvm-$v-dev" >/dev/null 2>&1 && apt-cache show "liblld-$v-dev" >/dev/null 2>&1; then
      echo "$v"; return
    fi
  done
  echo ""
}

base=(cmake ninja-build g++ ccache pkg-config libsqlite3-dev sqlite3 libcli11-dev nlohmann-json3-dev libgtest-dev
      libgmock-dev libbenchmark-dev)
optional=(libamd-comgr-dev)
# The one-node Slurm cluster of tests/slurm/run_cluster_test.sh (skipped, with the reason printed, without them).
optional+=(slurm-wlm munge)

updated=0
apt_update_once() {
  if [ "$updated" -eq 0 ]; then
    updated=1
    # Offline machines (no registry reachable) keep the lists they have; what is installed is enough.
    $SUDO apt-get update -qq >/dev/null 2>&1 || echo "deps: apt-get update failed (offline?); using the package lists there are" >&2
  fi
}

LLVM_VERSION="$(pick_llvm)"
if [ -z "$LLVM_VERSION" ]; then
  apt_update_once
  LLVM_VERSION="$(pick_llvm)"
fi
if [ -z "$LLVM_VERSION" ]; then
  echo "deps: no LLVM 19..22 with lld found in the package registry" >&2
  exit 1
fi
llvm=("llvm-$LLVM_VERSION" "llvm-$LLVM_VERSION-dev" "liblld-$LLVM_VERSION-dev" "lld-$LLVM_VERSION"
      "clang-$LLVM_VERSION" "libclang-rt-$LLVM_VERSION-dev")

missing=()
for p in "${base[@]}" "${llvm[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  apt_update_once
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; then
    echo "deps: cannot install ${missing[*]} (no registry reachable?)" >&2
    exit 1
  fi
fi
for p in "${optional[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    apt_update_once
    apt-cache show "$p" >/dev/null 2>&1 || { echo "deps: optional package $p is not available; what needs it stays off or is skipped"; continue; }
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$p" >/dev/null 2>&1 \
      || echo "deps: optional package $p is not available; what needs it stays off or is skipped"
  fi
done
# Optional packages for the report, the Python package and their tests: absent, what needs them is skipped.
declare -A optional_why=(
  [chromium]="the report test (headless Chromium) is skipped"
  [libjs-chart.js]="isatune report cannot write HTML (only --json); its test is skipped"
  [zlib1g-dev]="the report test does not check the screenshot's pixels"
  [python3-dev]="the Python package is not built"
  [python3-pybind11]="the Python package is not built"
  [python3-numpy]="the Python package's tests are skipped"
  [python3-torch]="the Python package's PyTorch tests are skipped"
  [python3-pip]="pip install . of the Python package is not possible"
  [python3-venv]="no virtual environment for pip install . of the Python package"
)
for p in chromium libjs-chart.js zlib1g-dev python3-dev python3-pybind11 python3-numpy python3-torch python3-pip \
         python3-venv; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    apt_update_once
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$p" >/dev/null 2>&1 \
      || echo "deps: optional package $p is not available: ${optional_why[$p]}"
  fi
done
echo "deps: ready (LLVM $LLVM_VERSION)"
