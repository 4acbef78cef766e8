#!/bin/sh
# t280-check-rules: `memtrace check` holds each figure of the demo traces
# (samples/README.md) to rules, passing at the figure and failing just
# below it: the leak sample's 112 MiB peak and 20 MiB at exit, the
# fragmentation sample's 2 failures and 2 OOM retries, the 300 MiB context
# untraced, the multiprocess sample's per rank/pid/device peaks (48 and
# 80 MiB), the shm sample's 8 MiB left in /dev/shm, and the activations
# sample against its --checkpoint run as baseline (176 vs 128 MiB).
. "$(dirname "$0")/lib.sh"
for s in leak fragmentation activations multiprocess shm-leak; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

# results FILE.json: one line per result: rule, pass, value, limit[, device]
results() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("value", x.get("error")),
          x.get("limit", ""), "dev=%s" % x["device"] if "device" in x else "")' "$1"
}
# check NAME RULES... -- FILES: runs check --json, $T/NAME.json, status in $rc
check() {
	name=$1; shift
	"$MEMTRACE" check --json "$@" >"$T/$name.json" 2>"$T/$name.err"
	rc=$?
}

# --- leak: peak, allocated_peak, live_at_exit, failures, untraced -------
traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"
check leak "peak <= 112MiB" "peak < 112MiB" "peak[dev0] <= $((112 * MiB))" \
	"allocated_peak <= 112MiB" "allocated_peak < 112MiB" \
	"live_at_exit <= 20MiB" "live_at_exit <= 0" "failures == 0" "oom_retries == 0" \
	"untraced <= 300MiB" "untraced < 300MiB" "shm_left == 0" "$T/trace.bin"
expect_eq "$rc" 1 "leak: exit status"
expect_eq "$(results "$T/leak.json")" "peak <= 112MiB | pass $((112 * MiB)) $((112 * MiB)) dev=0
peak < 112MiB | FAIL $((112 * MiB)) $((112 * MiB)) dev=0
peak[dev0] <= $((112 * MiB)) | pass $((112 * MiB)) $((112 * MiB)) dev=0
allocated_peak <= 112MiB | pass $((112 * MiB)) $((112 * MiB)) dev=0
allocated_peak < 112MiB | FAIL $((112 * MiB)) $((112 * MiB)) dev=0
live_at_exit <= 20MiB | pass $((20 * MiB)) $((20 * MiB)) dev=0
live_at_exit <= 0 | FAIL $((20 * MiB)) 0 dev=0
failures == 0 | pass 0 0 dev=0
oom_retries == 0 | pass 0 0 
untraced <= 300MiB | pass $((300 * MiB)) $((300 * MiB)) dev=0
untraced < 300MiB | FAIL $((300 * MiB)) $((300 * MiB)) dev=0
shm_left == 0 | pass 0 0 " "leak: results"
# the text: one line per broken rule, naming the figure, device and site
"$MEMTRACE" check "live_at_exit <= 0" "peak < 112MiB" "$T/trace.bin" >"$T/leak.txt" 2>&1
expect_eq "$?" 1 "leak text: exit status"
expect_eq "$(cat "$T/leak.txt")" "FAIL live_at_exit <= 0: live at exit 20.0 MiB (20971520 B) on device 0; top site keep_loss (leak.c:54) < main (leak.c:76) (20.0 MiB)
FAIL peak < 112MiB: peak reserved 112 MiB (117440512 B) on device 0; top site alloc_weights (leak.c:29) < main (leak.c:72) (32.0 MiB)
memtrace check: 2 of 2 checks failed" "leak: text"
"$MEMTRACE" check "peak <= 112MiB" -r "failures == 0" "$T/trace.bin" >"$T/pass.txt" 2>&1
expect_eq "$?" 0 "leak passing: exit status"
expect_eq "$(cat "$T/pass.txt")" "memtrace check: all 2 checks passed (2 rules)" "leak passing: text"

# --- fragmentation: 2 failed cudaMalloc of 30 MiB, 2 OOM retries ------------
SIMCUDA_MEM=400M TRACE=$T/frag.bin traced "$SAMPLES/fragmentation" >/dev/null 2>"$T/err" ||
	fail "fragmentation failed: $(cat "$T/err")"
check frag "failures == 0" "failures <= 2" "oom_retries == 0" "oom_retries == 2" \
	"peak <= 100MiB" "live_at_exit == 0" "$T/frag.bin"
expect_eq "$rc" 1 "fragmentation: exit status"
expect_eq "$(results "$T/frag.json")" "failures == 0 | FAIL 2 0 dev=0
failures <= 2 | pass 2 2 dev=0
oom_retries == 0 | FAIL 2 0 dev=0
oom_retries == 2 | pass 2 2 dev=0
peak <= 100MiB | pass $((100 * MiB)) $((100 * MiB)) dev=0
live_at_exit == 0 | pass 0 0 dev=0" "fragmentation: results"
"$MEMTRACE" check "failures == 0" "$T/frag.bin" >"$T/frag.txt"
grep -q '^FAIL failures == 0: failed allocations 2 on device 0; top site segment_new (fragmentation.c:[0-9]*) < cache_alloc (fragmentation.c:[0-9]*) (30.0 MiB)$' "$T/frag.txt" ||
	fail "fragmentation: failure line: $(cat "$T/frag.txt")"

# --- multiprocess: per rank, pid and device ----------------------------------
SIMCUDA_DEVICES=2 TRACE=$T/mp.bin traced "$SAMPLES/multiprocess" >/dev/null 2>"$T/err" ||
	fail "multiprocess failed: $(cat "$T/err")"
set -- "$T"/mp.*.bin
[ $# = 2 ] || fail "multiprocess: expected 2 traces, got $#"
pid1=$(for f in "$T"/mp.*.bin; do "$MEMTRACE" dump "$f" | awk '/^process .* rank=1 / { sub(/^process pid=/, ""); sub(/ .*/, ""); print; exit }'; done)
[ -n "$pid1" ] || fail "multiprocess: no pid of rank 1 in the dump"
check mp "peak[rank:0] <= 48MiB" "peak[rank:1] <= 79MiB" "peak[pid:$pid1] <= 80MiB" \
	"peak[dev1] <= 80MiB" "peak[dev0] < 48MiB" "peak[dev7] <= 1GiB" "$T"/mp.*.bin
expect_eq "$rc" 1 "multiprocess: exit status"
expect_eq "$(results "$T/mp.json" | sed "s/pid:$pid1/pid:P1/")" "peak[rank:0] <= 48MiB | pass $((48 * MiB)) $((48 * MiB)) 
peak[rank:1] <= 79MiB | FAIL $((80 * MiB)) $((79 * MiB)) 
peak[pid:P1] <= 80MiB | pass $((80 * MiB)) $((80 * MiB)) 
peak[dev1] <= 80MiB | pass $((80 * MiB)) $((80 * MiB)) dev=1
peak[dev0] < 48MiB | FAIL $((48 * MiB)) $((48 * MiB)) dev=0
peak[dev7] <= 1GiB | FAIL the run used no device 7  dev=7" "multiprocess: results"

# --- shm-leak: two 4 MiB batches left in /dev/shm ----------------------------
TRACE=$T/shm.bin traced "$SAMPLES/shm-leak" >/dev/null 2>"$T/err" || fail "shm-leak failed: $(cat "$T/err")"
check shm "shm_left == 0" "shm_left <= 8MiB" "$T"/shm.*.bin
expect_eq "$rc" 1 "shm: exit status"
expect_eq "$(results "$T/shm.json")" "shm_left == 0 | FAIL $((8 * MiB)) 0 
shm_left <= 8MiB | pass $((8 * MiB)) $((8 * MiB)) " "shm: results"

# --- activations against its --checkpoint run: 176 MiB vs 128 MiB -------------
TRACE=$T/act.bin traced "$SAMPLES/activations" >/dev/null 2>"$T/err" || fail "activations failed"
TRACE=$T/ckpt.bin traced "$SAMPLES/activations" --checkpoint >/dev/null 2>"$T/err" || fail "activations --checkpoint failed"
# 128 MiB + 37.5% = 176 MiB exactly; + 5% = 134.4 MiB, rounded down
check rel --baseline "$T/ckpt.bin" "peak <= baseline + 5%" "peak <= baseline + 37.5%" \
	"peak <= baseline + 48MiB" "peak < baseline + 48MiB" "live_at_exit <= baseline" "$T/act.bin"
expect_eq "$rc" 1 "baseline: exit status"
expect_eq "$(results "$T/rel.json")" "peak <= baseline + 5% | FAIL $((176 * MiB)) $((128 * MiB * 105 / 100)) dev=0
peak <= baseline + 37.5% | pass $((176 * MiB)) $((176 * MiB)) dev=0
peak <= baseline + 48MiB | pass $((176 * MiB)) $((176 * MiB)) dev=0
peak < baseline + 48MiB | FAIL $((176 * MiB)) $((176 * MiB)) dev=0
live_at_exit <= baseline | pass 0 0 dev=0" "baseline: results"
# the other way round: the checkpointed run is within the baseline
"$MEMTRACE" check --baseline "$T/act.bin" "peak <= baseline" "$T/ckpt.bin" >/dev/null
expect_eq "$?" 0 "baseline: checkpointed run passes"
# the baseline as the JSON of `memtrace report --json`: the same figures
"$MEMTRACE" report --json --no-db "$T/ckpt.bin" >"$T/ckpt.json" 2>"$T/err" || fail "report --json: $(cat "$T/err")"
check reljson --baseline "$T/ckpt.json" "peak <= baseline + 5%" "peak <= baseline + 37.5%" \
	"peak <= baseline + 48MiB" "peak < baseline + 48MiB" "live_at_exit <= baseline" \
	"peak[dev0] <= baseline + 37.5%" "allocated_peak <= baseline + 37.5%" "failures <= baseline" \
	"oom_retries <= baseline" "shm_left <= baseline" "$T/act.bin"
expect_eq "$rc" 1 "JSON baseline: exit status"
expect_eq "$(results "$T/reljson.json")" "peak <= baseline + 5% | FAIL $((176 * MiB)) $((128 * MiB * 105 / 100)) dev=0
peak <= baseline + 37.5% | pass $((176 * MiB)) $((176 * MiB)) dev=0
peak <= baseline + 48MiB | pass $((176 * MiB)) $((176 * MiB)) dev=0
peak < baseline + 48MiB | FAIL $((176 * MiB)) $((176 * MiB)) dev=0
live_at_exit <= baseline | pass 0 0 dev=0
peak[dev0] <= baseline + 37.5% | pass $((176 * MiB)) $((176 * MiB)) dev=0
allocated_peak <= baseline + 37.5% | pass $((176 * MiB)) $((176 * MiB)) dev=0
failures <= baseline | pass 0 0 dev=0
oom_retries <= baseline | pass 0 0 
shm_left <= baseline | pass 0 0 " "JSON baseline: results"
# the text is the same as with the baseline trace
"$MEMTRACE" check --baseline "$T/ckpt.bin" "peak <= baseline + 5%" "peak <= baseline + 37.5%" "$T/act.bin" >"$T/rel-bin.txt"
"$MEMTRACE" check --baseline "$T/ckpt.json" "peak <= baseline + 5%" "peak <= baseline + 37.5%" "$T/act.bin" >"$T/rel-json.txt"
expect_eq "$(cat "$T/rel-json.txt")" "$(cat "$T/rel-bin.txt")" "JSON baseline: text as with the trace"
exit 0
