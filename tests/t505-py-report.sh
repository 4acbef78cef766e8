#!/bin/sh
# Python frames in the report: the peak's site reads like a traceback of
# the client (file, function, line), the frames are marked as Python in the
# JSON, and the highlighted frame is the innermost line of the user's own
# code, not the interpreter or ctypes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"
command -v python3 >/dev/null || skip "no python3"
v=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case $v in 3.9|3.10|3.11|3.12|3.13) ;; *) skip "python3 is $v, not 3.9 .. 3.13" ;; esac

traced python3 "$PYCLIENT" basic >"$T/out" 2>"$T/err" || fail "client failed: $(cat "$T/err")"
"$MEMTRACE" report "$T/trace.bin" >"$T/report" 2>"$T/report.err" || fail "report failed: $(cat "$T/report.err")"
a=$(line alloc_basic) c=$(line caller_basic)
grep -q "set by cudaMalloc of 1.00 MiB at alloc_basic (py-alloc.py:$a) < caller_basic (py-alloc.py:$c)" "$T/report" ||
	fail "the peak is not attributed to the Python lines: $(grep 'set by' "$T/report")"

"$MEMTRACE" report --json "$T/trace.bin" >"$T/json" || fail "report --json failed"
# the first frame of the peak site marked user is the Python line alloc_basic
tr -d '\n' <"$T/json" | grep -o '{"function": "alloc_basic", "file": "[^"]*py-alloc.py", "line": '"$a"', "module": "python", "offset": "0x[0-9a-f]*", "inlined": false, "user": true, "python": true}' >/dev/null ||
	fail "no user Python frame for alloc_basic in the JSON"
expect_eq "$(tr -d '\n' <"$T/json" | grep -o '"user": true, "python": false' | wc -l)" 0 "native frames highlighted in a Python stack"
