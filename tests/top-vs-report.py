#!/usr/bin/env python3
"""tests/top-vs-report.py TOP_TEXT REPORT_JSON [single]: checks a frame of
`memtrace top --once --bytes` against `memtrace report --json` of the same
traces read right after: each process's reserved now (the report's live at
exit of a trace read while it runs), peak, failures and pinned host memory,
its state; the run's failures and /dev/shm; with "single" (one process:
the report's device figures are the process's) the device's reserved,
allocated and peak too. Prints one line per difference; exit 1 if any."""
import json, sys

top = open(sys.argv[1]).read().splitlines()
rep = json.load(open(sys.argv[2]))
single = len(sys.argv) > 3
bad = []

def table(header):
    rows, on = [], False
    for line in top:
        if line.split()[:2] == header:
            on = True
            continue
        if on:
            if not line.strip():
                break
            rows.append(line.split())
    return rows

devs = table(["HOST", "DEV"])
procs = table(["PID", "RANK"])
fails = {}
for f in rep["failures"]:
    fails[f["pid"]] = fails.get(f["pid"], 0) + 1
if len(procs) != len(rep["processes"]):
    bad.append("processes: top %d, report %d" % (len(procs), len(rep["processes"])))
for row in procs:
    pid = int(row[0])
    p = [p for p in rep["processes"] if p["pid"] == pid]
    if not p:
        bad.append("pid %d: not in the report" % pid)
        continue
    p = p[0]
    d = [d for d in p["devices"] if str(d["device"]) == row[3]]
    want = {"reserved": d[0]["left_at_exit_bytes"] if d else 0,
            "peak": d[0]["peak_reserved_bytes"] if d else 0,
            "failures": fails.get(pid, 0),
            "pinned": p["host_pinned_live_at_exit_bytes"],
            "state": {"exit": "exited", "_exit": "exited", "killed": "running", None: "running"}.get(p["ended"], "?")}
    got = {"reserved": int(row[4]), "peak": int(row[7]), "failures": int(row[9]),
           "pinned": int(row[12]), "state": row[2]}
    if got["state"] == "killed" and want["state"] == "running":
        want["state"] = "killed"    # the report cannot tell a killed process from a running one
    for k in want:
        if got[k] != want[k]:
            bad.append("pid %d %s: top %s, report %s" % (pid, k, got[k], want[k]))
total = sum(int(r[8]) for r in devs)
if total != rep["failures_total"]:
    bad.append("failures: top %d, report %d" % (total, rep["failures_total"]))
shm = [l for l in top if l.startswith("shm: run ")][0].split()
if "shm" in rep:
    if int(shm[4]) != rep["shm"]["present_at_exit"]:
        bad.append("shm segments: top %s, report %s" % (shm[4], rep["shm"]["present_at_exit"]))
    if int(shm[7].rstrip(";")) != rep["shm"]["peak_bytes"]:
        bad.append("shm peak: top %s, report %s" % (shm[7], rep["shm"]["peak_bytes"]))
if single:
    for row in devs:
        d = [d for d in rep["devices"] if str(d["device"]) == row[1]][0]
        for name, got, want in (("reserved", row[2], d["live_at_end_bytes"]),
                                ("peak", row[7], d["peak_reserved_bytes"])):
            if int(got) != want:
                bad.append("device %s %s: top %s, report %s" % (row[1], name, got, want))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
