#!/bin/sh
# t652: a user's own injection library chained for NVTX's memory extension
# too (tests/clients/lib-nvtxtool.c: heap handles 0x7000, 0x7010, region
# handles 0x9000, ... of its own). The tool sees every memory call with its
# own domain handles, the call memtrace does not record (a region's name)
# included; the program gets the tool's handles back and passes them on
# (an unregister by the tool's region handle); memtrace's figures are the
# same as without the tool. A tool whose init fails: memtrace alone.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtxmem" ] || skip "no rt-nvtxmem (the CUDA toolkit's nvtx3 headers are missing)"
command -v python3 >/dev/null 2>&1 || skip "no python3"

# pools JSON without times and addresses
pools() {
	"$MEMTRACE" report --json --no-db "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)["nvtx_pools"]
def clean(o):
    if isinstance(o, dict):
        return {k: clean(v) for k, v in o.items() if k not in ("time_ns", "first_heap_addr", "frames", "pid")}
    if isinstance(o, list):
        return [clean(v) for v in o]
    return o
print(json.dumps(clean(d), sort_keys=True, indent=1))'
}

SIMCUDA_MEM=388M traced "$CLIENTS/rt-nvtxmem" pool 2>"$T/err" || fail "rt-nvtxmem pool failed: $(cat "$T/err")"
pools "$T/trace.bin" >"$T/alone" || fail "no pools alone"

: >"$T/tool.log"
SIMCUDA_MEM=388M NVTX_INJECTION64_PATH=$CLIENTS/lib-nvtxtool NVTXTOOL_LOG=$T/tool.log TRACE=$T/chain.bin \
	traced "$CLIENTS/rt-nvtxmem" pool 2>"$T/err" || fail "chained run failed: $(cat "$T/err")"
grep -v "^memtrace: wrote" "$T/err" | grep . && fail "chained run said: $(cat "$T/err")"
cat >"$T/want" <<'WANT'
init 0
domain pools 0
domain scratch-dom 1
mem init 0
heap_register pools arena 64
regions_register pools 0x7000 2
regions_register pools 0x7000 1
regions_register pools 0x7000 1
regions_resize pools 1
regions_unregister pools 1 1
regions_name pools weights
heap_register scratch-dom scratch 16
regions_register scratch-dom 0x7010 2
regions_unregister scratch-dom 2 1
heap_reset scratch-dom 0x7010
regions_register scratch-dom 0x7010 1
heap_unregister scratch-dom 0x7010
WANT
diff "$T/want" "$T/tool.log" >"$T/diff" || fail "the tool's calls differ: $(cat "$T/diff")"
# memtrace recorded the tool's handles, as the program got them
"$MEMTRACE" dump "$T/chain.bin" | awk '$1 == "nvtx_mem" && (/op=heap_register/ || /handle=0x900/) { for (i = 2; i <= NF; i++) if ($i ~ /^(op|heap|handle)=/) printf "%s ", $i; print "" }' >"$T/got"
cat >"$T/want" <<'WANT'
op=heap_register heap=0x7000 handle=0x0 
op=heap_register heap=0x7010 handle=0x0 
op=region_register heap=0x7010 handle=0x9000 
op=region_register heap=0x7010 handle=0x9001 
op=region_unregister heap=0x0 handle=0x9000 
WANT
diff "$T/want" "$T/got" >"$T/diff" || fail "handles recorded: $(cat "$T/diff")"
pools "$T/chain.bin" >"$T/chained" || fail "no pools chained"
diff "$T/alone" "$T/chained" >"$T/diff" || fail "figures with the tool differ: $(cat "$T/diff")"

# a tool whose init fails: memtrace records alone, the same figures
SIMCUDA_MEM=388M NVTXTOOL_FAIL=1 NVTX_INJECTION64_PATH=$CLIENTS/lib-nvtxtool TRACE=$T/noinit.bin \
	traced "$CLIENTS/rt-nvtxmem" pool 2>"$T/err" || fail "run with a failing tool failed"
expect_eq "$(grep -c "failed to initialize" "$T/err")" 1 "said once: init failed"
pools "$T/noinit.bin" >"$T/noinit" || fail "no pools with a failing tool"
diff "$T/alone" "$T/noinit" >"$T/diff" || fail "figures with a failing tool differ: $(cat "$T/diff")"
exit 0
