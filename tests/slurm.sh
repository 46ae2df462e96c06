#!/usr/bin/env bash
# slurm.sh -- the Snakemake workflow run through a real Slurm cluster: one node on localhost,
# started by this test from Debian's slurm-wlm and munge (a munge key and a minimal slurm.conf
# in the work folder; proctrack/linuxproc and task/none, so no cgroups; no accounting database:
# sacct reads the job completion log, `sacct -c`). Nine samples are filtered and classified
# with workflows/snakemake/profiles/slurm (sbatch; two jobs of 2 CPUs at a time on a node of 4),
# then checked: every job went through Slurm with the CPUs and memory its rule declares, every
# output equals the local executor's, a sample with a truncated input fails its jobs (Snakemake
# says so, exit 1; the others go on: the profile keeps going) and leaves no output, and the rerun
# after fixing it runs only that sample's jobs.
# The cluster is stopped and its files removed at the end whatever happens, and the test checks
# that no process, socket or port of it is left.
# Needs root (slurmd starts jobs as their user) and the packages (quickstart test installs
# them); otherwise one skipped case. TAP-like output as tests/cli.sh; run by `make check` or by
# hand: tests/slurm.sh (KEEP=1 keeps the work folder; the cluster is stopped anyway).
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
profile=$srcdir/../workflows/snakemake/profiles/slurm
snakefile=$srcdir/../workflows/snakemake/Snakefile
skip_all() { echo "ok 1 - Slurm cluster # SKIP $1"; echo "1..1"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip_all "not root (slurmd runs jobs as their user)"
export PATH=$PATH:/usr/sbin
for tool in munged slurmctld slurmd sbatch scontrol sinfo sacct snakemake wgsim samtools; do
  command -v $tool > /dev/null || skip_all "$tool not installed (apt-get install slurm-wlm munge snakemake samtools)"
done
case $SBF in /*) ;; *) SBF=$PWD/$SBF ;; esac
cd "$work" || exit 1
export XDG_CACHE_HOME=$work/cache
t_start=$(date +%s)

# ---- the cluster ----------------------------------------------------------------------------
C=$work/cluster
mkdir -p "$C/state" "$C/spool" && chmod 700 "$C"
export SLURM_CONF=$C/slurm.conf
# ports from this process's number, so that two runs at once do not collide
port1=$((16000 + ($$ * 2) % 16000))
port2=$((port1 + 1))
# 4 CPUs whatever the machine has (config_overrides): two jobs of 2 threads at once, so that
# the CPUs a job asks for (2 for screening, 1 for the build) are not Slurm's default of 1
cpus=4
mem=$(awk '/^MemTotal/ { print int($2 / 1024) - 512 }' /proc/meminfo)
{
  echo "ClusterName=sbftest"
  echo "SlurmctldHost=localhost"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "SlurmctldPort=$port1"
  echo "SlurmdPort=$port2"
  echo "AuthType=auth/munge"
  echo "CredType=cred/munge"
  echo "AuthInfo=socket=$C/munge.sock"
  echo "StateSaveLocation=$C/state"
  echo "SlurmdSpoolDir=$C/spool"
  echo "SlurmctldPidFile=$C/slurmctld.pid"
  echo "SlurmdPidFile=$C/slurmd.pid"
  echo "SlurmctldLogFile=$C/slurmctld.log"
  echo "SlurmdLogFile=$C/slurmd.log"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "JobCompType=jobcomp/filetxt"
  echo "JobCompLoc=$C/jobcomp.txt"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core_Memory"
  echo "SchedulerType=sched/backfill"
  echo "MpiDefault=none"
  echo "ReturnToService=2"
  echo "MinJobAge=600"
  echo "SlurmdParameters=config_overrides"
  echo "NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN"
  echo "PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP"
} > "$SLURM_CONF"
stopped=0
stop_cluster() {
  [ $stopped = 1 ] && return
  stopped=1
  local all
  all=$(cat "$C"/munged.pid "$C"/slurmctld.pid "$C"/slurmd.pid 2> /dev/null)
  echo "$all" > "$work/cluster.pids"
  # wait_gone SECONDS PID...: until none of the PIDs is alive, at most SECONDS
  wait_gone() {
    local n=$(($1 * 5)) p alive
    shift
    for _ in $(seq $n); do
      alive=0
      for p in "$@"; do kill -0 "$p" 2> /dev/null && alive=1; done
      [ $alive = 0 ] && return 0
      sleep 0.2
    done
    return 1
  }
  scontrol shutdown > /dev/null 2>&1
  wait_gone 10 $(cat "$C"/slurmctld.pid "$C"/slurmd.pid 2> /dev/null)
  kill $all 2> /dev/null   # munged, and anything shutdown missed
  wait_gone 5 $all || { kill -9 $all 2> /dev/null; wait_gone 5 $all; }
}
trap 'stop_cluster; [ -n "${KEEP:-}" ] || rm -rf "$work" "$tap_cache"' EXIT
head -c 1024 /dev/urandom > "$C/munge.key" && chmod 400 "$C/munge.key"
munged --force --key-file="$C/munge.key" --socket="$C/munge.sock" --pid-file="$C/munged.pid" \
  --log-file="$C/munged.log" --seed-file="$C/munged.seed" 2> "$C/munged.err" ||
  { echo "Bail out! munged did not start: $(cat "$C/munged.err")"; exit 1; }
slurmctld -i 2> "$C/slurmctld.err" ||
  { echo "Bail out! slurmctld did not start: $(cat "$C/slurmctld.err"; tail -n 3 "$C/slurmctld.log")"; exit 1; }
slurmd -N localhost 2> "$C/slurmd.err" ||
  { echo "Bail out! slurmd did not start: $(cat "$C/slurmd.err"; tail -n 3 "$C/slurmd.log")"; exit 1; }
up=0
for _ in $(seq 100); do
  [ "$(sinfo -h -N -o %T 2> /dev/null)" = idle ] && { up=1; break; }
  sleep 0.2
done
if [ $up = 1 ]; then ok "a one-node Slurm cluster is up (munged, slurmctld, slurmd)"; else
  not_ok "a one-node Slurm cluster is up" "sinfo: $(sinfo -h -N 2>&1)" "$(tail -n 5 "$C/slurmctld.log")"
  tap_end
  exit
fi

# ---- nine samples: wgsim pairs from the genome slices, one with a truncated input --------------
mkdir reads good
for g in human_slice ecoli_slice lambda; do zcat "$data/$g.fa.gz" > $g.fa; done
samples=(S1 S2 S3 S4 S5 S6 S7 S8 S9)
bad=S5
for i in "${!samples[@]}"; do
  s=${samples[$i]}
  : > reads/${s}_1.fq
  : > reads/${s}_2.fq
  for g in human_slice ecoli_slice lambda; do
    wgsim -N $((20 + 10 * i)) -1 100 -2 100 -e 0.005 -r 0.001 -S $((i * 10 + ${#g})) $g.fa a.fq b.fq > /dev/null 2>&1
    cat a.fq >> reads/${s}_1.fq
    cat b.fq >> reads/${s}_2.fq
  done
  gzip -n reads/${s}_1.fq reads/${s}_2.fq
done
# good/ holds every sample intact; reads/ the same with S5's mate 2 cut in half
for s in "${samples[@]}"; do cp reads/${s}_1.fq.gz reads/${s}_2.fq.gz good/; done
head -c $(($(stat -c %s good/${bad}_2.fq.gz) / 2)) good/${bad}_2.fq.gz > reads/${bad}_2.fq.gz
config() {   # config DIR: the workflow's configuration, the reads in DIR
  echo "sbf: $SBF"
  echo "references: {human: $data/human_slice.fa.gz, ecoli: $data/ecoli_slice.fa.gz, lambda: $data/lambda.fa.gz}"
  echo "samples:"
  for s in "${samples[@]}"; do echo "  $s: {r1: $1/${s}_1.fq.gz, r2: $1/${s}_2.fq.gz}"; done
  echo "steps: [filter, classify]"
  echo "remove: human"
  echo "threads: 2"
  echo "build_threads: 1"
  echo "mem_mb: 300"
  echo "build_mem_mb: 400"
  echo "runtime: 10"
  echo "gpus: 0"
}
config "$work/reads" > cluster.yaml
config "$work/good" > local.yaml

# ---- the local executor: the reference outputs (every sample intact) ----------------------------
snakemake --cores 2 -s "$snakefile" --configfile local.yaml --directory local > local.log 2>&1
check "the local executor runs the workflow (the reference)" test $? -eq 0

# ---- through Slurm, S5's mate 2 truncated ----------------------------------------------------
# CI=true: Snakemake 7 asks for job states every second instead of every 10 (its executors'
# sleep()), which would make this test wait 10 s per round of two jobs
smk_slurm() { CI=true snakemake -s "$snakefile" --configfile cluster.yaml --directory cl --profile "$profile" --jobs 2 \
  --latency-wait 5; }
# how many jobs Slurm runs at once, sampled while the workflow runs
(while :; do squeue -h -t R 2> /dev/null | wc -l; sleep 0.1; done) > running.txt &
sampler=$!
smk_slurm > cluster1.log 2>&1
status=$?
kill $sampler 2> /dev/null
wait $sampler 2> /dev/null
check "through Slurm, with a truncated input: snakemake exits 1" test $status -eq 1
reported() { [ "$(grep -A 4 "^Error in rule sbf_\(filter\|classify\):" cluster1.log | grep -c "output: results/[a-z]*/${bad}[_.]")" -eq 2 ]; }
check "... and reports both failed jobs (filter, classify), naming the sample" reported
r=cl/results
check "... the failed sample left no output and no temporary file" \
  test -z "$(find $r/clean $r/filter $r/classify -name "$bad*" 2> /dev/null)" -a -z "$(find $r -name '*.tmp.*')"
check "... sbf's message names the truncated file" grep -rqs "reads/${bad}_2.fq.gz" $r/logs/filter/$bad.log $r/logs/classify/$bad.log
ran_first=$(grep -c '^JobId=' "$C/jobcomp.txt")

# ---- fixed, run again: only S5's jobs ------------------------------------------------------------
cp good/${bad}_2.fq.gz reads/${bad}_2.fq.gz
smk_slurm > cluster2.log 2>&1
check "after fixing the input, the rerun succeeds" test $? -eq 0
new_jobs=$(tail -n +$((ran_first + 1)) "$C/jobcomp.txt")
check "... submitting to Slurm only the fixed sample's two jobs" test \
  "$(grep -c '^JobId=' <<< "$new_jobs")" -eq 2 -a "$(grep -c " Name=sbf-sbf_filter \| Name=sbf-sbf_classify " <<< "$new_jobs")" -eq 2 -a \
  "$(grep -A 8 "^rule sbf_" cluster2.log | grep -c "sample=$bad")" -eq 2 -a "$(grep -c "^rule sbf_" cluster2.log)" -eq 2

# ---- every job through Slurm, with its rule's resources --------------------------------------
jobs=$(grep -c '^JobId=' "$C/jobcomp.txt")
done_ok=$(grep -c 'JobState=COMPLETED' "$C/jobcomp.txt")
check "Slurm completed every job, the build and 2 per sample ($done_ok), and ran $jobs" test "$done_ok" -eq 19 -a "$jobs" -eq 21
check "... the 2 that failed were S5's, on its truncated input" test \
  "$(grep -c 'JobState=FAILED' "$C/jobcomp.txt")" -eq 2 -a "$(grep -c 'JobState=FAILED' <(head -n "$ran_first" "$C/jobcomp.txt"))" -eq 2
check "sacct -c lists them all" test "$(sacct -c -n -X -P -o JobName -S 2000-01-01 2> /dev/null | grep -c '^sbf-sbf_')" -eq "$jobs"
check "screening jobs had the CPUs and memory their rules declare (2 CPUs; index size + 1500 MB)" test \
  "$(grep -c 'Name=sbf-sbf_\(filter\|classify\) ' "$C/jobcomp.txt")" -eq 20 -a \
  "$(grep 'Name=sbf-sbf_\(filter\|classify\) ' "$C/jobcomp.txt" | grep -vc 'ProcCnt=2 .*Tres=cpu=2,mem=1500M')" -eq 0
check "the build job had 1 CPU and 400 MB" grep -q 'Name=sbf-sbf_build .*ProcCnt=1 .*Tres=cpu=1,mem=400M' "$C/jobcomp.txt"
overlap=$(sort -n running.txt | tail -n 1)
check "two jobs ran at once, never more (squeue, every 0.1 s: at most $overlap running)" test "$overlap" -eq 2

# ---- the outputs equal the local run's ----------------------------------------------------------
same=1
for s in "${samples[@]}"; do
  for f in clean/${s}_R1.fastq.gz clean/${s}_R2.fastq.gz filter/$s.summary.tsv classify/$s.summary.tsv; do
    cmp -s local/results/$f cl/results/$f || { same=0; echo "# differs: $f"; }
  done
done
cmp -s local/results/sbf_summary.tsv cl/results/sbf_summary.tsv || { same=0; echo "# differs: sbf_summary.tsv"; }
check "every output equals the local executor's (36 files and the collected table)" test $same = 1
check "the collected table has every sample, host pairs removed from each" test \
  "$(awk -F'\t' '$2 == "filter" && $5 < $4' cl/results/sbf_summary.tsv | wc -l)" -eq 9

# ---- nothing of the cluster is left -----------------------------------------------------------
stop_cluster
left=0
for p in $(cat "$work/cluster.pids"); do kill -0 "$p" 2> /dev/null && left=1; done
check "no munged, slurmctld or slurmd process is left" test $left = 0
check "no slurmstepd is left" test -z "$(pgrep -x slurmstepd)"
listening=$(awk -v a="$(printf '%04X' $port1)" -v b="$(printf '%04X' $port2)" \
  'FNR > 1 { split($2, l, ":"); if ((l[2] == a || l[2] == b) && $4 == "0A") print }' /proc/net/tcp /proc/net/tcp6)
check "no port of the cluster is listening" test -z "$listening"
check "munge's socket is gone" test ! -e "$C/munge.sock"
echo "# took $(($(date +%s) - t_start)) s"
tap_end
