#!/bin/sh
# An interpreter version memtrace does not know (simulated with
# MEMTRACE_PYTHON_VERSION, and a real CPython 3.8 when ~/.pyenv has one):
# native frames only, one warning on stderr and one note in the trace, the
# program's output unchanged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"
command -v python3 >/dev/null || skip "no python3"

check_fallback() { # WHAT VERSION PYTHON...
	what=$1 v=$2; shift 2
	traced "$@" "$PYCLIENT" all "$PYHELPER" >"$T/out" 2>"$T/err" || fail "$what: client failed: $(cat "$T/err")"
	expect_eq "$(cat "$T/out")" "done all" "$what: client output"
	msg="python frames left out, native frames only: python $v is not supported (3.9 to 3.13 are)"
	expect_eq "$(grep -v '^memtrace: wrote' "$T/err")" "memtrace: warning: $msg" "$what: stderr"
	"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "$what: dump failed"
	expect_eq "$(count '^note ' "$T/dump")" 1 "$what: notes"
	expect_eq "$(grep -c "text=\"$msg\"" "$T/dump")" 1 "$what: note text"
	expect_eq "$(count 'py:|^pycode' "$T/dump")" 0 "$what: Python frames"
	expect_eq "$(count '^alloc .* stack=0$' "$T/dump")" 0 "$what: events without a stack"
}

MEMTRACE_PYTHON_VERSION=3.99 check_fallback "pretend 3.99" 3.99 python3
py38=$(ls -d "$HOME"/.pyenv/versions/3.8.*/bin/python3.8 2>/dev/null | tail -n 1)
[ -n "$py38" ] && check_fallback "real 3.8" 3.8 "$py38"
exit 0
