#!/bin/sh
# The shared-runtime path: every cudaMalloc/cudaFree of rt-basic is one
# event labelled with the runtime API (not also cuMemAlloc_v2), failed calls
# included, and the trace holds exactly what the simulator did.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/rt-basic" >"$T/out" 2>"$T/err" || fail "rt-basic failed under memtrace: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"

expect_eq "$(count '^alloc .* api=cudaMalloc kind=device ' "$T/dump")" 4 "cudaMalloc events"
expect_eq "$(count '^alloc .* api=cudaMalloc kind=device .*bytes=1048576 result=0 ' "$T/dump")" 1 "1 MiB allocation"
expect_eq "$(count '^alloc .* api=cudaMalloc .* addr=0x0 bytes=1125899906842624 result=2\(runtime\) ' "$T/dump")" 1 "failed 1 PiB allocation keeps its size and the runtime's error"
expect_eq "$(count '^free .* api=cudaFree ' "$T/dump")" 4 "cudaFree events (3 + 1 double free)"
expect_eq "$(count '^free .* api=cudaFree .* result=1\(runtime\) ' "$T/dump")" 1 "double free recorded with the runtime's error"
expect_eq "$(count 'api=cuMem' "$T/dump")" 0 "driver-level duplicates"
expect_eq "$(count '^alloc .* dev=0 ' "$T/dump")" 4 "device of allocations"
expect_eq "$(count '^driver version=13000' "$T/dump")" 1 "driver version record"
expect_eq "$(count '^process pid=[0-9]+ ' "$T/dump")" 1 "process record"

# A device memory sample when device 0 was first used, one after the failure.
[ "$(count '^meminfo .* dev=0 ' "$T/dump")" -ge 2 ] || fail "expected at least 2 meminfo samples"

# Every event has a stack, and the stacks reach main() in rt-basic.
expect_eq "$(count '^(alloc|free) .* stack=0$' "$T/dump")" 0 "events without a stack"
range=$(awk '$1 == "module" && $0 ~ /path=".*\/rt-basic"/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	print f["start"], f["end"] }' "$T/dump")
[ -n "$range" ] || fail "no module record for rt-basic"
in_exe=$(awk -v r="$range" "$AWK_HEX"'
	BEGIN { split(r, a, " "); lo = hex(a[1]); hi = hex(a[2]) }
	$1 == "stack" { for (i = 4; i <= NF; i++) { x = hex($i); if (x >= lo && x < hi) { n++; break } } }
	END { print n + 0 }' "$T/dump")
[ "$in_exe" -ge 1 ] || fail "no stack has a frame in rt-basic"

# The program's own output and exit status are unchanged.
sim "$CLIENTS/rt-basic" >"$T/out.plain" 2>&1 || fail "rt-basic failed without memtrace"
diff -u "$T/out.plain" "$T/out" || fail "output differs under memtrace"
