#!/usr/bin/env python3
"""status.py JOBID -- the state of a Slurm job in Snakemake's words (running, success, failed),
for --cluster-status. scontrol knows jobs until MinJobAge (300 s by default) after they end;
after that sacct is asked (with accounting), then its job completion log (sacct -c)."""
import subprocess
import sys

RUNNING = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
           "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED"}


def state_of(jobid):
    try:
        out = subprocess.run(["scontrol", "-o", "show", "job", jobid], capture_output=True, text=True,
                             timeout=30).stdout
        for field in out.split():
            if field.startswith("JobState="):
                return field.split("=", 1)[1]
    except (OSError, subprocess.TimeoutExpired):
        pass
    for args in (["sacct", "-X", "-n", "-P", "-j", jobid, "-o", "State"],
                 ["sacct", "-c", "-X", "-n", "-P", "-j", jobid, "-o", "State"]):
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.split()
            if out:
                return out[-1].split()[0]
        except (OSError, subprocess.TimeoutExpired):
            pass
    return "UNKNOWN"


state = state_of(sys.argv[1])
if state in RUNNING or state == "UNKNOWN":   # unknown: not yet visible; asked again
    print("running")
elif state == "COMPLETED":
    print("success")
else:                                       # FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL...
    print("failed")
