#!/bin/sh
# bench/load.sh - the heavy robustness runs, too long for `make test` on a
# small machine (tests/ keep scaled-down versions):
#   1. load: THREADS=16 threads x PAIRS=1000000 cudaMalloc/cudaFree pairs
#      under memtrace: no event lost or doubled (the trace against the
#      simulator's own call log, as multisets), no deadlock (a timeout), and
#      the same output and exit status as without memtrace;  (t106: 16 x 20000)
#   2. SIGKILL at random moments, TRIALS=100 trials of t109;  (t109: 20)
#   3. fork stress, FORKS=200 forks while 4 threads allocate (t404: 40).
# Prints one line per check and exits non-zero if any failed.
#   THREADS=16 PAIRS=1000000 TRIALS=100 FORKS=200 bench/load.sh
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
B=$ROOT/build
SIM=$B/simcuda/driver:$B/simcuda/runtime
THREADS=${THREADS:-16}
PAIRS=${PAIRS:-1000000}
TRIALS=${TRIALS:-100}
FORKS=${FORKS:-200}
LIMIT=${LIMIT:-3600}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-load.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failed=0

ok() { echo "ok      $*"; }
bad() { echo "FAILED  $*"; failed=1; }

# The normalized events of a call log (stdin, "log") or a dump ("dump"),
# one key per event, counted +1 for the log and -1 for the trace: keys left
# non-zero are events lost or doubled. Addresses repeat, so few keys.
KEY='function key(src,   i, kv, f) {
	delete f
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	if (src == "log") { size = f["size"] } else {
		size = f["bytes"]; sub(/,estimated/, "", f["kind"]); sub(/\(runtime\)/, "", f["result"]) }
	if ($1 == "alloc") return "alloc " f["kind"] " " f["dev"] " " f["addr"] " " size " " f["result"]
	return "free " f["addr"] " " f["result"]
}'

# --- 1. load -------------------------------------------------------------
echo "load: $THREADS threads x $PAIRS pairs"
LD_LIBRARY_PATH=$SIM timeout "$LIMIT" "$B/tests/clients/rt-threads" "$THREADS" "$PAIRS" >"$TMP/plain.out" 2>&1
plain=$?
mkfifo "$TMP/calls.fifo"
# the simulator's log is counted as it is written (it would be gigabytes)
awk "$KEY"' ($1 == "alloc" || $1 == "free") && $0 !~ / kind=pool_/ { n[key("log")]++; total++ }
	END { for (k in n) print n[k], k; print total, "TOTAL" }' "$TMP/calls.fifo" >"$TMP/log.counts" &
counter=$!
start=$(date +%s)
LD_LIBRARY_PATH=$SIM SIMCUDA_LOG=$TMP/calls.fifo timeout "$LIMIT" "$B/memtrace" run --depth 8 -o "$TMP/load.bin" -- \
	"$B/tests/clients/rt-threads" "$THREADS" "$PAIRS" >"$TMP/traced.out" 2>"$TMP/traced.err"
traced=$?
end=$(date +%s)
wait $counter
if [ $traced = 124 ]; then
	bad "load: no result after ${LIMIT}s (a deadlock?)"
elif [ $traced != $plain ] || ! cmp -s "$TMP/plain.out" "$TMP/traced.out"; then
	bad "load: exit $traced and output '$(cat "$TMP/traced.out")' under memtrace, exit $plain and '$(cat "$TMP/plain.out")' without"
else
	ok "load: same output and exit status with and without memtrace ($((end - start)) s traced)"
	"$B/memtrace" dump "$TMP/load.bin" 2>"$TMP/dump.err" |
		awk "$KEY"' $1 == "alloc" || $1 == "free" { n[key("dump")]++; total++ }
		END { for (k in n) print n[k], k; print total, "TOTAL" }' >"$TMP/trace.counts"
	sort -k2 "$TMP/log.counts" >"$TMP/a"
	sort -k2 "$TMP/trace.counts" >"$TMP/b"
	want=$((THREADS * PAIRS * 2))
	logged=$(awk '$2 == "TOTAL" { print $1 }' "$TMP/a")
	if [ -s "$TMP/dump.err" ]; then
		bad "load: dump warned: $(cat "$TMP/dump.err")"
	elif [ "$logged" != "$want" ]; then
		bad "load: the simulator logged $logged events, $want expected"
	elif ! cmp -s "$TMP/a" "$TMP/b"; then
		bad "load: trace and simulator log differ (count key):
$(diff "$TMP/a" "$TMP/b" | head -n 20)"
	else
		ok "load: the trace holds exactly the $want events of the simulator's log"
	fi
fi
rm -f "$TMP"/load*.bin

# --- 2. SIGKILL trials, 3. fork stress: the test cases, scaled up ----------
run_case() { # NAME VAR=VALUE
	if env "$2" sh "tests/$1" >"$TMP/case.out" 2>&1; then
		ok "$1 with $2"
	else
		bad "$1 with $2:
$(tail -n 20 "$TMP/case.out")"
	fi
}
run_case t109-rec-sigkill.sh "TRIALS=$TRIALS"
run_case t404-rob-fork-stress.sh "FORKS=$FORKS"
exit $failed
