#!/bin/sh
# `memtrace export --format torch-snapshot`: a pickle in the layout of
# torch.cuda.memory._snapshot(), loaded with Python's pickle and read by
# tests/tools/check-torch-snapshot.py the way torch/cuda/_memory_viz.py
# reads it. samples/leak.c (no framework records): each allocation a
# segment of one block; the 10 losses of 2 MiB left at exit are the live
# segments; 41 cudaMalloc and 31 cudaFree make 41 x 2 + 31 x 3 = 175 trace
# entries. samples/fragmentation.c: its 2 failures are "oom" entries. The
# torch double (py-steps.py 8, see t721): the framework's 6 segments (12,
# 20 and 4 x 2 MiB), the 9 tensors live at exit (the 12 MiB weights and 8
# x 1 MiB from the line marked L:leak) = 20 MiB, the 20 MiB segment's one
# free block inactive. tests/clients/dl-fwgen.c expand: an expandable
# segment's mapped ranges as segment_map / segment_unmap entries (offsets
# and sizes in MiB from the range's start, worked out in dl-fwgen.c), every
# entry on the framework's stream 7 with its time; samples/stream-ordered.c:
# its cudaMallocAsync blocks on their stream (the dump's stream=).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
for s in leak fragmentation; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
MiB=1048576
CHECK=$ROOT/tests/tools/check-torch-snapshot.py
TRACE=leak.bin traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
SIMCUDA_MEM=400M TRACE=frag.bin traced "$SAMPLES/fragmentation" >out 2>err ||
	fail "fragmentation failed: $(cat err)"

"$MEMTRACE" export --format torch-snapshot -o leak.pickle leak.bin >out 2>err ||
	fail "export failed: $(cat err)"
[ -s err ] && fail "export wrote to stderr: $(cat err)"
expect_eq "$(python3 "$CHECK" leak.pickle 2>&1)" \
	"segments=10 blocks=10 active_blocks=10 active_bytes=$((20 * MiB)) entries=175 live_at_end=10" \
	"leak: the checker's figures"
pk() { python3 -c 'import pickle, sys; d = pickle.load(open(sys.argv[1], "rb")); print(eval(sys.argv[2]))' "$@"; }
expect_eq "$(pk leak.pickle 'sorted(set((s["total_size"], b["state"], b["frames"][0]["name"], b["frames"][0]["line"]) for s in d["segments"] for b in s["blocks"]))')" \
	"[($((2 * MiB)), 'active_allocated', 'keep_loss', 54)]" "leak: the live blocks are the losses, with their frames"
"$MEMTRACE" report --json --no-db leak.bin >leak.json || fail "report failed"
expect_eq "$(pk leak.pickle 'sum(s["allocated_size"] for s in d["segments"])')" \
	"$(python3 -c 'import json; print(json.load(open("leak.json"))["devices"][0]["left_at_exit_bytes"])')" \
	"leak: the live segments are the report's left at exit"
expect_eq "$(pk leak.pickle '[sum(1 for e in d["device_traces"][0] if e["action"] == a) for a in ("segment_alloc", "alloc", "free_requested", "free_completed", "segment_free", "oom")]')" \
	"[41, 41, 31, 31, 31, 0]" "leak: the trace's actions"
expect_eq "$(pk leak.pickle 'all(x["time_us"] <= y["time_us"] for x, y in zip(d["device_traces"][0], d["device_traces"][0][1:]))')" \
	True "leak: the trace in time order"

"$MEMTRACE" export --format torch-snapshot frag.bin >frag.pickle 2>err || fail "export to stdout failed: $(cat err)"
python3 "$CHECK" frag.pickle >out 2>&1 || fail "fragmentation: $(cat out)"
expect_eq "$(pk frag.pickle '[(e["size"], e["device_free"], e["frames"][1]["name"]) for e in d["device_traces"][0] if e["action"] == "oom"]')" \
	"[($((30 * MiB)), 0, 'cache_alloc'), ($((30 * MiB)), $((20 * MiB)), 'cache_alloc')]" "fragmentation: the failures as oom entries"

# the checker refuses what memory_viz could not read
python3 -c '
import pickle, sys
d = pickle.load(open("leak.pickle", "rb"))
d["segments"][0]["blocks"][0]["size"] -= 1
d["segments"][0]["blocks"][0]["requested_size"] -= 1
pickle.dump(d, open("bad.pickle", "wb"))'
python3 "$CHECK" bad.pickle >out 2>&1 && fail "the checker took a segment whose blocks do not fill it"
expect_eq "$(cat out)" "check-torch-snapshot: segment 0: blocks sum to $((2 * MiB - 1)), total_size $((2 * MiB))" "the checker's message"

# framework records: the torch double
TD=$ROOT/tests/torchdouble
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o s.bin -- python3 "$TD/py-steps.py" 8 >out 2>err ||
	fail "py-steps failed: $(cat err)"
"$MEMTRACE" export --format torch-snapshot -o s.pickle s.bin >out 2>err || fail "export failed: $(cat err)"
expect_eq "$(python3 "$CHECK" s.pickle 2>&1)" \
	"segments=6 blocks=10 active_blocks=9 active_bytes=$((20 * MiB)) entries=87 live_at_end=9" \
	"torch double: the checker's figures"
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
expect_eq "$(pk s.pickle '[(s["total_size"] // 1048576, [(b["size"] // 1048576, b["state"], b["frames"][0]["line"] if b["frames"] else None) for b in s["blocks"]]) for s in d["segments"]]')" \
	"[(12, [(12, 'active_allocated', $weights)]), (20, [(20, 'inactive', None)]), (2, [(1, 'active_allocated', $leak), (1, 'active_allocated', $leak)]), (2, [(1, 'active_allocated', $leak), (1, 'active_allocated', $leak)]), (2, [(1, 'active_allocated', $leak), (1, 'active_allocated', $leak)]), (2, [(1, 'active_allocated', $leak), (1, 'active_allocated', $leak)])]" \
	"torch double: the segments and the tensors live at exit"
"$MEMTRACE" report --json --no-db s.bin >s.json || fail "report failed"
expect_eq "$(pk s.pickle 'sum(b["size"] for s in d["segments"] for b in s["blocks"] if b["state"] != "inactive")')" \
	"$(python3 -c 'import json; f = json.load(open("s.json"))["framework"]; print(sum(l["bytes"] for l in f["leaks"]))')" \
	"torch double: the live blocks are the report's tensors left at exit"
expect_eq "$(pk s.pickle 'd["allocator_settings"]["memtrace_source"]')" framework "torch double: from the framework's records"

# expandable segments: dl-fwgen expand
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o e.bin -- "$CLIENTS/dl-fwgen" expand >out 2>err ||
	fail "dl-fwgen expand failed: $(cat err)"
"$MEMTRACE" export --format torch-snapshot -o e.pickle e.bin >out 2>err || fail "export failed: $(cat err)"
expect_eq "$(python3 "$CHECK" e.pickle 2>&1)" \
	"segments=1 blocks=2 active_blocks=1 active_bytes=$MiB entries=13 live_at_end=1" \
	"expand: the checker's figures"
expect_eq "$(pk e.pickle '(lambda t, a: [(e["action"], (e["addr"] - a) // 1048576, e["size"] // 1048576, e["stream"]) for e in t])(d["device_traces"][0], d["device_traces"][0][0]["addr"])')" \
	"[('segment_map', 0, 4, 7), ('alloc', 0, 3, 7), ('segment_map', 4, 4, 7), ('alloc', 3, 4, 7), ('free_requested', 0, 3, 7), ('free_completed', 0, 3, 7), ('segment_unmap', 0, 2, 7), ('free_requested', 3, 4, 7), ('free_completed', 3, 4, 7), ('segment_unmap', 4, 4, 7), ('segment_unmap', 2, 2, 7), ('segment_map', 10, 2, 7), ('alloc', 10, 1, 7)]" \
	"expand: maps and unmaps, on stream 7"
expect_eq "$(pk e.pickle '(lambda t: all("time_us" in e for e in t) and all(x["time_us"] <= y["time_us"] for x, y in zip(t, t[1:])) and t[-1]["time_us"] > 0)(d["device_traces"][0])')" \
	True "expand: every entry has its time, in order"
expect_eq "$(pk e.pickle '[((s["address"] - d["device_traces"][0][0]["addr"]) // 1048576, s["total_size"] // 1048576, s["is_expandable"], s["stream"], [(b["state"], b["size"] // 1048576) for b in s["blocks"]]) for s in d["segments"]] + [d["allocator_settings"]["expandable_segments"]]')" \
	"[(10, 2, True, 7, [('active_allocated', 1), ('inactive', 1)]), True]" "expand: the range mapped at exit"
# the checker refuses an unmap of what is not mapped
python3 -c '
import pickle
d = pickle.load(open("e.pickle", "rb"))
d["device_traces"][0][10]["size"] *= 2
pickle.dump(d, open("bad.pickle", "wb"))'
python3 "$CHECK" bad.pickle >out 2>&1 && fail "the checker took an unmap of what was not mapped"
expect_eq "$(sed 's/of [0-9]* /of A /' out)" \
	"check-torch-snapshot: device 0 entry 10: segment_unmap of A ($((4 * MiB))) not all mapped" "the checker's message"

# stream-ordered memory: the stream of its records
[ -x "$SAMPLES/stream-ordered" ] || skip "no $SAMPLES/stream-ordered (make tests-build)"
TRACE=so.bin traced "$SAMPLES/stream-ordered" >out 2>err || fail "stream-ordered failed: $(cat err)"
"$MEMTRACE" export --format torch-snapshot -o so.pickle so.bin >out 2>err || fail "export failed: $(cat err)"
python3 "$CHECK" so.pickle >out 2>&1 || fail "stream-ordered: $(cat out)"
streams=$("$MEMTRACE" dump so.bin | sed -n 's/^alloc .*api=cudaMallocAsync .* stream=\(0x[0-9a-f]*\) .*/\1/p' | sort -u)
expect_eq "$(echo "$streams" | wc -l)" 1 "stream-ordered: one stream in the dump"
expect_eq "$(pk so.pickle 'sorted(set((e["action"], e["stream"]) for e in d["device_traces"][0]))')" \
	"$(python3 -c "print(sorted((a, $streams) for a in ('alloc', 'free_completed', 'free_requested', 'segment_alloc', 'segment_free')))")" \
	"stream-ordered: every entry on the allocation's stream"
exit 0
