#!/bin/bash
# Scheduling overhead per shard on the one-node Slurm cluster (docs/performance.md, "Distributed tuning"): the
# same SHARDS short shards (selftest, 1 evaluation each, own database) run as a job array on 4 fake GPUs via
# `isatune slurm submit`, and locally 4 at a time (xargs -P 4); overhead per shard = (array - local) / SHARDS;
# and an array of the same shape running `true` (the scheduler alone).
# The array time runs from submit until the merge job has left the queue, so it includes the merge.
# Usage (root, slurm-wlm and munge installed): scripts/bench_slurm_overhead.sh build/tools/isatune [SHARDS=16]
set -euo pipefail
ISATUNE=$(readlink -f "$1")
N=${2:-16}
H=$(cd "$(dirname "$0")" && pwd)
export S NGPU=4 NCPU=4
S=$(mktemp -d /tmp/isatune-slurm-bench.XXXXXX)
chmod 755 "$S"
export SLURM_CONF=$S/slurm.conf
W=$(mktemp -d)
trap 'bash "$H/slurm/slurm-down.sh" >/dev/null 2>&1; rm -rf "$S" "$W"' EXIT
bash "$H/slurm/slurm-up.sh" | tail -1
cd "$W"
for i in $(seq "$N"); do echo "N=$((100 + i))"; done > problems.txt
TUNE=(selftest --target gfx942 --device emu --problems "$W/problems.txt" --strategy exhaustive --budget 1 -j 1)
now() { date +%s%N; }
t0=$(now)
out=$("$ISATUNE" slurm submit --out run --shards "$N" --gpus-per-task 1 --json -- "${TUNE[@]}")
ids=$(echo "$out" | sed -n 's/.*"\(array_job\|merge_job\)": "\([0-9]*\)".*/\2/p' | paste -sd,)
while [ -n "$(squeue -h -j "$ids" 2>/dev/null)" ]; do sleep 0.05; done
t_array=$(( ($(now) - t0) / 1000000 ))
"$ISATUNE" slurm status --out run | tail -1
t0=$(now)
seq 0 $((N - 1)) | xargs -P 4 -I{} "$ISATUNE" tune "${TUNE[@]}" --shard {}/"$N" --db "local-{}.sqlite" >/dev/null
t_local=$(( ($(now) - t0) / 1000000 ))
# The scheduler alone: the same array shape running `true` (start, GPU binding, end of each task).
mkdir -p logs
t0=$(now)
jid=$(sbatch --parsable --array=0-$((N - 1)) -n1 --gpus-per-task=1 -o "logs/%a.out" --wrap true)
while [ -n "$(squeue -h -j "$jid" 2>/dev/null)" ]; do sleep 0.05; done
t_true=$(( ($(now) - t0) / 1000000 ))
echo "$N array tasks of \`true\` on 4 fake GPUs: ${t_true} ms ($(( t_true * 4 / N )) ms of scheduling per task slot)"
echo "$N shards: job array + merge ${t_array} ms, locally 4 at a time ${t_local} ms;" \
     "scheduling overhead $(( (t_array - t_local) / N )) ms per shard"
