# tests/rtlib.sh - sourced after lib.sh by the simulated runtime cases
# (tests/t031..t034): run one rt-sim-api case and compare its output and its
# driver calls with the expected ones.

# calls LOG: the driver's call log with addresses masked and pids named
# by order of appearance (parent, then child).
calls() {
	awk '{
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^addr=/) $i = "addr=X"
			if ($i ~ /^pid=/) {
				p = substr($i, 5)
				if (!(p in who)) who[p] = n++ ? "child" : "parent"
				$i = "pid=" who[p]
			}
		}
		print
	}' "$1"
}

# check CASE: `rt-sim-api CASE` on the simulated CUDA must print
# $T/CASE.out and make the driver calls $T/CASE.calls.
check() {
	rm -f "$T/calls.log"
	sim "$CLIENTS/rt-sim-api" "$1" >"$T/out" 2>&1 || fail "rt-sim-api $1 exited $?"
	diff -u "$T/$1.out" "$T/out" || fail "rt-sim-api $1: output differs"
	calls "$T/calls.log" >"$T/calls"
	diff -u "$T/$1.calls" "$T/calls" || fail "rt-sim-api $1: driver calls differ"
}
