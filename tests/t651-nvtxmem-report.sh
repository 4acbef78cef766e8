#!/bin/sh
# t651: the report's section on pools announced by NVTX, text and JSON,
# for rt-nvtxmem pool (figures worked out in its header, MiB from each
# heap's start):
#   arena (64 MiB, domain pools): regions [0,8) [8,16) [24,32) [40,56), the
#     third resized to [24,36): the peak, 44 MiB in 4 regions, holes
#     [16,24) [36,40) [56,64): 20 MiB free in 3, largest 8; then [8,16)
#     unregistered: at the failed cudaMalloc of 24 MiB 36 MiB in 3
#     regions, holes [8,24) [36,40) [56,64): 28 MiB in 3, largest 16, enough
#     for 24 MiB but in pieces; left so to the end
#   scratch (16 MiB, domain scratch-dom): [0,4) [8,12), [0,4) unregistered
#     by handle: at the failure 4 MiB in 1, holes [0,8) [12,16), largest 8;
#     reset, [0,16) registered (its peak: 16 MiB, no free space),
#     unregistered: nothing left
#   sites: arena's batch (2 regions, at most 16 MiB live), reg_one twice
#     (16 MiB, and 8 then 12 MiB); scratch's reg_one 16, batch 8 (2 regions)
# and rt-nvtxmem misuse: each misuse counted, left out, the first said.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtxmem" ] || skip "no rt-nvtxmem (the CUDA toolkit's nvtx3 headers are missing)"
command -v python3 >/dev/null 2>&1 || skip "no python3"

SIMCUDA_MEM=388M traced "$CLIENTS/rt-nvtxmem" pool 2>"$T/err" || fail "rt-nvtxmem pool failed: $(cat "$T/err")"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/report" 2>"$T/err" || fail "report failed: $(cat "$T/err")"
sed -n '/^pools announced by NVTX/,/^$/p' "$T/report" |
	sed -e 's/+[0-9.]* ms/+T/g' -e 's/0x[0-9a-f]*/0xA/g' -e 's/ *$//' -e 's/  */ /g' >"$T/got"
cat >"$T/want" <<'WANT'
pools announced by NVTX (nvToolsExtMem.h): 2 pools; their regions are buffers, the rest of their heaps free space (the pool's cache)
 pool 'arena' of domain 'pools' (NVTX heap, 64.0 MiB at 0xA): 36.0 MiB in 3 regions, 28.0 MiB free in 3 holes, largest 16.0 MiB, at its process's first failed allocation
 at its peak (+T): 44.0 MiB in 4 regions, 20.0 MiB free in 3 holes, largest 8.00 MiB
 at the failure at +T (cudaMalloc of 24.0 MiB): 36.0 MiB in 3 regions, 28.0 MiB free in 3 holes, largest 16.0 MiB: enough free, but in pieces
 at the end: 36.0 MiB in 3 regions still registered
 4 regions registered, by site (highest live):
 16.0 MiB 2 regions nvtxMemRegionsRegister (nvtxExtImplMem_v1.h:140) [inlined] < regions (rt-nvtxmem.c:67) < reg_batch (rt-nvtxmem.c:77)
 16.0 MiB 1 region nvtxMemRegionsRegister (nvtxExtImplMem_v1.h:140) [inlined] < regions (rt-nvtxmem.c:67) < reg_one (rt-nvtxmem.c:85) < pool (rt-nvtxmem.c:155) [inlined]
 12.0 MiB 1 region nvtxMemRegionsRegister (nvtxExtImplMem_v1.h:140) [inlined] < regions (rt-nvtxmem.c:67) < reg_one (rt-nvtxmem.c:85) < pool (rt-nvtxmem.c:154) [inlined]
 pool 'scratch' of domain 'scratch-dom' (NVTX heap, 16.0 MiB at 0xA): 4.00 MiB in 1 region, 12.0 MiB free in 2 holes, largest 8.00 MiB, at its process's first failed allocation
 at its peak (+T): 16.0 MiB in 1 region, no free space
 at the failure at +T (cudaMalloc of 24.0 MiB): 4.00 MiB in 1 region, 12.0 MiB free in 2 holes, largest 8.00 MiB
 at the end: no region registered, 0 heaps left
 reset 1 time
 3 regions registered, by site (highest live):
 16.0 MiB 1 region nvtxMemRegionsRegister (nvtxExtImplMem_v1.h:140) [inlined] < regions (rt-nvtxmem.c:67) < reg_one (rt-nvtxmem.c:85)
 8.00 MiB 2 regions nvtxMemRegionsRegister (nvtxExtImplMem_v1.h:140) [inlined] < regions (rt-nvtxmem.c:67) < reg_batch (rt-nvtxmem.c:77)

WANT
diff "$T/want" "$T/got" >"$T/diff" || fail "text section differs: $(cat "$T/diff")"

# the JSON: the same figures, field by field, in bytes
"$MEMTRACE" report --json --no-db "$T/trace.bin" >"$T/json" || fail "report --json failed"
python3 - "$T/json" <<'PY' || fail "JSON figures differ"
import json, sys
M = 1 << 20
d = json.load(open(sys.argv[1]))["nvtx_pools"]
def st(s): return (s["heaps"], s["size_bytes"] // M, s["regions"], s["live_bytes"] // M, s["free_bytes"] // M, s["holes"], s["largest_hole_bytes"] // M)
a, s = d["pools"]
want = {
    "arena": ("pools", 1, 4, 0, (1, 64, 4, 44, 20, 3, 8), [(1, 64, 3, 36, 28, 3, 16)], (1, 64, 3, 36, 28, 3, 16),
              [(16, 2, 8, 1), (12, 1, 12, 1), (16, 1, 16, 1)]),  # in the order of their first region
    "scratch": ("scratch-dom", 1, 3, 1, (1, 16, 1, 16, 0, 0, 0), [(1, 16, 1, 4, 12, 2, 8)], (0, 0, 0, 0, 0, 0, 0),
                [(8, 2, 0, 0), (16, 1, 0, 0)]),
}
ok = True
for p in (a, s):
    w = want[p["name"]]
    got = (p["domain"], p["heaps_registered"], p["regions_registered"], p["resets"], st(p["peak"]),
           [st(f["state"]) for f in p["failures"]], st(p["at_end"]),
           [(x["peak_live_bytes"] // M, x["regions_registered"], x["live_bytes_at_end"] // M, x["regions_at_end"]) for x in p["sites"]])
    if got != w:
        print(p["name"], got, "!=", w); ok = False
    if [f.get("api") for f in p["failures"]] != ["cudaMalloc"] or p["failures"][0]["requested_bytes"] != 24 * M:
        print(p["name"], "failure", p["failures"]); ok = False
if d["misuse"] != {"outside_heap": 0, "unknown_heap": 0, "unknown_region": 0, "overlap": 0}:
    print("misuse", d["misuse"]); ok = False
sys.exit(0 if ok else 1)
PY

# misuse: each counted, left out, the first said; the valid region stays
TRACE=$T/misuse.bin traced "$CLIENTS/rt-nvtxmem" misuse 2>"$T/err" || fail "rt-nvtxmem misuse failed"
"$MEMTRACE" report --no-db "$T/misuse.bin" >"$T/report" 2>"$T/err" || fail "report of misuse failed: $(cat "$T/err")"
sed -n '/^pools announced by NVTX/,/^$/p' "$T/report" | grep -e "misuse" -e "pool '" |
	sed -e 's/+[0-9.]* ms/+T/g' -e 's/0x5[0-9a-f]*/0xA/g' >"$T/got"
cat >"$T/want" <<'WANT'
  pool 'm' of domain 'bad' (NVTX heap, 8.00 MiB at 0xA): 2.00 MiB in 1 region, 6.00 MiB free in 1 hole, largest 6.00 MiB, at its peak
  misuse: 2 times a region not inside its heap, left out (the first at +T: 0xA, 4.00 MiB)
  misuse: 2 times a heap handle never registered (or unregistered), left out (the first at +T: 0x1234)
  misuse: 1 time an unregister or resize of no registered region, left out (the first at +T: 0xA)
  misuse: 1 time a region over one still registered, left out (the first at +T: 0xA, 2.00 MiB)
WANT
diff "$T/want" "$T/got" >"$T/diff" || fail "misuse lines differ: $(cat "$T/diff")"
"$MEMTRACE" report --json --no-db "$T/misuse.bin" | python3 -c '
import json, sys
d = json.load(sys.stdin)["nvtx_pools"]
sys.exit(d["misuse"] != {"outside_heap": 2, "unknown_heap": 2, "unknown_region": 1, "overlap": 1})' ||
	fail "misuse counts in the JSON"

# a run without NVTX memory calls: no section, no key
TRACE=$T/plain.bin traced "$CLIENTS/rt-nvtx" train 2>/dev/null || true
if [ -f "$T/plain.bin" ]; then
	"$MEMTRACE" report --no-db "$T/plain.bin" | grep -q "pools announced" && fail "a section without records"
	"$MEMTRACE" report --json --no-db "$T/plain.bin" | grep -q '"nvtx_pools"' && fail "a JSON key without records"
fi
exit 0
