#!/bin/sh
# A Python recursion deeper than the depth limit is cut at the limit, like
# a deep native stack: MEMTRACE_DEPTH bounds native and Python frames
# together, the innermost kept.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"
command -v python3 >/dev/null || skip "no python3"

for depth in 64 16; do
	MEMTRACE_DEPTH=$depth traced python3 "$PYCLIENT" deep >"$T/out" 2>"$T/err" ||
		fail "client failed: $(cat "$T/err")"
	"$MEMTRACE" dump --resolve-python "$T/trace.bin" >"$T/dump" || fail "dump failed"
	py_stack "$T/dump" alloc 2097152 >"$T/stack"
	expect_eq "$(wc -l <"$T/stack")" "$depth" "frames with MEMTRACE_DEPTH=$depth"
	py_only <"$T/stack" >"$T/py"
	expect_eq "$(head -n 1 "$T/py")" "py-alloc.py:$(line alloc_deep):recurse" "innermost Python frame"
	expect_eq "$(sed 1d "$T/py" | sort -u)" "py-alloc.py:$(line recurse):recurse" "the recursion's frames"
	# 300 levels do not fit: the stack ends inside the recursion.
	expect_eq "$(tail -n 1 "$T/stack")" "py py-alloc.py:$(line recurse):recurse" "outermost kept frame"
done
