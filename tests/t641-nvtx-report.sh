#!/bin/sh
# t641: the report in the program's units of time, on rt-nvtx's NVTX ranges
# (figures worked out by hand in tests/clients/rt-nvtx.c):
#   train: per step keep() holds 10 MiB more, forward 20 MiB on top,
#          backward 5 MiB: step N peaks at 20+10N MiB (forward), ends at
#          10N MiB; io:load at 10N MiB; the run's peak 50 MiB in 'forward'
#          (step 3); reserved grows 10 MiB a step from keep().
#   threads: 'pool:worker A' 8 MiB, 'pool:worker B' 4 MiB, one after the
#          other; the peak in worker A's range, on its thread.
#   misuse: said, never wrong: 1 pop with nothing open, 1 range left open
#          (3 MiB, measured to the end), 1 range ended on another thread
#          ('handoff', 2 MiB).
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3 headers are missing)"
MiB=1048576

traced "$CLIENTS/rt-nvtx" train 2>/dev/null || fail "rt-nvtx train failed"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/report" || fail "report failed"
grep -q "^  peak 50.0 MiB reserved in range 'forward' (step 3) at " "$T/report" ||
	fail "the peak's range and step: $(grep -A2 '^ranges' "$T/report")"
grep -q "^  growth: reserved at a step's end grows 10.0 MiB a step" "$T/report" || fail "growth line"
grep -q "^    grows 10.0 MiB a step from keep (rt-nvtx.c:[0-9]*).* (site 1), steps 1-3$" "$T/report" ||
	fail "growth site: $(grep -A1 '^  growth' "$T/report")"
"$MEMTRACE" report --json --no-db "$T/trace.bin" >"$T/json" || fail "report --json failed"
python3 - "$T/json" <<'PY' || fail "JSON figures"
import json, sys
M = 1 << 20
d = json.load(open(sys.argv[1]))["ranges"]
def check(what, got, want):
    if got != want:
        print("FAIL: %s: got %r, expected %r" % (what, got, want)); sys.exit(1)
check("instances", d["instances"], 12)
check("marks", d["marks"], 1)
check("thread names", d["thread_names"], 1)
pk = d["peaks"][0]
check("peak", (pk["reserved_bytes"], pk["range"], pk["step"], pk["run_peak"]), (50 * M, "forward", 3, True))
r = {x["range"]: x for x in d["ranges"]}
check("ranges", sorted(r), ["backward", "forward", "io:load", "step N"])
check("forward", (r["forward"]["instances"], r["forward"]["peak_reserved"], r["forward"]["peak_step"]), (3, 50 * M, 3))
check("backward", (r["backward"]["peak_reserved"], r["backward"]["peak_step"]), (35 * M, 3))
check("io:load", (r["io:load"]["domain"], r["io:load"]["name"], r["io:load"]["peak_reserved"]), ("io", "load", 30 * M))
check("step is the step range", (r["step N"]["step"], r["forward"]["step"]), (True, False))
steps = [(s["name"], s["step"], s["reserved_at_start"] // M, s["peak_reserved"] // M, s["reserved_at_end"] // M) for s in d["steps"]]
check("steps", steps, [("step 1", 1, 0, 30, 10), ("step 2", 2, 10, 40, 20), ("step 3", 3, 20, 50, 30)])
g = d["growth"]
check("growth", (g["reserved_per_step"], g["site"], g["site_bytes_per_step"], g["from_step"], g["to_step"]), (10 * M, 1, 10 * M, 1, 3))
check("first step vs the others", g["first_step_peak_vs_median"], -20 * M)
check("misuse", d["misuse"], {"pops_unmatched": 0, "ends_unmatched": 0, "left_open": 0, "ended_on_another_thread": 0, "not_followed": 0})
PY

TRACE=$T/threads.bin traced "$CLIENTS/rt-nvtx" threads 2>/dev/null || fail "rt-nvtx threads failed"
"$MEMTRACE" report --json --no-db "$T/threads.bin" >"$T/json" || fail "report --json threads failed"
python3 - "$T/json" <<'PY' || fail "JSON figures, threads"
import json, sys
M = 1 << 20
d = json.load(open(sys.argv[1]))["ranges"]
r = {x["range"]: x["peak_reserved"] // M for x in d["ranges"]}
if r != {"pool:worker A": 8, "pool:worker B": 4}:
    print("FAIL: threads ranges: %r" % r); sys.exit(1)
pk = d["peaks"][0]
if (pk["range"], pk["reserved_bytes"] // M, pk["step"]) != ("pool:worker A", 8, None):
    print("FAIL: threads peak: %r" % pk); sys.exit(1)
PY

TRACE=$T/misuse.bin traced "$CLIENTS/rt-nvtx" misuse 2>/dev/null || fail "rt-nvtx misuse failed"
"$MEMTRACE" report --no-db "$T/misuse.bin" >"$T/report" || fail "report misuse failed"
grep -q "^  said: 1 pop with no range open on its thread and domain" "$T/report" || fail "pop without push not said"
grep -q "^  said: 1 range left open when the process ended (first 'left open'): measured to the end" "$T/report" || fail "left open not said"
grep -q "^  said: 1 range ended on another thread than it started (first 'handoff')" "$T/report" || fail "cross-thread end not said"
"$MEMTRACE" report --json --no-db "$T/misuse.bin" | python3 -c '
import json, sys
M = 1 << 20
d = json.load(sys.stdin)["ranges"]
r = {x["range"]: (x["peak_reserved"] // M, x["left_open"]) for x in d["ranges"]}
assert r == {"left open": (3, 1), "handoff": (2, 0)}, r
assert d["misuse"]["pops_unmatched"] == 1 and d["misuse"]["left_open"] == 1 and d["misuse"]["ended_on_another_thread"] == 1, d["misuse"]
' || fail "misuse JSON"

# a trace without ranges: no section, no "ranges" key
TRACE=$T/plain.bin traced "$CLIENTS/rt-basic" >/dev/null 2>&1 || fail "rt-basic failed"
"$MEMTRACE" report --no-db "$T/plain.bin" | grep -q "^ranges and steps" && fail "a section without ranges"
"$MEMTRACE" report --json --no-db "$T/plain.bin" | python3 -c 'import json,sys; assert "ranges" not in json.load(sys.stdin)' ||
	fail "a ranges key without ranges"
exit 0
