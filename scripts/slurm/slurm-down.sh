#!/bin/bash
# Stops what slurm-up.sh started, by the PIDs in its pid files.
S=${S:-/tmp/slurm-ci}
export SLURM_CONF=$S/slurm.conf
# an exited daemon stays a zombie until PID 1 reaps it, and kill -0 still succeeds on it
alive() { [ -r "/proc/$1/stat" ] && ! awk '{exit ($3=="Z")?0:1}' "/proc/$1/stat"; }
pids=$(cat "$S/run/slurmd.pid" "$S/run/slurmctld.pid" 2>/dev/null || true)
mpid=$(cat "$S/munge/munged.pid" 2>/dev/null || true)
scontrol shutdown >/dev/null 2>&1 || { [ -n "$pids" ] && kill $pids 2>/dev/null; }
[ -n "$mpid" ] && kill "$mpid" 2>/dev/null
for pid in $pids $mpid; do
  for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then echo "pid $pid did not stop: SIGKILL"; kill -9 "$pid"; fi
done
rm -f "$S/run/slurmd.pid" "$S/run/slurmctld.pid" "$S/munge/munged.pid"
