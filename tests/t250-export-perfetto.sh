#!/bin/sh
# `memtrace export --format perfetto`: Chrome trace-event JSON that parses;
# every event has ph, ts and pid; each counter track's times never go back;
# the reserved counters' maximum is the report's peak (samples/leak.c:
# 112 MiB); the failures of samples/fragmentation.c (cudaMalloc(30 MiB)
# twice, with 100 then 80 MiB reserved, 0 then 20 MiB free on the device)
# and their OOM retries are instant events with their stacks. The
# framework's OOM of tests/clients/dl-fwgen.c oom (a 6 MiB request, 20 MiB
# reserved = 8 allocated + 12 cached in pieces of 3 MiB: fragmentation; the
# 4 tensors of 2 MiB at train.py:45 hold 8 MiB) is an instant event too.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
for s in leak fragmentation; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
MiB=1048576
TRACE=leak.bin traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
SIMCUDA_MEM=400M TRACE=frag.bin traced "$SAMPLES/fragmentation" >out 2>err ||
	fail "fragmentation failed: $(cat err)"

"$MEMTRACE" export --format perfetto leak.bin >leak.json 2>err || fail "export failed: $(cat err)"
[ -s err ] && fail "export wrote to stderr: $(cat err)"
"$MEMTRACE" export --format perfetto -o frag.json frag.bin >out 2>err || fail "export -o failed: $(cat err)"
[ -s out ] && fail "export -o wrote to stdout: $(cat out)"

check='
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
for e in ev:
    for k in ("ph", "ts", "pid"):
        assert k in e, ("no " + k, e)
last = {}
for e in ev:
    if e["ph"] == "C":
        k = (e["pid"], e["name"])
        assert e["ts"] >= last.get(k, 0), ("counter goes back", e)
        last[k] = e["ts"]
'
for j in leak.json frag.json; do
	python3 -c "$check" $j || fail "$j: not valid trace-event JSON"
done
pj() { python3 -c 'import json, sys; ev = json.load(open(sys.argv[1]))["traceEvents"]; print(eval(sys.argv[2]))' "$@"; }
pid=$(pj leak.json '[e["pid"] for e in ev if e["ph"] == "M" and e["pid"]][0]')
expect_eq "$(pj leak.json 'sorted(set((e["pid"] != 0, e["name"]) for e in ev if e["ph"] == "C"))')" \
	"[(False, 'device 0 allocated'), (False, 'device 0 cached'), (False, 'device 0 device used'), (False, 'device 0 reserved'), (True, 'device 0 allocated'), (True, 'device 0 cached'), (True, 'device 0 reserved')]" \
	"counter tracks: the run's device (pid 0) and the process's"
expect_eq "$(pj leak.json 'max(e["args"]["bytes"] for e in ev if e["name"] == "device 0 reserved" and e["pid"] == 0)')" \
	$((112 * MiB)) "max of the reserved counter: the peak"
expect_eq "$(pj leak.json 'max(e["args"]["bytes"] for e in ev if e["name"] == "device 0 reserved" and e["pid"] != 0)')" \
	$((112 * MiB)) "max of the process's reserved counter"
"$MEMTRACE" report --json --no-db leak.bin >report.json || fail "report failed"
expect_eq "$(pj leak.json '[e["args"]["bytes"] for e in ev if e["name"] == "device 0 reserved" and e["pid"] == 0][-1]')" \
	"$(python3 -c 'import json; print(json.load(open("report.json"))["devices"][0]["live_at_end_bytes"])')" \
	"the last reserved value: the report's live at the end"
expect_eq "$(pj leak.json 'sorted(set(e["ts"] for e in ev if e["name"] == "device 0 allocated" and e["pid"] == 0)) == sorted(e["ts"] for e in ev if e["name"] == "device 0 reserved" and e["pid"] == 0)')" \
	True "allocated and reserved: one value per timeline row"
expect_eq "$(pj leak.json '[e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]')" \
	"['memtrace: every process, per device', '$SAMPLES/leak - pid $pid']" "process names"
expect_eq "$(pj leak.json 'len([e for e in ev if e["ph"] == "i" and e.get("cat") != "memtrace_at"])')" 0 "no failure in leak"

expect_eq "$(pj frag.json '[(e["name"], e["args"]["requested_bytes"], e["args"]["reserved_bytes"], e["args"]["device_free_bytes"], e["args"]["stack"][0]) for e in ev if e.get("cat") == "failure"]')" \
	"[('cudaMalloc failed: cudaErrorMemoryAllocation', $((30 * MiB)), $((100 * MiB)), 0, 'segment_new (samples/fragmentation.c:174)'), ('cudaMalloc failed: cudaErrorMemoryAllocation', $((30 * MiB)), $((80 * MiB)), $((20 * MiB)), 'segment_new (samples/fragmentation.c:174)')]" \
	"failures: instant events with their figures and stacks"
"$MEMTRACE" report --json --no-db frag.bin >frag.report.json || fail "report failed"
expect_eq "$(pj frag.json '[(round(e["ts"] * 1000), e["args"]["requested_bytes"], e["args"]["frees"], e["args"]["freed_bytes"], e["args"]["retry_result"]) for e in ev if e.get("cat") == "oom_retry"]')" \
	"$(python3 -c 'import json; print([(o["time_ns"], o["requested_bytes"], o["frees"], o["freed_bytes"], o["retry_result"]) for o in json.load(open("frag.report.json"))["oom_retries"]])')" \
	"OOM retries: the report's"
expect_eq "$(pj frag.json '[e["args"]["stack"][1] for e in ev if e.get("cat") == "oom_retry"]')" \
	"['cache_alloc (samples/fragmentation.c:229)', 'cache_alloc (samples/fragmentation.c:233)']" \
	"OOM retries: the stacks of their failures"
expect_eq "$(pj frag.json 'max(e["args"]["bytes"] for e in ev if e["name"] == "device 0 reserved" and e["pid"] == 0)')" \
	$((100 * MiB)) "fragmentation: max of the reserved counter"
expect_eq "$(pj frag.json 'len([e for e in ev if e.get("cat") == "oom_retry"])')" 2 "two OOM retries: after each failure"

# the framework's OOM: its verdict, the allocator then, the top holders
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o oom.bin -- "$CLIENTS/dl-fwgen" oom >oom.out 2>err ||
	fail "dl-fwgen oom failed: $(cat err)"
free=$(sed -n 's/^device_free=\([0-9]*\) .*/\1/p' oom.out)
"$MEMTRACE" export --format perfetto -o oom.json oom.bin >out 2>err || fail "export failed: $(cat err)"
python3 -c "$check" oom.json || fail "oom.json is not valid trace-event JSON"
expect_eq "$(pj oom.json '[(e["ph"], e["name"], e["args"]["device"], e["args"]["requested_bytes"], e["args"]["device_free_bytes"], e["args"]["verdict"]) for e in ev if e.get("cat") == "framework_oom"]')" \
	"[('i', 'framework OOM: fragmentation', 0, $((6 * MiB)), $free, 'fragmentation')]" "framework OOM: its event"
expect_eq "$(pj oom.json '[[a[k] for k in ("reserved_bytes", "allocated_bytes", "cached_bytes", "largest_free_bytes")] + [a["top_holders"], a["stack"]] for a in (e["args"] for e in ev if e.get("cat") == "framework_oom")]')" \
	"[[$((20 * MiB)), $((8 * MiB)), $((12 * MiB)), $((3 * MiB)), [{'site': 2, 'bytes': $((8 * MiB)), 'count': 4, 'frame': 'fill (/work/train.py:45)'}], ['linear (/usr/lib/python3/site-packages/torch/nn/functional.py:2100)', 'grow (/work/train.py:50)', 'main (/work/train.py:60)']]]" \
	"framework OOM: the allocator then, the top holders, its stack"
expect_eq "$(pj oom.json '[e["pid"] for e in ev if e.get("cat") == "framework_oom"] == [e["pid"] for e in ev if e["name"] == "process_name" and e["pid"]]')" \
	True "framework OOM: in its process"
exit 0
