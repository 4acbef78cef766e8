#!/bin/sh
# t815: `memtrace top` and its Prometheus series in the program's units
# (docs/top.md, docs/metrics.md), live: tests/clients/py-steps-live.py runs
# rt-nvtx.c's train (each step keeps 10 MiB more, 20 MiB in forward, 5 MiB
# in backward) and stops twice, under `memtrace run`:
#   in step 2's forward: step 2, range "forward" open, the last step 1
#     with its peak 30 MiB and 10 MiB at its end; memtrace_step 2,
#     memtrace_step_peak_bytes 30 MiB;
#   between steps 2 and 3: no step (memtrace_step 0), the last step 2:
#     40 MiB, 20 MiB at its end;
#   at the end (the trace read afterwards): the last step 3, 50 MiB, and
#   each last step's figures are report --json's ranges.steps, field by
#   field (the live model feeds the same ranges pass as the report);
#   the same forked into a worker after the parent's own first step: the
#   watcher of `memtrace run --metrics-textfile` follows the worker's
#   ranges (memtrace_step 2, memtrace_step_peak_bytes 30 MiB for its pid).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
MiB=1048576
mkfifo ready go || fail "mkfifo"
sim "$MEMTRACE" run --no-summary -o "$T/trace.bin" -- python3 "$ROOT/tests/clients/py-steps-live.py" \
	ready go >job.out 2>job.err &
JOB=$!
trap 'rc=$?; kill $JOB 2>/dev/null; if [ $rc = 0 ]; then rm -rf "$T"; else echo "  (kept $T)"; fi' EXIT
exec 3<ready 4>go

frame() { # N: the JSON frame, the text frame and the metrics of now
	read -r line <&3 || fail "the job ended before phase $1: $(cat job.err)"
	expect_eq "$line" "$1" "phase"
	mkdir -p tf$1
	"$MEMTRACE" top --once --json trace.bin >top$1.json 2>err || fail "top --json $1: $(cat err)"
	"$MEMTRACE" top --once --bytes --metrics-textfile tf$1 trace.bin >top$1 2>err || fail "top $1: $(cat err)"
	printf x >&4
}
live() { # N: pid step range last_step peak end, from the JSON frame
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
ls = p["last_step"] or {}
print(p["step"]["step"] if p["step"] else 0, p["step"]["name"] if p["step"] else "-", p["range"] or "-",
      ls.get("step", "-"), ls.get("peak_reserved_bytes", "-"), ls.get("reserved_at_end_bytes", "-"))' "top$1.json"
}
metric() { grep "^$1{" "tf$2/memtrace.prom" | sed 's/.*} //'; }

frame 1
expect_eq "$(live 1)" "2 step 2 forward 1 $((30 * MiB)) $((10 * MiB))" "in step 2's forward"
expect_eq "$(awk '$1 == "ranges" { print $3, $4, $5, $6, $7 }' top1)" "2 1 $((30 * MiB)) $((10 * MiB)) forward" \
	"the text frame in step 2's forward"
expect_eq "$(metric memtrace_step 1)" "2" "memtrace_step in step 2"
expect_eq "$(metric memtrace_step_peak_bytes 1)" "$((30 * MiB))" "memtrace_step_peak_bytes after step 1"
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["pid"])' top1.json)
grep -qx "memtrace_step{host=\"[^\"]*\",rank=\"\",pid=\"$pid\"} 2" tf1/memtrace.prom ||
	fail "memtrace_step's labels: $(grep '^memtrace_step{' tf1/memtrace.prom)"
frame 2
expect_eq "$(live 2)" "0 - - 2 $((40 * MiB)) $((20 * MiB))" "between steps 2 and 3"
expect_eq "$(metric memtrace_step 2)" "0" "memtrace_step between steps"
expect_eq "$(metric memtrace_step_peak_bytes 2)" "$((40 * MiB))" "memtrace_step_peak_bytes after step 2"
exec 3<&- 4>&-
wait $JOB || fail "the job failed: $(cat job.err)"

# the frames' last steps are the report's steps, field by field
"$MEMTRACE" top --once --json trace.bin >top3.json 2>err || fail "top --json at the end: $(cat err)"
expect_eq "$(live 3)" "0 - - 3 $((50 * MiB)) $((30 * MiB))" "at the end"
"$MEMTRACE" report --json --no-db trace.bin >rep.json 2>err || fail "report: $(cat err)"
python3 - <<'PY' || fail "the live steps differ from the report's"
import json, sys
steps = {s["step"]: s for s in json.load(open("rep.json"))["ranges"]["steps"]}
for n in (1, 2, 3):
    ls = json.load(open("top%d.json" % n))["processes"][0]["last_step"]
    s = steps[ls["step"]]
    if (ls["peak_reserved_bytes"], ls["reserved_at_end_bytes"]) != (s["peak_reserved"], s["reserved_at_end"]):
        print("FAIL: frame %d: last step %r, the report's %r" % (n, ls, s)); sys.exit(1)
PY

# a process that starts after the job's first range (a forked worker):
# the live model follows its ranges too (memtrace run's own watcher)
mkdir tf
sim "$MEMTRACE" run --no-summary --metrics-textfile tf --metrics-interval 0.2 -o "$T/fork.bin" -- \
	python3 "$ROOT/tests/clients/py-steps-live.py" ready go fork >job.out 2>job.err &
JOB=$!
exec 3<ready 4>go
read -r line <&3 || fail "the forked job ended before phase 1: $(cat job.err)"
i=0
while ! grep -q '^memtrace_step_peak_bytes{.*} '$((30 * MiB))'$' tf/memtrace.prom 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
child=$(ls fork.*.bin | sed 's/fork\.\([0-9]*\)\.bin/\1/')
expect_eq "$(grep "^memtrace_step{.*pid=\"$child\"}" tf/memtrace.prom | sed 's/.*} //')" "2" \
	"memtrace_step of the forked worker in its step 2"
expect_eq "$(grep "^memtrace_step_peak_bytes{.*pid=\"$child\"}" tf/memtrace.prom | sed 's/.*} //')" "$((30 * MiB))" \
	"memtrace_step_peak_bytes of the forked worker after its step 1"
printf x >&4
read -r line <&3 || fail "the forked job ended before phase 2"
printf x >&4
exec 3<&- 4>&-
wait $JOB || fail "the forked job failed: $(cat job.err)"
exit 0
