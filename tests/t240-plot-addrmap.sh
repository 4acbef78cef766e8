#!/bin/sh
# t240-plot-addrmap: the address map of `memtrace plot` never draws two
# allocations alive at the same time over the same addresses: touching
# allocations sit end to end at their exact offsets, each process has its
# own band, every demo sample's map is free of overlaps, and a map that
# keeps only the largest PLOT_MAP_MAX (20,000) boxes says so in its TSV and
# on the picture.
. "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed"
command -v python3 >/dev/null 2>&1 || skip "no python3"

# overlaps TSV: "i j" for each two boxes alive at once over common addresses
overlaps() {
	awk -F'\t' '!/^#/ { n++; t0[n] = $1; t1[n] = $2; lo[n] = $3; hi[n] = $4 }
	END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (t0[i] < t1[j] && t0[j] < t1[i] && lo[i] < hi[j] && lo[j] < hi[i]) print i, j }' "$1"
}

# Touching allocations: A 4 MiB, B 6 MiB, C 2 MiB end to end (the
# simulator's first fit), B freed, D 6 MiB in B's place.
cat >"$T/touch.py" <<'PY'
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
def alloc(mib):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), mib << 20) == 0
    return p
a = alloc(4); b = alloc(6); c = alloc(2)
rt.cudaFree(b)
d = alloc(6)
for p in (a, c, d):
    rt.cudaFree(p)
PY
traced python3 "$T/touch.py" >"$T/out" 2>"$T/err" || fail "touch.py failed: $(cat "$T/err")"
# the addresses the simulator gave, for the record: contiguous
expect_eq "$(awk '$1 == "alloc" && $3 == "kind=device" { sub(/addr=/, "", $5); print $5 }' "$T/calls.log" |
	python3 -c 'import sys; a = [int(x, 16) for x in sys.stdin.read().split()]; print(" ".join(str((x - a[0]) >> 20) for x in a))')" \
	"0 4 10 4" "the simulator's addresses (MiB from the first)"
"$MEMTRACE" plot -o "$T/p" "$T/trace.bin" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
expect_eq "$(awk -F'\t' '!/^#/ { print $3 "-" $4 }' "$T/p/addrmap-dev0.tsv" | tr '\n' ' ')" \
	"0.0000-4.0000 4.0000-10.0000 4.0000-10.0000 10.0000-12.0000 " "touching boxes (MiB)"
expect_eq "$(overlaps "$T/p/addrmap-dev0.tsv")" "" "overlapping boxes, touching case"

# Two processes at once on one device (rt-rep-multi, same addresses in
# each): a band each, one process's 20 MiB, then the other's 10 MiB after and a
# gap of 1/50 of the 30 MiB drawn.
rm -f "$T/trace"*.bin
TRACE=$T/multi.bin traced "$CLIENTS/rt-rep-multi" >"$T/out" 2>"$T/err" || fail "rt-rep-multi failed: $(cat "$T/err")"
"$MEMTRACE" plot -o "$T/m" "$T"/multi*.bin >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
expect_eq "$(awk -F'\t' '!/^#/ { print $3 "-" $4 }' "$T/m/addrmap-dev0.tsv" | tr '\n' ' ')" \
	"0.0000-20.0000 20.6000-30.6000 " "two processes' boxes (MiB)"

# Every demo sample (what `make demo` draws, on the simulated GPU).
if [ -x "$SAMPLES/multiprocess" ]; then
	MEMTRACE_DEMO_SIM=1 MEMTRACE_DEMO_DIR="$T/demo" timeout 120 "$ROOT/scripts/demo.sh" >"$T/out" 2>"$T/err" ||
		fail "demo.sh failed: $(tail -n 5 "$T/err")"
	n=0
	for f in "$T"/demo/plots/*/addrmap-dev*.tsv; do
		n=$((n + 1))
		o=$(overlaps "$f")
		[ -z "$o" ] || fail "${f#"$T"/demo/plots/}: boxes overlap: $(echo "$o" | head -n 3 | tr '\n' ';')"
	done
	expect_eq "$n" 8 "demo address maps checked"
	# the fragmentation sample: five 20 MiB segments end to end
	expect_eq "$(awk -F'\t' '!/^#/ && $4 - $3 == 20 { print $3 }' "$T/demo/plots/fragmentation/addrmap-dev0.tsv" | tr '\n' ' ')" \
		"0.0000 20.0000 40.0000 60.0000 80.0000 " "fragmentation: the 20 MiB segments' offsets"
fi

# More boxes than the map keeps: 20,010 allocations, the 10 of 4 KiB left out.
cat >"$T/many.py" <<'PY'
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
p = ctypes.c_void_p()
for i in range(20010):
    assert rt.cudaMalloc(ctypes.byref(p), 4096 if i % 2001 == 0 else 8192) == 0
    rt.cudaFree(p)
PY
rm -f "$T"/*.bin
SIMCUDA_LOG=/dev/null TRACE=$T/many.bin traced python3 "$T/many.py" >"$T/out" 2>"$T/err" || fail "many.py failed: $(cat "$T/err")"
"$MEMTRACE" plot --format svg -o "$T/n" "$T/many.bin" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
expect_eq "$(head -n 1 "$T/n/addrmap-dev0.tsv")" "# largest 20,000 of 20,010 allocations shown" "the TSV's note"
expect_eq "$(grep -vc '^#' "$T/n/addrmap-dev0.tsv")" 20000 "boxes in the TSV"
expect_eq "$(awk -F'\t' '!/^#/ && $4 - $3 < 0.005' "$T/n/addrmap-dev0.tsv" | wc -l)" 0 "4 KiB boxes kept"
grep -q 'largest 20,000 of 20,010 allocations shown' "$T/n/addrmap-dev0.svg" || fail "the picture does not say what it left out"
exit 0
