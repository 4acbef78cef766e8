#!/bin/sh
# t252: `memtrace export --format perfetto` shows the program's units of
# time (docs/export.md), each figure the report's JSON's, field by field:
#   rt-nvtx train (tests/clients/rt-nvtx.c): 12 slices on the main thread
#     ("step N" x3 holding "io:load", "forward", "backward"), each with its
#     range, step and the reserved at its start, highest, end; by hand:
#     step N peaks at 20+10N MiB and ends at 10N MiB, forward peaks at
#     20+10N and ends there (its pop comes before the free), backward peaks
#     at 5+10N, io:load at 10N; the step counter reads 1,0,2,0,3,0 at the
#     steps' starts and ends (the report's start_ns/end_ns); its mark
#     "epoch 1" an instant on the same thread, before step 1;
#   --at peak: only what started by the peak (50 MiB in forward of step
#     3): step 3 and its forward end at the peak, open, with no figure
#     from after it; step 3's io:load is whole;
#   rt-nvtx misuse: 'handoff' (start/end) is an async pair that ends on
#     the other thread; 'left open' is a slice to the process's end,
#     open_at_exit.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3 headers are missing)"
cd "$T" || exit 1

TRACE=train.bin traced "$CLIENTS/rt-nvtx" train 2>/dev/null || fail "rt-nvtx train failed"
TRACE=misuse.bin traced "$CLIENTS/rt-nvtx" misuse 2>/dev/null || fail "rt-nvtx misuse failed"
for b in train misuse; do
	"$MEMTRACE" report --json --no-db $b.bin >$b.json 2>err || fail "report $b: $(cat err)"
	"$MEMTRACE" export --format perfetto -o $b.pf $b.bin 2>err || fail "export $b: $(cat err)"
done
"$MEMTRACE" export --format perfetto --at peak -o peak.pf train.bin 2>err || fail "export --at peak: $(cat err)"

python3 - <<'PY' || fail "perfetto ranges"
import json, sys
M = 1 << 20
def check(what, got, want):
    if got != want:
        print("FAIL: %s: got %r, expected %r" % (what, got, want)); sys.exit(1)
def us(ns): return round(ns / 1000, 3)
rep = json.load(open("train.json"))
ev = json.load(open("train.pf"))["traceEvents"]
pid = rep["processes"][0]["pid"]
X = [e for e in ev if e["ph"] == "X"]
check("slices", len(X), 12)
check("one thread", {(e["pid"], e["tid"]) for e in X}, {(pid, pid)})
def fig(e): return (e["name"], e["args"]["step"], e["args"]["reserved_at_start"] // M,
                    e["args"]["peak_reserved"] // M, e["args"]["reserved_at_end"] // M)
got = sorted(fig(e) for e in X)
want = []
for n in (1, 2, 3):
    want += [("step %d" % n, n, 10 * (n - 1), 20 + 10 * n, 10 * n), ("io:load", n, 10 * (n - 1), 10 * n, 10 * n),
             ("forward", n, 10 * n, 20 + 10 * n, 20 + 10 * n), ("backward", n, 10 * n, 5 + 10 * n, 10 * n)]
check("slices by hand", got, sorted(want))
# the steps: the report's, field by field
steps = [e for e in X if e["args"]["range"] == "step N"]
for s, e in zip(rep["ranges"]["steps"], sorted(steps, key=lambda e: e["ts"])):
    check("step %d" % s["step"], (e["name"], e["args"]["step"], us(s["start_ns"]), us(s["end_ns"]),
          e["args"]["reserved_at_start"], e["args"]["peak_reserved"], e["args"]["reserved_at_end"]),
          (s["name"], s["step"], e["ts"], round(e["ts"] + e["dur"], 3), s["reserved_at_start"],
           s["peak_reserved"], s["reserved_at_end"]))
# each range's highest slice and count: the report's range table
for g in rep["ranges"]["ranges"]:
    mine = [e for e in X if e["args"]["range"] == g["range"]]
    check(g["range"], (len(mine), max(e["args"]["peak_reserved"] for e in mine)), (g["instances"], g["peak_reserved"]))
C = [(e["ts"], e["args"]["step"]) for e in ev if e["ph"] == "C" and e["name"] == "step"]
want = []
for s in rep["ranges"]["steps"]:
    want += [(us(s["start_ns"]), s["step"]), (us(s["end_ns"]), 0)]
check("step counter", C, want)
check("step counter values", [v for _, v in C], [1, 0, 2, 0, 3, 0])
# the mark: an instant on its thread, before step 1, one per report's mark
I = [e for e in ev if e["ph"] == "i" and e.get("cat") == "mark"]
check("marks", [(e["name"], e["s"], e["pid"], e["tid"]) for e in I], [("epoch 1", "t", pid, pid)])
check("marks counted", len(I), rep["ranges"]["marks"])
check("the mark before step 1", I[0]["ts"] <= us(rep["ranges"]["steps"][0]["start_ns"]), True)

# --at peak: up to the peak's time; what is open then ends there
pk = rep["ranges"]["peaks"][0]
check("peak", (pk["reserved_bytes"], pk["range"], pk["step"]), (50 * M, "forward", 3))
pev = json.load(open("peak.pf"))["traceEvents"]
P = [e for e in pev if e["ph"] == "X"]
check("slices at the peak", len(P), 11)
opn = sorted((e["name"], round(e["ts"] + e["dur"], 3)) for e in P if e["args"].get("open_at_moment"))
check("open at the peak", opn, [("forward", us(pk["time_ns"])), ("step 3", us(pk["time_ns"]))])
for e in P:
    if e["args"].get("open_at_moment"):
        check(e["name"] + " at the peak: no later figure", sorted(e["args"]), ["open_at_moment", "range", "reserved_at_start", "step"])
check("step counter at the peak", [e["args"]["step"] for e in pev if e["ph"] == "C" and e["name"] == "step"], [1, 0, 2, 0, 3])

# misuse: the start/end pair across threads, the range left open
rep = json.load(open("misuse.json"))
ev = json.load(open("misuse.pf"))["traceEvents"]
b = [e for e in ev if e["ph"] == "b"]
e_ = [e for e in ev if e["ph"] == "e"]
check("async pair", ([x["name"] for x in b], [x["name"] for x in e_], b[0]["id"] == e_[0]["id"]), (["handoff"], ["handoff"], True))
check("ended on another thread", b[0]["tid"] != e_[0]["tid"], True)
check("handoff held", (b[0]["args"]["reserved_at_start"], b[0]["args"]["peak_reserved"]), (0, 2 * M))
lo = [x for x in ev if x["ph"] == "X"]
check("left open", [(x["name"], x["args"]["open_at_exit"], x["args"]["peak_reserved"]) for x in lo], [("left open", True, 3 * M)])
PY
exit 0
