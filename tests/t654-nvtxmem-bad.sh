#!/bin/sh
# t654: damaged nvtx_mem records. A real trace of rt-nvtxmem pool with its
# first heap_register poked: op 0, and names longer than the record, are
# refused by every reader with one exact line and status 1; an op this
# reader does not know (a later format's) is loaded, skipped and said, the
# regions of the heap it would have registered then counted as misuse of
# an unknown heap (never a figure without its heap).
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtxmem" ] || skip "no rt-nvtxmem (the CUDA toolkit's nvtx3 headers are missing)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1

SIMCUDA_MEM=388M TRACE=$T/good.bin traced "$CLIENTS/rt-nvtxmem" pool 2>"$T/err" || fail "rt-nvtxmem pool failed"
# the offset of the first heap_register: an 8-aligned head 22, 0, op 1, 0
off=$(python3 -c '
import sys
b = open("good.bin", "rb").read()
i = b.find(b"\x16\x00\x01\x00")
while i >= 0 and i % 8:
    i = b.find(b"\x16\x00\x01\x00", i + 1)
print(i)')
[ "$off" -gt 0 ] || fail "no heap_register record in the trace"
hex=$(printf '%#x' "$off")
poke() { cp good.bin "$1"; printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }

poke op0.bin $((off + 2)) '\000'
poke names.bin $((off + 66)) '\210\023'          # name_len 5000
poke op99.bin $((off + 2)) '\143'
for c in dump report; do
	"$MEMTRACE" $c op0.bin >out 2>err; rc=$?
	expect_eq "$rc" 1 "$c op0.bin: status"
	expect_eq "$(cat err)" "memtrace: 'op0.bin': corrupt nvtx_mem record at offset $hex: op 0" "$c op0.bin"
	"$MEMTRACE" $c names.bin >out 2>err; rc=$?
	expect_eq "$rc" 1 "$c names.bin: status"
	expect_eq "$(cat err)" "memtrace: 'names.bin': corrupt nvtx_mem record at offset $hex: names need 5077 bytes, the record has 88" "$c names.bin"
done

"$MEMTRACE" report --no-db op99.bin >out 2>err || fail "report of an unknown op failed: $(cat err)"
expect_eq "$(cat err)" "" "report of an unknown op: stderr"
grep -q "^  note: 1 record of an operation this memtrace does not know: skipped$" out || fail "the unknown op not said"
grep -q "^  misuse: 4 times a heap handle never registered (or unregistered), left out" out ||
	fail "arena's regions: $(grep misuse out)"
grep -q "pool 'arena'" out && fail "a pool without its heap_register"
"$MEMTRACE" dump op99.bin | grep -q "^nvtx_mem .* op=99 " || fail "dump of an unknown op"
exit 0
