# tests/lib.sh - sourced by every tests/tNNN-*.sh end-to-end case.
#
# Gives each case: $ROOT (the checkout), $B (build dir), $T (a fresh temp
# dir, removed on success), $SIM (LD_LIBRARY_PATH of the simulated driver
# and runtime), $MEMTRACE (the command), $CLIENTS (test client binaries),
# and helpers that fail the case with one clear line.
#
# A case exits 0 on success, 77 to say it was skipped (with a reason on
# stdout), anything else on failure.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
SIM=$B/simcuda/driver:$B/simcuda/runtime
MEMTRACE=$B/memtrace
CLIENTS=$B/tests/clients
SAMPLES=$B/samples
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-test.XXXXXX")
trap 'rc=$?; if [ $rc = 0 ] || [ $rc = 77 ]; then rm -rf "$T"; else echo "  (kept $T)"; fi' EXIT
unset MEMTRACE_OUTPUT MEMTRACE_DEPTH MEMTRACE_FOLLOW MEMTRACE_ROOT_PID MEMTRACE_RUN_ID \
      MEMTRACE_SAMPLE_MS SIMCUDA_LOG SIMCUDA_LOOKUP_LOG SIMCUDA_DEVICES SIMCUDA_MEM \
      SIMCUDA_CTX_OVERHEAD SIMCUDA_POOL_CHUNK MEMTRACE_PYTHON MEMTRACE_PYTHON_VERSION

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}

# sim CMD... : run CMD on the simulated CUDA (driver and runtime), with the
# simulator's call log in $T/calls.log.
sim() {
	LD_LIBRARY_PATH=$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} SIMCUDA_LOG=${SIMCUDA_LOG:-$T/calls.log} "$@"
}

# traced CMD... : run CMD on the simulated CUDA under `memtrace run`, trace
# in $T/trace.bin (override with TRACE=...), call log in $T/calls.log; the
# traces written listed on stderr, not summed up (t203 checks the summary).
traced() {
	sim "$MEMTRACE" run --no-summary -o "${TRACE:-$T/trace.bin}" -- "$@"
}

# dump_events TRACE: the trace's events, one normalized line each, sorted:
#   alloc KIND DEV ADDR BYTES RESULT      free ADDR RESULT
# (frees carry no size or device in a trace: the analyzer pairs them).
dump_events() {
	"$MEMTRACE" dump "$1" | awk '
	$1 == "alloc" || $1 == "free" {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		sub(/,estimated/, "", f["kind"]); sub(/\(runtime\)/, "", f["result"])
		if ($1 == "alloc") print "alloc", f["kind"], f["dev"], f["addr"], f["bytes"], f["result"]
		else print "free", f["addr"], f["result"]
	}' | sort
}

# log_events LOG [PID]: the simulator call log in the same normal form
# (pool chunk lines left out: they are compared with pool records).
log_events() {
	awk -v pid="${2:-}" '
	($1 == "alloc" || $1 == "free") {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["kind"] ~ /^pool_/ || (pid != "" && f["pid"] != pid)) next
		if ($1 == "alloc") print "alloc", f["kind"], f["dev"], f["addr"], f["size"], f["result"]
		else print "free", f["addr"], f["result"]
	}' "$1" | sort
}

# same_events TRACE LOG [PID]: the trace holds exactly the logged events.
same_events() {
	dump_events "$1" >"$T/events.trace"
	log_events "$2" "${3:-}" >"$T/events.log"
	diff -u "$T/events.log" "$T/events.trace" >"$T/events.diff" ||
		fail "trace and simulator log differ:
$(head -n 30 "$T/events.diff")"
}

# count PATTERN FILE: number of lines matching an extended regex
count() { grep -cE "$1" "$2" || true; }

# An awk function hex("0x7f..") for any awk (mawk has no strtonum); exact
# below 2^53, which user-space addresses are.
AWK_HEX='function hex(s,  i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'
