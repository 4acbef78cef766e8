#!/bin/sh
# `memtrace export --at peak|exit|oom[:N]|TIME`: every format shows the
# moment asked for, and its figures are the report's JSON, field by field:
#
# - samples/leak.c (CUDA level): peak 112 MiB (weights 32, gradients 32,
#   activations 24, losses 20, batch 4), 20 MiB left at exit;
# - samples/fragmentation.c: its two failures (oom:1 with 100 MiB reserved,
#   oom:2 with 80 MiB, in the report's "failures");
# - the torch double, py-steps.py 8 (t721): peak allocated 29 MiB with
#   reserved 40 MiB, at exit 20 MiB allocated (12 MiB of weights, 8 x 1 MiB
#   at the line marked L:leak); py-oom.py: the OOM with 40 MiB of tensors
#   and 40 MiB cached in 5 MiB pieces;
# - tests/clients/dl-fwgen.c split (worked out in its header): peak of
#   allocated 26 MiB (A: 8 + 8 at train.py:21, 4 at :22; B: 6 at :23 and
#   14 free), at exit 18 MiB (A's middle 8 MiB freed); stream: at the
#   drain's check, the 8 MiB block is awaiting its free (another stream):
#   allocated 0, requested 8 MiB, active_pending_free.
#
# An export that computed a figure of its own, or ignored --at, fails here:
# --at peak and --at exit differ where the run's state does, TIME at the
# peak's time gives the peak, and each figure is read back from the JSON.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
for s in leak fragmentation; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
MiB=1048576
TD=$ROOT/tests/torchdouble
CHECK=$ROOT/tests/tools/check-torch-snapshot.py
TRACE=leak.bin traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
SIMCUDA_MEM=400M TRACE=frag.bin traced "$SAMPLES/fragmentation" >out 2>err ||
	fail "fragmentation failed: $(cat err)"
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o s.bin -- python3 "$TD/py-steps.py" 8 >out 2>err ||
	fail "py-steps failed: $(cat err)"
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o oom.bin -- python3 "$TD/py-oom.py" >out 2>err ||
	fail "py-oom failed: $(cat err)"
for s in split stream; do
	LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o $s.bin -- "$CLIENTS/dl-fwgen" $s >out 2>err ||
		fail "dl-fwgen $s failed: $(cat err)"
done
for b in leak frag s oom split stream; do
	"$MEMTRACE" report --json --no-db $b.bin >$b.json 2>err || fail "report $b failed: $(cat err)"
done

# ex FORMAT AT TRACE OUT: one export, checked when it is a snapshot
ex() {
	"$MEMTRACE" export --format "$1" --at "$2" -o "$4" "$3" >out 2>err ||
		fail "export --format $1 --at $2 $3 failed: $(cat err)"
	[ -s err ] && fail "export --format $1 --at $2 wrote to stderr: $(cat err)"
	if [ "$1" = torch-snapshot ]; then
		python3 "$CHECK" "$4" >out 2>&1 || fail "$4: $(cat out)"
	fi
	return 0
}

# cmp.py KIND REPORT.json EXPORT [ARG]: prints what differs from the
# report (nothing when all is equal)
cat >cmp.py <<'EOF'
import json, os, pickle, sys

kind, rj, exp = sys.argv[1:4]
arg = sys.argv[4] if len(sys.argv) > 4 else None
r = json.load(open(rj))
bad = []

def eq(what, got, want):
    if got != want:
        bad.append(f"{what}: export {got!r}, report {want!r}")

def main_frame(frames):
    f = next((f for f in frames if f["user"]), frames[0])
    return f"{f['function']} ({os.path.basename(f['file'])}:{f['line']})"

def fw_name(f):
    return f"{os.path.basename(f['file'])}:{f['line']} {f['function']}"

def folded(path):
    lines = []
    for ln in open(path):
        stack, n = ln.rstrip("\n").rsplit(" ", 1)
        lines.append((stack.split(";"), int(n)))
    return lines

def fwdev(r):
    return [d for d in r["framework"]["devices"] if d["pid"] is None][0]

def fwsite(r, i):
    return [s for s in r["framework"]["sites"] if s["site"] == i][0]

def fw_main(r, i):
    s = fwsite(r, i)
    return f"{os.path.basename(s['file'])}:{s['line']} {s['function']}"

def snap_state(d):
    segs = d["segments"]
    blocks = [b for s in segs for b in s["blocks"]]
    act = [b for b in blocks if b["state"] != "inactive"]
    return {
        "reserved_bytes": sum(s["total_size"] for s in segs),
        "allocated_bytes": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
        "requested_bytes": sum(b["requested_size"] for b in act),
        "cached_bytes": sum(b["size"] for b in blocks if b["state"] != "active_allocated"),
        "awaiting_free_bytes": sum(b["size"] for b in blocks if b["state"] == "active_pending_free"),
        "inactive_split_bytes": sum(b["size"] for s in segs if any(x["state"] != "inactive" for x in s["blocks"]) and not s["is_expandable"] for b in s["blocks"] if b["state"] == "inactive"),
        "largest_free_block_bytes": max([b["size"] for b in blocks if b["state"] == "inactive"] or [0]),
        "segments": len(segs),
        "blocks": len(act),
    }

STATE_KEYS = ("reserved_bytes", "allocated_bytes", "requested_bytes", "cached_bytes",
              "awaiting_free_bytes", "inactive_split_bytes", "largest_free_block_bytes",
              "segments", "blocks")

def fw_moment(r, at):
    """the report's state of the framework's run device at the moment"""
    d = fwdev(r)
    if at == "peak":
        return d["peak_allocated"]
    if at == "exit":
        return d["at_exit"]
    return r["framework"]["ooms"][int(at.split(":")[1]) - 1]["state"]

def markers(ev):
    return {e["name"]: e["args"] for e in ev if e.get("cat") == "memtrace_at"}

if kind == "cuda-collapsed":          # arg: peak | exit | oom:N
    lines = folded(exp)
    d = r["devices"][0]
    if arg == "peak":
        want = [(main_frame(s["frames"]), s["bytes"]) for s in d["peak_sites"]]
        eq("sites at the peak", [(l[-1], n) for l, n in lines], want)
        eq("their sum, the sites' bytes at the peak", sum(n for _, n in lines),
           sum(s["bytes"] for s in d["peak_sites"]))
    elif arg == "exit":
        eq("sum at exit", sum(n for _, n in lines), d["left_at_exit_bytes"])
    else:
        f = r["failures"][int(arg.split(":")[1]) - 1]
        eq("sum at the failure", sum(n for _, n in lines), f["reserved_bytes"])
        eq("top holders at the failure", [(l[-1], n) for l, n in lines][:len(f["top_holders"])],
           [(main_frame(h["frames"]), h["bytes"]) for h in f["top_holders"]])
    for l, n in lines:
        eq("root", l[0], "device 0")
elif kind == "cuda-snapshot":
    s = pickle.load(open(exp, "rb"))
    d = r["devices"][0]
    live = sum(x["total_size"] for x in s["segments"])
    ooms = [e for e in s["device_traces"][0] if e["action"] == "oom"]
    if arg == "peak":
        eq("allocations live at the peak", live, d["peak_allocated_bytes"])
        eq("the trace's end", max(e["time_us"] for e in s["device_traces"][0]) * 1000 <= d["peak_reserved_time_ns"], True)
    elif arg == "exit":
        eq("allocations live at the end", live, d["live_at_end_bytes"])
    else:
        n = int(arg.split(":")[1])
        f = r["failures"][n - 1]
        eq("allocations live at the failure", live, f["reserved_bytes"])
        eq("the trace ends with the failure", (len(ooms), s["device_traces"][0][-1]["action"], ooms[-1]["size"]),
           (n, "oom", f["requested_bytes"]))
    eq("memtrace_at", s["allocator_settings"]["memtrace_at"], arg)
elif kind == "cuda-perfetto":
    ev = json.load(open(exp))["traceEvents"]
    m = markers(ev)[f"device 0: at {arg}"]
    d = r["devices"][0]
    res = [e for e in ev if e["ph"] == "C" and e["pid"] == 0 and e["name"] == "device 0 reserved"]
    fails = [e for e in ev if e.get("cat") == "failure"]
    if arg == "peak":
        eq("marker", (m["reserved_bytes"], m["allocated_bytes"]), (d["peak_reserved_bytes"], d["peak_allocated_bytes"]))
        eq("reserved track ends at the peak", (res[-1]["args"]["bytes"], round(res[-1]["ts"] * 1000)),
           (d["peak_reserved_bytes"], d["peak_reserved_time_ns"]))
    elif arg == "exit":
        eq("marker", m["reserved_bytes"], d["live_at_end_bytes"])
        eq("failures", len(fails), len(r["failures"]))
    else:
        n = int(arg.split(":")[1])
        f = r["failures"][n - 1]
        eq("marker", m["reserved_bytes"], f["reserved_bytes"])
        eq("reserved track ends at the failure", res[-1]["args"]["bytes"], f["reserved_bytes"])
        eq("failures up to it", [round(e["ts"] * 1000) for e in fails], [x["time_ns"] for x in r["failures"][:n]])
elif kind == "fw-collapsed":
    lines = folded(exp)
    f = r["framework"]
    for l, n in lines:
        eq("root", l[0], "device 0")
    if arg == "exit":
        want = [(fw_main(r, x["site"]), x["bytes"]) for x in f["leaks"] if x["bytes"]]
        eq("tensors left at exit", sorted((l[-1], n) for l, n in lines), sorted(want))
        eq("their sum", sum(n for _, n in lines), sum(x["bytes"] for x in f["leaks"]))
    else:
        st = fw_moment(r, arg)
        top = st["sites"] if arg == "peak" else r["framework"]["ooms"][int(arg.split(":")[1]) - 1]["top_holders"]
        eq("sum: allocated", sum(n for _, n in lines), st["allocated_bytes"])
        eq("top tensor sites", [(l[-1], n) for l, n in lines][:len(top)], [(fw_main(r, x["site"]), x["bytes"]) for x in top])
    # every line names its site as the report does: the frames from the
    # outermost to the main one, each "file.py:12 function"
    for l, n in lines:
        s = [x for x in f["sites"] if fw_main(r, x["site"]) == l[-1]]
        if not s:
            bad.append(f"no site of the report reads {l[-1]!r}")
            continue
        fr = s[0]["frames"]
        mi = next((i for i, x in enumerate(fr) if x["user"]), 0)
        eq(f"frames of {l[-1]}", l[1:], [fw_name(x) for x in reversed(fr[mi:])])
elif kind == "fw-snapshot":
    s = pickle.load(open(exp, "rb"))
    st = fw_moment(r, arg)
    got = snap_state(s)
    for k in STATE_KEYS:
        eq(k, got[k], st[k])
    eq("memtrace_at", s["allocator_settings"]["memtrace_at"], arg)
    if arg.startswith("oom"):
        o = r["framework"]["ooms"][int(arg.split(":")[1]) - 1]
        eq("the trace ends with the OOM", (s["device_traces"][0][-1]["action"], s["device_traces"][0][-1]["size"]),
           ("oom", o["requested_bytes"]))
elif kind == "fw-perfetto":
    ev = json.load(open(exp))["traceEvents"]
    m = markers(ev)[f"device 0 tensors: at {arg}"]
    st = fw_moment(r, arg)
    for k in ("reserved_bytes", "allocated_bytes", "requested_bytes", "cached_bytes"):
        eq("marker " + k, m["tensors_" + k], st[k])
    for k in ("awaiting_free_bytes", "inactive_split_bytes", "largest_free_block_bytes"):
        eq("marker " + k, m[k], st[k])
    for what in ("allocated", "requested", "reserved", "cached"):
        tr = [e for e in ev if e["ph"] == "C" and e["pid"] == 0 and e["name"] == f"device 0 tensors {what}"]
        eq(f"tensors {what}: the track's last value", tr[-1]["args"]["bytes"], st[what + "_bytes"])
    if arg == "exit":
        d = fwdev(r)
        tr = [e["args"]["bytes"] for e in ev if e["ph"] == "C" and e["pid"] == 0 and e["name"] == "device 0 tensors allocated"]
        eq("tensors allocated: its highest", max(tr), d["peak_allocated"]["allocated_bytes"])
        eq("framework OOMs", [e["args"]["verdict"] for e in ev if e.get("cat") == "framework_oom"],
           [o["verdict"] for o in r["framework"]["ooms"]])
for b in bad:
    print(f"{kind} {exp}: {b}")
EOF

# the CUDA level: leak at its peak and at exit, fragmentation's failures
for at in peak exit; do
	ex collapsed $at leak.bin leak-$at.txt
	ex torch-snapshot $at leak.bin leak-$at.pickle
	ex perfetto $at leak.bin leak-$at.json
	expect_eq "$(python3 cmp.py cuda-collapsed leak.json leak-$at.txt $at; python3 cmp.py cuda-snapshot leak.json leak-$at.pickle $at; python3 cmp.py cuda-perfetto leak.json leak-$at.json $at)" "" "leak --at $at: the report's figures"
done
expect_eq "$(awk '{ s += $NF } END { print s }' leak-peak.txt) $(awk '{ s += $NF } END { print s }' leak-exit.txt)" \
	"$((112 * MiB)) $((20 * MiB))" "leak: the peak and what was left at exit"
for at in oom:1 oom:2; do
	ex collapsed $at frag.bin frag-$at.txt
	ex torch-snapshot $at frag.bin frag-$at.pickle
	ex perfetto $at frag.bin frag-$at.json
	expect_eq "$(python3 cmp.py cuda-collapsed frag.json frag-$at.txt $at; python3 cmp.py cuda-snapshot frag.json frag-$at.pickle $at; python3 cmp.py cuda-perfetto frag.json frag-$at.json $at)" "" "fragmentation --at $at: the report's figures"
done
expect_eq "$(awk '{ s += $NF } END { print s }' frag-oom:1.txt) $(awk '{ s += $NF } END { print s }' frag-oom:2.txt)" \
	"$((100 * MiB)) $((80 * MiB))" "fragmentation: held at each failure"
# TIME: the peak's time is the peak; a failure's time is that failure
t=$(python3 -c 'import json; print(json.load(open("leak.json"))["devices"][0]["peak_reserved_time_ns"])')
ex collapsed "$t" leak.bin leak-t.txt
expect_eq "$(cat leak-t.txt)" "$(cat leak-peak.txt)" "leak --at TIME of the peak: the peak"
ex torch-snapshot "+$((t / 1000000)).$(printf %06d $((t % 1000000)))ms" leak.bin leak-t.pickle
expect_eq "$(python3 -c 'import pickle, sys; print(pickle.load(open(sys.argv[1], "rb"))["segments"] == pickle.load(open(sys.argv[2], "rb"))["segments"])' leak-t.pickle leak-peak.pickle)" \
	True "leak --at +MS.NNNNNNms of the peak: the peak's segments"
t=$(python3 -c 'import json; print(json.load(open("frag.json"))["failures"][1]["time_ns"])')
ex collapsed "$t" frag.bin frag-t.txt
expect_eq "$(cat frag-t.txt)" "$(cat frag-oom:2.txt)" "fragmentation --at TIME of the second failure: oom:2"

# the torch double: tensors, at the peak of allocated, at exit, at the OOM
for at in peak exit; do
	ex collapsed $at s.bin s-$at.txt
	ex torch-snapshot $at s.bin s-$at.pickle
	ex perfetto $at s.bin s-$at.json
	expect_eq "$(python3 cmp.py fw-collapsed s.json s-$at.txt $at; python3 cmp.py fw-snapshot s.json s-$at.pickle $at; python3 cmp.py fw-perfetto s.json s-$at.json $at)" "" "py-steps --at $at: the report's figures"
done
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
expect_eq "$(awk '{ s += $NF } END { print s }' s-peak.txt) $(awk '{ s += $NF } END { print s }' s-exit.txt)" \
	"$((29 * MiB)) $((20 * MiB))" "py-steps: 29 MiB of tensors at the peak, 20 MiB at exit"
expect_eq "$(sed 's/.*;//' s-exit.txt | sort)" "py-steps.py:$leak step $((8 * MiB))
py-steps.py:$weights main $((12 * MiB))" "py-steps: the tensors left at exit, by line"
expect_eq "$(python3 -c 'import pickle, sys; print(sorted(set(b["state"] for s in pickle.load(open(sys.argv[1], "rb"))["segments"] for b in s["blocks"])))' s-peak.pickle)" \
	"['active_allocated', 'inactive']" "py-steps: blocks at the peak"
t=$(python3 -c 'import json; r = json.load(open("s.json")); print([d for d in r["framework"]["devices"] if d["pid"] is None][0]["peak_allocated"]["time_ns"])')
ex torch-snapshot "$t" s.bin s-t.pickle
expect_eq "$(python3 -c 'import pickle, sys; print(pickle.load(open(sys.argv[1], "rb"))["segments"] == pickle.load(open(sys.argv[2], "rb"))["segments"])' s-t.pickle s-peak.pickle)" \
	True "py-steps --at TIME of the peak of allocated: the peak's segments"
for at in oom oom:1; do
	ex collapsed $at oom.bin oom-$at.txt
	ex torch-snapshot $at oom.bin oom-$at.pickle
	ex perfetto $at oom.bin oom-$at.json
done
expect_eq "$(cmp oom-oom.txt oom-oom:1.txt && cmp oom-oom.pickle oom-oom:1.pickle && echo same)" same "oom is oom:1"
expect_eq "$(python3 cmp.py fw-collapsed oom.json oom-oom:1.txt oom:1; python3 cmp.py fw-snapshot oom.json oom-oom:1.pickle oom:1; python3 cmp.py fw-perfetto oom.json oom-oom:1.json oom:1)" "" "py-oom --at oom:1: the report's figures"
expect_eq "$(python3 -c 'import json; print([(e["args"]["verdict"], e["args"]["requested_bytes"], e["args"]["largest_free_bytes"]) for e in json.load(open("oom-oom:1.json"))["traceEvents"] if e.get("cat") == "framework_oom"])')" \
	"[('fragmentation', $((8 * MiB)), $((5 * MiB)))]" "py-oom: the OOM's verdict, request and largest free block in perfetto"
ex perfetto exit oom.bin oom-exit.json
expect_eq "$(python3 cmp.py fw-perfetto oom.json oom-exit.json exit)" "" "py-oom --at exit: the report's figures"

# dl-fwgen split: the blocks worked out by hand
for at in peak exit; do
	ex collapsed $at split.bin split-$at.txt
	ex torch-snapshot $at split.bin split-$at.pickle
	expect_eq "$(python3 cmp.py fw-collapsed split.json split-$at.txt $at; python3 cmp.py fw-snapshot split.json split-$at.pickle $at)" "" "split --at $at: the report's figures"
done
expect_eq "$(cat split-peak.txt)" "device 0;train.py:60 main;train.py:21 step $((16 * MiB))
device 0;train.py:60 main;train.py:23 step $((6 * MiB))
device 0;train.py:60 main;train.py:22 step $((4 * MiB))" "split: tensor sites at the peak of allocated"
blocks='[[(b["size"] // 1048576, b["state"], b["frames"][1]["line"] if b["frames"] else None) for b in s["blocks"]] for s in d["segments"]]'
pk() { python3 -c 'import pickle, sys; d = pickle.load(open(sys.argv[1], "rb")); print(eval(sys.argv[2]))' "$@"; }
expect_eq "$(pk split-peak.pickle "$blocks")" \
	"[[(8, 'active_allocated', 21), (8, 'active_allocated', 21), (4, 'active_allocated', 22)], [(6, 'active_allocated', 23), (14, 'inactive', None)]]" \
	"split: the blocks at the peak of allocated"
expect_eq "$(pk split-exit.pickle "$blocks")" \
	"[[(8, 'active_allocated', 21), (8, 'inactive', None), (4, 'active_allocated', 22)], [(6, 'active_allocated', 23), (14, 'inactive', None)]]" \
	"split: the blocks at exit"

# dl-fwgen stream: at the drain's check the block awaits its free
t=$("$MEMTRACE" dump stream.bin | sed -n 's/^fw_event time=+\([0-9]*\) .*action=check.*/\1/p' | head -1)
ex torch-snapshot "$t" stream.bin stream-t.pickle
ex perfetto "$t" stream.bin stream-t.json
expect_eq "$(pk stream-t.pickle '[(s["allocated_size"], s["active_size"], s["requested_size"], [(b["state"], b["size"] // 1048576) for b in s["blocks"]]) for s in d["segments"]]')" \
	"[(0, $((8 * MiB)), $((8 * MiB)), [('active_pending_free', 8), ('inactive', 12)])]" "stream: the block awaiting its free"
expect_eq "$(python3 -c 'import json; a = [e["args"] for e in json.load(open("stream-t.json"))["traceEvents"] if e.get("cat") == "memtrace_at" and "tensors" in e["name"]][0]; print(a["tensors_allocated_bytes"], a["tensors_requested_bytes"], a["awaiting_free_bytes"])')" \
	"0 $((8 * MiB)) $((8 * MiB))" "stream: perfetto's marker at the check"

# the moments a run does not have, and words --at does not take
"$MEMTRACE" export --format collapsed --at oom:3 frag.bin >out 2>err
expect_eq "$?:$(cat err)" "1:memtrace: --at oom:3: the run has 2 failed allocations" "oom:3 of a run with 2"
"$MEMTRACE" export --format torch-snapshot --at oom s.bin >out 2>err
expect_eq "$?:$(cat err)" "1:memtrace: --at oom:1: the run has 0 framework OOMs (with framework records, oom:N counts PyTorch's OOMs)" "oom of a PyTorch run without one"
"$MEMTRACE" export --format perfetto --at +1000s leak.bin >out 2>err
expect_eq "$?:$(sed 's/(+[0-9.]* ms)/(+END ms)/' err)" "1:memtrace: --at +1000000.000000 ms is past the run's end (+END ms)" "a time past the end"
for bad in oom:0 oom:x peak: 12xs +; do
	"$MEMTRACE" export --format collapsed --at "$bad" leak.bin >out 2>err
	expect_eq "$?" 2 "--at $bad: usage error"
done
exit 0
