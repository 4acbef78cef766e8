#!/bin/sh
# A thread with no Python frames (a pthread created in C, as autograd's and
# NCCL's threads are) keeps its native stack, while the Python thread that
# started it has Python frames.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"
command -v python3 >/dev/null || skip "no python3"

traced python3 "$PYCLIENT" thread "$PYHELPER" >"$T/out" 2>"$T/err" || fail "client failed: $(cat "$T/err")"
"$MEMTRACE" dump --resolve-python "$T/trace.bin" >"$T/dump" || fail "dump failed"
py_stack "$T/dump" alloc 7340032 >"$T/stack"
[ -s "$T/stack" ] || fail "no stack for the native thread's allocation"
expect_eq "$(grep -c '^py ' "$T/stack")" 0 "Python frames in the native thread's stack"
# The stack reaches lib-pyhelper's thread function (its module's range).
range=$(awk '$1 == "module" && $0 ~ /path=".*\/lib-pyhelper"/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	print f["start"], f["end"] }' "$T/dump")
[ -n "$range" ] || fail "no module record for lib-pyhelper"
id=$(awk '$1 == "alloc" && / bytes=7340032 / { sub(/stack=/, "", $NF); print $NF }' "$T/dump")
in_lib=$(awk -v r="$range" -v id="$id" "$AWK_HEX"'
	BEGIN { split(r, a, " "); lo = hex(a[1]); hi = hex(a[2]) }
	$1 == "stack" && $2 == "id=" id { for (i = 4; i <= NF; i++) { x = hex($i); if (x >= lo && x < hi) n++ } }
	END { print n + 0 }' "$T/dump")
[ "$in_lib" -ge 1 ] || fail "the native thread's stack has no frame in lib-pyhelper"
tid_main=$(awk '$1 == "process" { sub(/pid=/, "", $2); print $2 }' "$T/dump")
tid_alloc=$(awk '$1 == "alloc" && / bytes=7340032 / { for (i = 2; i <= NF; i++) if ($i ~ /^tid=/) { sub(/tid=/, "", $i); print $i } }' "$T/dump")
[ "$tid_alloc" != "$tid_main" ] || fail "the allocation did not come from another thread"
