#!/bin/sh
# Python source lines in stacks, on the machine's python3: a ctypes client
# allocates from named functions on known lines; each event's stack holds
# the Python frames (file, function, line, innermost first) between native
# frames, where the interpreter's loop is, and the code objects are in
# pycode records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"
command -v python3 >/dev/null || skip "no python3"
v=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case $v in 3.9|3.10|3.11|3.12|3.13) ;; *) skip "python3 is $v, not 3.9 .. 3.13" ;; esac

traced python3 "$PYCLIENT" basic >"$T/out" 2>"$T/err" || fail "client failed: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "done basic" "client output"
[ -s "$T/err" ] && grep -v '^memtrace: wrote' "$T/err" | grep -q . && fail "unexpected stderr: $(cat "$T/err")"
"$MEMTRACE" dump --resolve-python "$T/trace.bin" >"$T/dump" || fail "dump failed"

# The code objects, with their first line and version.
grep -q "^pycode id=[0-9]* line=$(($(line alloc_basic) - 2)) version=$v linetable=[0-9]* file=\"$PYCLIENT\" name=\"alloc_basic\"\$" "$T/dump" ||
	fail "no pycode record for alloc_basic: $(grep ^pycode "$T/dump" | head -n 3)"

# The allocation: the traceback, innermost first.
py_stack "$T/dump" alloc 1048576 >"$T/stack"
py_only <"$T/stack" >"$T/py"
printf '%s\n' "py-alloc.py:$(line alloc_basic):alloc_basic" "py-alloc.py:$(line caller_basic):caller_basic" \
	"py-alloc.py:$(line main_basic):main" >"$T/want"
head -n 3 "$T/py" | diff -u "$T/want" - || fail "Python frames of the allocation"
tail -n 1 "$T/py" | grep -q '^py-alloc.py:[0-9]*:<module>$' || fail "outermost Python frame is not <module>"
# Native frames on both sides: the CUDA call inside, the interpreter outside.
expect_eq "$(head -n 1 "$T/stack")" native "innermost frame"
expect_eq "$(tail -n 1 "$T/stack")" native "outermost frame"
# The free, one line further down.
py_stack "$T/dump" free 1048576 | py_only | head -n 1 >"$T/py"
expect_eq "$(cat "$T/py")" "py-alloc.py:$(line free_basic):caller_basic" "Python frame of the free"

# Without --resolve-python, frames print as py:CODE_ID+OFFSET.
"$MEMTRACE" dump "$T/trace.bin" | grep -qE '^stack id=.* py:[0-9]+\+[0-9]+ ' || fail "raw python frames"
# MEMTRACE_PYTHON=0: native frames only, nothing said.
MEMTRACE_PYTHON=0 traced python3 "$PYCLIENT" basic >"$T/out" 2>"$T/err" || fail "client failed"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump0"
expect_eq "$(count 'py:|^pycode|^note' "$T/dump0")" 0 "Python records with MEMTRACE_PYTHON=0"
