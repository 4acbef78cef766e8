#!/bin/sh
# dlopen("libcuda.so.1") + dlsym("cuMemAlloc_v2"), as XLA and ctypes do:
# the program gets memtrace's wrappers, unknown names still fail, and
# dlsym(RTLD_NEXT) from the program still finds the next object (libc),
# not the one after libmemtrace.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/dl-dlsym" >"$T/out" 2>"$T/err" || fail "dl-dlsym failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump"
expect_eq "$(count '^alloc .* api=cuMemAlloc_v2 kind=device .*bytes=(2097152|5242880) result=0' "$T/dump")" 2 "allocations"
expect_eq "$(count '^free .* api=cuMemFree_v2 ' "$T/dump")" 2 "frees"
