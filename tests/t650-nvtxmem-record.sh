#!/bin/sh
# t650: NVTX's memory extension recorded with no change to the program.
# rt-nvtxmem is built with the toolkit's header-only nvtx3/nvToolsExtMem.h
# and knows nothing of memtrace; `memtrace run` sets NVTX_INJECTION64_PATH
# and the extension finds InitializeInjectionNvtxExtension there. Checks
# the nvtx_mem records (one per region of a batch, in order, with their
# heap, address relative to the heap, size, handle, reference type, a
# stack; domains and heap names on heap_register), the format 2.2 header,
# and what the program does without memtrace (nothing changes).
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtxmem" ] || skip "no rt-nvtxmem (the CUDA toolkit's nvtx3 headers are missing)"
MiB=1048576

SIMCUDA_MEM=388M traced "$CLIENTS/rt-nvtxmem" pool 2>"$T/err" || fail "rt-nvtxmem pool failed: $(cat "$T/err")"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
head -n 1 "$T/dump" | grep -q "format 2\.2," || fail "not format 2.2: $(head -n 1 "$T/dump")"
# "op heap(name) addr-offset size handle(addr|own|-) usage": offsets in MiB
# from the heap a record names (or, without one, the heap holding it)
awk -v M=$MiB '
function hex(s,  i, c, v) { v = 0; s = tolower(substr(s, 3)); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }; return v }
$1 != "nvtx_mem" { next }
{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
f["stack"] == 0 { print "no stack: " $0 }
f["op"] == "heap_register" { name[f["heap"]] = f["name"]; base[f["heap"]] = hex(f["addr"]); dom[f["heap"]] = f["domain"]
	print "heap_register", f["domain_name"], f["name"], f["size"] / M, f["usage"], (f["heap"] == f["addr"] ? "handle=addr" : "handle=" f["heap"]); next }
{ h = f["heap"]; if (h == "0x0") { a = hex(f["addr"] == "0x0" ? f["handle"] : f["addr"]); for (k in base) if (a >= base[k] && a < base[k] + 64 * M) h = k }
  if (f["domain"] != dom[h]) print "domain differs: " $0
  off = f["addr"] == "0x0" ? "-" : (hex(f["addr"]) - base[h]) / M
  hd = f["handle"] == "0x0" ? "-" : f["handle"] == f["addr"] ? "addr" : (hex(f["handle"]) - base[h]) / M
  print f["op"], name[h], off, f["size"] / M, hd, f["usage"], f["type"] }' "$T/dump" >"$T/got"
cat >"$T/want" <<'WANT'
heap_register "pools" "arena" 64 1 handle=addr
region_register "arena" 0 8 addr 0 1
region_register "arena" 8 8 addr 0 1
region_register "arena" 24 8 addr 0 1
region_register "arena" 40 16 addr 0 1
region_resize "arena" 24 12 - 0 1
region_unregister "arena" 8 0 - 1 0
heap_register "scratch-dom" "scratch" 16 1 handle=addr
region_register "scratch" 0 4 addr 0 1
region_register "scratch" 8 4 addr 0 1
region_unregister "scratch" - 0 0 2 0
heap_reset "scratch" - 0 - 0 0
region_register "scratch" 0 16 addr 0 1
heap_unregister "scratch" - 0 - 0 0
WANT
diff "$T/want" "$T/got" >"$T/diff" || fail "nvtx_mem records differ: $(cat "$T/diff")"
# the batch shares one stack; the two reg_one calls of "arena" have two
expect_eq "$(awk '$1 == "nvtx_mem" && /op=region_register/ { split($NF, s, "="); print s[2] }' "$T/dump" | head -n 4 | uniq | wc -l)" 3 \
	"stacks of arena's regions"
# the failed cudaMalloc is there, between the handle unregister and the reset
expect_eq "$(awk '$1 == "alloc" && /result=2/ { print "fail" } $1 == "nvtx_mem" && /op=heap_reset/ { print "reset" }' "$T/dump" | tr '\n' ' ')" \
	"fail reset " "the failure before the reset"

# misuse is recorded as it happened: 7 records, nothing refused
TRACE=$T/misuse.bin traced "$CLIENTS/rt-nvtxmem" misuse 2>"$T/err" || fail "rt-nvtxmem misuse failed: $(cat "$T/err")"
expect_eq "$("$MEMTRACE" dump "$T/misuse.bin" | grep -c '^nvtx_mem')" 8 "misuse records"

# without memtrace: NVTX finds no tool, the program runs the same
SIMCUDA_MEM=388M sim "$CLIENTS/rt-nvtxmem" pool || fail "rt-nvtxmem pool without memtrace failed"
sim "$CLIENTS/rt-nvtxmem" misuse || fail "rt-nvtxmem misuse without memtrace failed"
exit 0
