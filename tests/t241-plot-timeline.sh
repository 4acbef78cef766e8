#!/bin/sh
# t241-plot-timeline: the timeline of `memtrace plot` names the program and
# its pid (rank when the trace has one, the number of processes when several
# share the device); draws device used in a panel of its own, one stem per
# cuMemGetInfo sample with its value, the device's total when it is in
# scale; and keeps its legends right of the data, where they hide no mark.
. "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed"
command -v python3 >/dev/null 2>&1 || skip "no python3"
[ -x "$SAMPLES/fragmentation" ] || skip "no $SAMPLES (make tests-build)"

# title SVG: the picture's title
title() { sed -n '/text-anchor="middle"/{n;s/^[[:space:]]*<text>\(.*\)<\/text>$/\1/p}' "$1" | grep ': GPU memory over time$'; }
# legend_outside SVG TEXT...: each legend TEXT starts right of the plot's
# right border (the x of the mirrored y tick marks)
legend_outside() {
	python3 - "$@" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
right = max(float(m.group(4)) for m in re.finditer(r"M([\d.]+),([\d.]+) L([\d.]+),\2 M([\d.]+),\2 L", svg))
for t in sys.argv[2:]:
    m = re.search(r'translate\(([\d.]+),[\d.]+\)[^>]*>\s*<text>' + re.escape(t) + '</text>', svg)
    if not m:
        sys.exit("no legend entry '%s'" % t)
    if float(m.group(1)) <= right:
        sys.exit("legend entry '%s' at x=%s, inside the plot (right border %.2f)" % (t, m.group(1), right))
PY
}

# The fragmentation sample on a 400 MiB device: samples of 320, 400 (full,
# at the first failure), 380 MiB and 330 MiB (the retry's 30 MiB, a growth
# of more than 1% of the device's used memory).
SIMCUDA_MEM=400M traced "$SAMPLES/fragmentation" >"$T/out" 2>"$T/err" || fail "fragmentation failed: $(cat "$T/err")"
pid=$("$MEMTRACE" dump "$T/trace.bin" | sed -n 's/^process pid=\([0-9]*\) .*/\1/p')
"$MEMTRACE" plot --format svg -o "$T/f" "$T/trace.bin" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "plot wrote to stderr: $(cat "$T/err")"
expect_eq "$(title "$T/f/timeline-dev0.svg")" "fragmentation (pid $pid), device 0: GPU memory over time" "title"
expect_eq "$(grep -v '^#' "$T/f/timeline-dev0.used.tsv" | cut -f2,3 | tr '\t\n' ' ;')" \
	"320.000 400.000;400.000 400.000;380.000 400.000;330.000 400.000;" "samples: used, total (MiB)"
for t in 320 400 380 330 'device total 400 MiB'; do
	grep -q "<text>$t</text>" "$T/f/timeline-dev0.svg" || fail "the picture does not say '$t'"
done
legend_outside "$T/f/timeline-dev0.svg" peak 'failed allocation' 'reserved (held from the driver)' \
	'device used (cuMemGetInfo sample)' || fail "fragmentation: legend over the data"
# PNG too, the default
"$MEMTRACE" plot -o "$T/fp" "$T/trace.bin" >/dev/null 2>&1 || fail "plot (PNG) failed"
[ "$(head -c 4 "$T/fp/timeline-dev0.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "timeline-dev0.png is not a PNG"

# pinned-expandable: the peak (60 MiB) at the top left, where the legend was
rm -f "$T/trace.bin"
traced "$SAMPLES/pinned-expandable" >"$T/out" 2>"$T/err" || fail "pinned-expandable failed: $(cat "$T/err")"
"$MEMTRACE" plot --format svg -o "$T/pe" "$T/trace.bin" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
expect_eq "$(cut -f2 "$T/pe/timeline-dev0.marks.tsv")" 60.000 "pinned-expandable: the peak (MiB)"
legend_outside "$T/pe/timeline-dev0.svg" peak 'allocated (program buffers)' || fail "pinned-expandable: legend over the data"
# one sample, on a device of 80 GiB: its total is said, not drawn
grep -q '<text>(device total 81920 MiB)</text>' "$T/pe/timeline-dev0.svg" || fail "pinned-expandable: no device total"

# A worker with a rank: named by its rank
rm -f "$T"/*.bin
SIMCUDA_DEVICES=2 TRACE=$T/mp.bin traced "$SAMPLES/multiprocess" >"$T/out" 2>"$T/err" || fail "multiprocess failed: $(cat "$T/err")"
"$MEMTRACE" plot --format svg -o "$T/mp" "$T"/mp.*bin >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
expect_eq "$(title "$T/mp/timeline-dev1.svg")" "multiprocess (rank 1), device 1: GPU memory over time" "title of rank 1"

# Two processes at once on one device
rm -f "$T"/*.bin
TRACE=$T/m.bin traced "$CLIENTS/rt-rep-multi" >"$T/out" 2>"$T/err" || fail "rt-rep-multi failed: $(cat "$T/err")"
"$MEMTRACE" plot --format svg -o "$T/m" "$T"/m*.bin >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
expect_eq "$(title "$T/m/timeline-dev0.svg")" "2 processes, device 0: GPU memory over time" "title of a shared device"
grep -q '<text>2 processes, device 0: allocations by address over time</text>' "$T/m/addrmap-dev0.svg" ||
	fail "address map title of a shared device"
exit 0
