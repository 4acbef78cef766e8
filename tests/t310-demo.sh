#!/bin/sh
# t310-demo: scripts/demo.sh (what `make demo` runs) on the simulated GPU:
# says so, traces every sample, prints the fragmentation sample's report
# with its two failures, draws the plots, and ends with what to run next.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/multiprocess" ] || skip "no $SAMPLES (make tests-build)"

MEMTRACE_DEMO_SIM=1 MEMTRACE_DEMO_DIR="$T/demo" timeout 120 "$ROOT/scripts/demo.sh" >"$T/out" 2>"$T/err" ||
	fail "demo.sh failed: $(cat "$T/err" "$T/out" | tail -n 20)"
[ -s "$T/err" ] && fail "demo.sh wrote to stderr: $(cat "$T/err")"
grep -q '^memtrace demo: no GPU used; the samples run on the simulated GPU' "$T/out" || fail "no word of the simulator"
for f in leak fragmentation activations activations-checkpoint stream-ordered pinned-expandable; do
	[ -s "$T/demo/$f.bin" ] || fail "no trace $f.bin"
	grep -q "^  $f.bin  " "$T/out" || fail "$f.bin not listed"
done
expect_eq "$(ls "$T/demo" | grep -cE '^multiprocess\.[0-9]+\.bin$')" 2 "worker traces"
grep -q '^  multiprocess.PID.bin x 2 ' "$T/out" || fail "workers not listed"
if "$MEMTRACE" help report >/dev/null 2>&1; then
	grep -q '^device 0: peak 100 MiB reserved' "$T/out" || fail "report of the fragmentation sample: $(cat "$T/out")"
	expect_eq "$(count 'cudaMalloc of 30.0 MiB on device 0: cudaErrorMemoryAllocation' "$T/out")" 2 "failures in the report"
fi
if "$MEMTRACE" help plot >/dev/null 2>&1; then
	for f in leak fragmentation activations activations-checkpoint stream-ordered pinned-expandable multiprocess; do
		[ -s "$T/demo/plots/$f/timeline-dev0.png" ] || fail "no timeline for $f"
	done
	[ -s "$T/demo/plots/multiprocess/timeline-dev1.png" ] || fail "no timeline of device 1"
fi
grep -q '^next:' "$T/out" || fail "no next steps"
[ "$(wc -l <"$T/out")" -le 80 ] || fail "demo output is $(wc -l <"$T/out") lines; keep it short"

# The README's report excerpts are what the demo's leak trace reports
# (times masked; '...' ends an excerpt)
"$MEMTRACE" report --no-db "$T/demo/leak.bin" >"$T/leak.txt" 2>"$T/err" || fail "report of leak.bin failed"
python3 - "$ROOT/README.md" "$T/leak.txt" <<'PY' || fail "README's report excerpt differs from the demo's report"
import re, sys
readme, report = open(sys.argv[1]).read(), open(sys.argv[2]).read()
mask = lambda s: re.sub(r"\d+\.\d+ (ms|us|s)\b", "T", s)
sect = readme[readme.index("## Reading a report"):readme.index("## Recipes")]
blocks = re.findall(r"```\n(.*?)```", sect, re.S)
assert len(blocks) == 2, "expected 2 excerpts, found %d" % len(blocks)
lines = mask(report).splitlines()
for b in blocks:
    want = [l for l in mask(b).splitlines() if l.strip() != "..."]
    if not any(lines[i:i + len(want)] == want for i in range(len(lines))):
        print("not in the report:\n" + "\n".join(want) + "\n--- report:\n" + mask(report))
        sys.exit(1)
PY
exit 0
