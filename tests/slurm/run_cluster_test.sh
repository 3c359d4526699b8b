#!/bin/bash
# Distributed tuning on a real one-node Slurm cluster (slurm-wlm + munge, four fake GPUs), started here as root:
# a job array of four shards tunes four problems on the emulator, shard 1 is killed mid-run, the merge job
# (afterany) reports it unfinished, `isatune slurm resubmit` runs shard 1 alone (it resumes from its database),
# and the final merged database holds exactly the evaluations of one process that tuned every problem, with
# `db verify` (integrity, foreign keys, every blob's SHA-256) passing and the same winners.
# Usage: run_cluster_test.sh ISATUNE. Exit 0: passed, 77: skipped (reason printed), other: failed.
set -uo pipefail
ISATUNE=${1:?usage: run_cluster_test.sh path/to/isatune}
HERE=$(cd "$(dirname "$0")" && pwd)
UP=$HERE/../../scripts/slurm/slurm-up.sh
DOWN=$HERE/../../scripts/slurm/slurm-down.sh
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (slurmctld, slurmd and munged are started here without systemd)"
for p in slurmctld slurmd munged sbatch squeue scancel sinfo scontrol sqlite3 mknod runuser; do
  command -v "$p" >/dev/null 2>&1 || skip "$p is not installed (scripts/deps.sh installs slurm-wlm and munge where it can)"
done
exec 9>/tmp/isatune-slurm-ci.lock
flock -w 300 9 || skip "another Slurm cluster test held /tmp/isatune-slurm-ci.lock for 5 minutes"
if command -v ss >/dev/null 2>&1 && ss -ltn 2>/dev/null | grep -qE ':681[78] '; then
  skip "a Slurm daemon already listens on port 6817/6818 here (one such cluster per machine)"
fi

export S NGPU=4 NCPU=4
S=$(mktemp -d /tmp/isatune-slurm.XXXXXX)
chmod 755 "$S" # munged (user munge) writes under it
export SLURM_CONF=$S/slurm.conf
W=$(mktemp -d /tmp/isatune-slurm-test.XXXXXX)
trap 'bash "$DOWN" >/dev/null 2>&1; rm -rf "$S" "$W"' EXIT
t0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
bash "$UP" > "$W/up.log" 2>&1 || { cat "$W/up.log" "$S"/log/*.log 2>/dev/null | tail -30; fail "the cluster did not start"; }
echo "cluster up at $(ms) ms"

# Four problems of ragged, fresh random sizes.
for _ in 1 2 3 4; do echo "rows=$((1 + RANDOM % 7)),N=$((33 + RANDOM % 400))"; done > "$W/problems.txt"
TUNE=(rmsnorm --target gfx942 --device emu --problems "$W/problems.txt" --strategy exhaustive --budget 16 -j 1
      --timeout 60)
# Readers wait for a writer's lock: where the database runs in rollback-journal mode (ISATUNE_DB_JOURNAL=delete, or
# a network/FUSE filesystem such as a CI container's), a reader without a timeout gets "database is locked".
count() { sqlite3 -cmd ".timeout 10000" "$1" "SELECT count(*) FROM measurements" 2>/dev/null || echo 0; }
wait_jobs() { # until squeue holds none of the given jobs
  for _ in $(seq 1200); do [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0; sleep 0.1; done
  fail "jobs $1 still queued after 120 s: $(squeue -j "$1")"
}
jfield() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^\",]*\)\"\{0,1\}.*/\1/p" | head -1; }

cd "$W"
"$ISATUNE" slurm submit --out run --shards 4 --gpus-per-task 1 --json -- "${TUNE[@]}" > submit.json \
  || { cat submit.json; fail "slurm submit"; }
array=$(jfield array_job < submit.json)
merge=$(jfield merge_job < submit.json)
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids in $(cat submit.json)"
echo "submitted array $array and merge $merge at $(ms) ms"

# Kill shard 1 once it has committed a few evaluations (of 16). So that a fast machine cannot finish the shard
# between the poll and the kill, the test first takes the shard database's write lock (BEGIN IMMEDIATE, held by a
# background sqlite3): the shard's next commit waits on it (its busy timeout is 30 s) until the kill lands. The
# lock is let go once the array has ended, so the merge job reads the killed shard as a user's merge would.
for _ in $(seq 2400); do [ "$(count run/shards/shard-1.sqlite)" -ge 3 ] && break; sleep 0.05; done
mkfifo "$W/lock.fifo"
sqlite3 run/shards/shard-1.sqlite < "$W/lock.fifo" > "$W/lock.log" 2>&1 &
lock_holder=$!
exec 8> "$W/lock.fifo"
printf '.timeout 10000\nBEGIN IMMEDIATE;\n' >&8
locked=0
for _ in $(seq 200); do # until a second writer is refused: the holder has the lock
  if ! sqlite3 run/shards/shard-1.sqlite "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1; then locked=1; break; fi
  sleep 0.05
done
[ "$locked" = 1 ] || fail "could not hold shard 1's write lock"
n_at_kill=$(count run/shards/shard-1.sqlite)
scancel --signal=KILL "${array}_1" || fail "scancel ${array}_1"
echo "killed shard 1 with $n_at_kill measurements at $(ms) ms"
wait_jobs "$array"
[ "$(count run/shards/shard-1.sqlite)" = "$n_at_kill" ] \
  || fail "shard 1 committed past the held lock ($(count run/shards/shard-1.sqlite) measurements, $n_at_kill at the kill)"
printf 'ROLLBACK;\n' >&8
exec 8>&-
wait "$lock_holder" || { cat "$W/lock.log"; fail "the sqlite3 holding shard 1's lock failed"; }
wait_jobs "$merge"
[ "$n_at_kill" -ge 3 ] && [ "$n_at_kill" -lt 16 ] || fail "shard 1 had $n_at_kill measurements when killed (want 3..15)"

"$ISATUNE" slurm status --out run --json > status1.json
grep -q '"failed": 1' status1.json || { cat status1.json; fail "status does not show one failed shard"; }
grep -q '"done": 3' status1.json || { cat status1.json; fail "status does not show three shards done"; }
first_merge_log=$(ls run/logs/merge-*.out)
grep -q "unfinished (killed or still running): 1" "$first_merge_log" \
  || { cat "$first_merge_log"; fail "the first merge did not report shard 1 unfinished"; }

"$ISATUNE" slurm resubmit --out run --json > resubmit.json || { cat resubmit.json; fail "slurm resubmit"; }
grep -q '"shards": \[' resubmit.json && tr -d ' \n' < resubmit.json | grep -q '"shards":\[1\]' \
  || { cat resubmit.json; fail "resubmit did not send shard 1 alone"; }
array2=$(jfield array_job < resubmit.json)
merge2=$(jfield merge_job < resubmit.json)
wait_jobs "$array2,$merge2"
echo "resubmitted shard 1 and merged at $(ms) ms"
"$ISATUNE" slurm status --out run --json > status2.json
grep -q '"done": 4' status2.json || { cat status2.json; fail "not every shard is done after the resubmission"; }
# The resubmitted shard resumed: its second run served what the first had committed from the database.
runs1=$(sqlite3 run/shards/shard-1.sqlite "SELECT count(*) FROM runs WHERE shard = '1/4'")
[ "$runs1" = 2 ] || fail "shard 1 has $runs1 runs (want the killed one and the resumed one)"
[ "$(count run/shards/shard-1.sqlite)" -eq 16 ] || fail "shard 1 holds $(count run/shards/shard-1.sqlite) measurements, not 16"
m2=$(ls -t run/logs/merge-*.out | head -1)
grep -q "shards: 4 of 4 done" "$m2" || { cat "$m2"; fail "the final merge does not report 4 of 4 shards done"; }
"$ISATUNE" db verify --db run/merged.sqlite || fail "db verify of the merged database"
# Every run row of a shard names its shard, its array job and the fake GPU Slurm gave it.
bad=$(sqlite3 run/merged.sqlite "SELECT count(*) FROM runs WHERE shard NOT LIKE '_/4' OR scheduler_job NOT LIKE
  'slurm %CUDA_VISIBLE_DEVICES=_' OR device_uuid <> 'emu-gfx942-0' OR device_id IS NULL")
[ "$bad" = 0 ] || fail "$bad run rows lack the shard, job or device identity: $(sqlite3 run/merged.sqlite 'SELECT * FROM runs')"

# The reference: one process tuning every problem, no scheduler.
"$ISATUNE" tune "${TUNE[@]}" --db ref.sqlite > ref.log 2>&1 || { cat ref.log; fail "the reference tune"; }
# Emulator estimates of one variant differ between processes in the last bits (about 1e-13 relative), so times
# are compared to 10 significant digits.
evals() {
  sqlite3 "$1" "SELECT v.parameters, m.problem, m.status, printf('%.9e', m.median_ms), m.device_kind, v.code_object
                FROM measurements m JOIN variants v ON v.id = m.variant_id ORDER BY 1, 2, 3, 4"
}
evals ref.sqlite > ref.txt
evals run/merged.sqlite > merged.txt
[ "$(wc -l < ref.txt)" -eq 64 ] || fail "the reference holds $(wc -l < ref.txt) evaluations, not 64 (16 x 4 problems)"
diff ref.txt merged.txt > evals.diff || { head -20 evals.diff; fail "the merged database differs from the reference"; }
# The same winners: per problem the same best time, and the merged winner is a variant the reference measured at
# that time (a different variant only where two tie to 10 digits).
winners() { sqlite3 "$1" "SELECT problem, printf('%.9e', median_ms) FROM best ORDER BY 1"; }
[ "$(winners ref.sqlite)" = "$(winners run/merged.sqlite)" ] || fail "the best times differ from the reference's"
[ "$(sqlite3 ref.sqlite "SELECT count(*) FROM best")" -eq 4 ] || fail "the reference has no winner for every problem"
other=$(sqlite3 run/merged.sqlite "ATTACH 'ref.sqlite' AS r; SELECT count(*) FROM best b JOIN variants v ON v.id = b.variant_id
  WHERE NOT EXISTS (SELECT 1 FROM r.measurements m JOIN r.variants rv ON rv.id = m.variant_id JOIN r.best rb ON
  rb.problem = b.problem WHERE rv.parameters = v.parameters AND m.problem = b.problem AND
  printf('%.9e', m.median_ms) = printf('%.9e', rb.median_ms))")
[ "$other" = 0 ] || fail "$other merged winners are not winners of the reference"
# Idempotent: merging the shards again adds nothing.
"$ISATUNE" db merge run/merged.sqlite run/shards/shard-{0,1,2,3}.sqlite --json > again.json || { cat again.json; fail "re-merge"; }
grep -q '"measurements_added": 0,' again.json || { cat again.json; fail "a second merge added measurements"; }
echo "PASSED in $(ms) ms: 4 shards (one killed and resumed), 64 evaluations merged equal to the reference"
