#!/bin/sh
# `memtrace top` on PyTorch runs (the torch double: py-steps.py 8, py-oom.py,
# py-odd.py, under memtrace run as a user runs them): `top --once --json` of
# the finished trace equals `memtrace report --json` of it field by field
# (tests/top-json-vs-report.py: the framework's allocated, requested,
# reserved, cached and awaiting at the end and its peaks, per device of the
# run and of the process; the tensor sites live at the end with their ids,
# lines, functions and peaks, named as the text report names them; the
# CUDA-level devices, processes and sites), the textfile of the same frame
# carries the same memtrace_torch_* numbers, and the text frame shows them.
# py-odd.py's sizes make allocated (PyTorch's blocks) differ from requested
# (the tensors' sizes), so a figure top worked out itself from the events
# would not match; its own memory_stats() at the end are checked too.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble
MiB=1048576

run_one() { # NAME SCRIPT [ARGS]: traces it, then top against the report
	name=$1
	shift
	PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o $name.bin -- python3 "$@" >$name.out 2>$name.err ||
		fail "$name failed: $(cat $name.err)"
	mkdir -p $name.prom
	"$MEMTRACE" top --once --json --metrics-textfile $name.prom $name.bin >$name.top.json 2>err ||
		fail "top --json $name: $(cat err)"
	"$MEMTRACE" top --once --bytes --sites -1 $name.bin >$name.top 2>err || fail "top $name: $(cat err)"
	"$MEMTRACE" report --no-db --json $name.bin >$name.json 2>err || fail "report --json $name: $(cat err)"
	"$MEMTRACE" report --no-db $name.bin >$name.txt 2>err || fail "report $name: $(cat err)"
	python3 "$ROOT/tests/top-json-vs-report.py" $name.top.json $name.json $name.txt \
		$name.prom/memtrace.prom >$name.diff || fail "$name: top differs from the report: $(cat $name.diff)"
}
tj() { python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); f = t["framework"]; print(eval(sys.argv[2]))' "$@"; }

run_one steps "$TD/py-steps.py" 8
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
step=$(grep -n '# L:step$' "$TD/py-steps.py" | cut -d: -f1)
main=$(grep -n '# L:main$' "$TD/py-steps.py" | cut -d: -f1)
# by hand (py-steps.py's header): 29 MiB allocated at the peak, 40 MiB
# reserved; at exit 20 MiB allocated (the weights 12 MiB, the leak 8 x 1 MiB)
expect_eq "$(tj steps.top.json '[(d["pid"] is None, d["allocated_bytes"], d["requested_bytes"], d["reserved_bytes"], d["cached_bytes"], d["peak_allocated_bytes"]) for d in f["devices"]]')" \
	"[(True, $((20 * MiB)), $((20 * MiB)), $((40 * MiB)), $((20 * MiB)), $((29 * MiB))), (False, $((20 * MiB)), $((20 * MiB)), $((40 * MiB)), $((20 * MiB)), $((29 * MiB)))]" \
	"steps: the framework's figures (by hand)"
expect_eq "$(tj steps.top.json '[(s["live_bytes"], s["line"], s["name"]) for s in f["sites"]]')" \
	"[($((12 * MiB)), $weights, 'py-steps.py:$weights main < py-steps.py:$main <module>'), ($((8 * MiB)), $leak, 'py-steps.py:$leak step < py-steps.py:$step main < py-steps.py:$main <module>')]" \
	"steps: the tensor sites live at the end, by Python line"
# the text frame: one torch row per device of the run and of the process,
# the tensor sites by name
expect_eq "$(awk '$1 == "torch" { print $4, $5, $6, $7, $8, $9 }' steps.top)" \
	"- $((40 * MiB)) $((20 * MiB)) $((20 * MiB)) $((20 * MiB)) $((29 * MiB))
$(tj steps.top.json 't["processes"][0]["pid"]') $((40 * MiB)) $((20 * MiB)) $((20 * MiB)) $((20 * MiB)) $((29 * MiB))" \
	"steps: the text frame's torch rows"
awk -v n=$((8 * MiB)) -v l="py-steps.py:$leak" '$2 == n && $3 == n && $5 == l && $6 == "step" { f = 1 } END { exit !f }' steps.top ||
	fail "steps: the leaking line is not a tensor site of the text frame: $(cat steps.top)"
grep -q "^memtrace_torch_device_allocated_bytes{host=\"[^\"]*\",device=\"0\"} $((20 * MiB))$" steps.prom/memtrace.prom ||
	fail "steps: memtrace_torch_device_allocated_bytes: $(grep torch_device_alloc steps.prom/memtrace.prom)"

run_one odd "$TD/py-odd.py"
get() { grep '^MEMSTATS ' odd.out | tail -1 | cut -d' ' -f2- | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
expect_eq "$(tj odd.top.json '[(d["allocated_bytes"], d["requested_bytes"], d["reserved_bytes"], d["peak_allocated_bytes"], d["peak_requested_bytes"], d["peak_reserved_bytes"]) for d in f["devices"] if d["pid"] is None][0]')" \
	"($(get allocated_current), $(get requested_current), $(get reserved_current), $(get allocated_peak), $(get requested_peak), $(get reserved_peak))" \
	"odd: top's figures are PyTorch's own memory_stats()"

PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o oom.bin -- python3 "$TD/py-oom.py" >oom.out 2>oom.err ||
	fail "py-oom failed: $(cat oom.err)"
mkdir -p oom.prom
"$MEMTRACE" top --once --json --metrics-textfile oom.prom oom.bin >oom.top.json 2>err || fail "top oom: $(cat err)"
"$MEMTRACE" report --no-db --json oom.bin >oom.json 2>err || fail "report oom: $(cat err)"
"$MEMTRACE" report --no-db oom.bin >oom.txt 2>err || fail "report oom: $(cat err)"
python3 "$ROOT/tests/top-json-vs-report.py" oom.top.json oom.json oom.txt oom.prom/memtrace.prom >oom.diff ||
	fail "oom: top differs from the report: $(cat oom.diff)"
expect_eq "$(tj oom.top.json '[d["ooms"] for d in f["devices"] if d["pid"] is not None]')" "[1]" "oom: the OOM counted"
grep -q '^memtrace_torch_ooms_total{.*} 1$' oom.prom/memtrace.prom || fail "oom: memtrace_torch_ooms_total"
exit 0
