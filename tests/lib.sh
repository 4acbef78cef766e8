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
      SIMCUDA_CTX_OVERHEAD SIMCUDA_POOL_CHUNK

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
