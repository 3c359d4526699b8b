#!/bin/bash
# A single-node Slurm cluster for CI and trials on one machine (Debian 12, slurm-wlm 22.05, munge), started as root
# without systemd in about a second: munged, slurmctld and slurmd daemonize into pid files under $S, and NGPU fake
# GPUs (character-device clones of /dev/null in gres.conf, which Slurm then hands out through
# CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES). Recipe: ../shared/notes/distributed-tuning.md section 6.
# Stop it with slurm-down.sh (same S). Only one such cluster per machine (ports 6817/6818).
set -euo pipefail
S=${S:-/tmp/slurm-ci}          # state, spool, logs, pid files
NGPU=${NGPU:-4}                # fake GPUs
NCPU=${NCPU:-$(nproc)}         # CPUs to declare; more than nproc needs config_overrides
HOST=$(hostname -s)            # NodeName must be slurmd's short host name
export SLURM_CONF=$S/slurm.conf
mkdir -p "$S"/{state,spool,log,run,dev,munge} /run/munge
chown munge:munge /run/munge "$S/munge"
# slurmd rejects plain files in gres.conf File=; character-device clones of /dev/null pass
for i in $(seq 0 $((NGPU-1))); do [ -c "$S/dev/gpu$i" ] || mknod "$S/dev/gpu$i" c 1 3; done
OVR=; if [ "$NCPU" -gt "$(nproc)" ]; then OVR=SlurmdParameters=config_overrides; fi
cat > "$S/slurm.conf" <<CONF
ClusterName=ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
$OVR
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
GresTypes=gpu
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$NCPU Gres=gpu:$NGPU State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s/dev/gpu[0-%d]\n' "$HOST" "$S" $((NGPU-1)) > "$S/gres.conf"
t0=$(date +%s%N)
[ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create   # the package makes one
runuser -u munge -- munged --pid-file="$S/munge/munged.pid" \
    --log-file="$S/munge/munged.log" --seed-file="$S/munge/munged.seed"
for _ in $(seq 50); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
slurmctld -f "$S/slurm.conf"     # absolute path: the daemons chdir away before reading it
slurmd -f "$S/slurm.conf"
for _ in $(seq 100); do [ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ] && break; sleep 0.1; done
sinfo -N -o '%N %t %c %G'
echo "slurm up in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
[ "$(sinfo -h -N -o %t)" = idle ]
