#!/bin/sh
# A failed allocation with no current context names no device ("device -1"
# was printed): drv-nocontext fails a cuMemAlloc with no context, then one
# of 1 PiB on device 1 (the recorder takes the device of the current
# context).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
SIMCUDA_DEVICES=2 traced "$CLIENTS/drv-nocontext" >out 2>err || fail "drv-nocontext failed: $(cat err)"
"$MEMTRACE" report --no-db "$T/trace.bin" >text 2>err || fail "report failed: $(cat err)"
expect_eq "$(grep -E '^  \+[0-9.]+ [mu]?s  cuMemAlloc_v2 ' text | sed 's/^  +[0-9.]* [mu]*s  //')" \
"cuMemAlloc_v2 of 1.00 MiB with no current context: CUDA_ERROR_INVALID_CONTEXT (201)
cuMemAlloc_v2 of 1.00 PiB on device 1: CUDA_ERROR_OUT_OF_MEMORY (2)" "the failures' devices"
exit 0
