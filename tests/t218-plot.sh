#!/bin/sh
# `memtrace plot`: per device a timeline, an address map and the top sites,
# as PNG (or SVG) with their TSV data; the scripts also run by hand; a clear
# error when gnuplot is missing.
. "$(dirname "$0")/lib.sh"

SIMCUDA_MEM=1G SIMCUDA_POOL_CHUNK=32M traced "$CLIENTS/rt-rep-pool" >"$T/out" 2>"$T/err" ||
	fail "rt-rep-pool failed: $(cat "$T/err")"
PATH=/nonexistent "$MEMTRACE" plot -o "$T/p0" "$T/trace.bin" >"$T/out" 2>"$T/err"
expect_eq "$?" 1 "plot without gnuplot: exit status"
expect_eq "$(cat "$T/err")" "memtrace: gnuplot not found in PATH: install it (e.g. 'apt-get install gnuplot-nox') to draw plots" \
	"plot without gnuplot: message"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed"

"$MEMTRACE" plot -o "$T/p" "$T/trace.bin" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "plot wrote to stderr: $(cat "$T/err")"
for f in timeline-dev0 addrmap-dev0 sites-dev0; do
	[ -s "$T/p/$f.tsv" ] || fail "no $f.tsv"
	[ "$(head -c 4 "$T/p/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$f.png is not a PNG"
done
[ -s "$T/p/timeline-dev0.failures.tsv" ] || fail "the failure is not marked"
expect_eq "$(cut -f2 "$T/p/timeline-dev0.marks.tsv")" 652.000 "the peak mark (MiB)"
expect_eq "$(head -1 "$T/p/sites-dev0.tsv")" "$(printf 'main (rt-rep-pool.c:39)\t600.000')" "the top site"
# the address map: the 600 MiB buffer is one box 600 MiB high
awk -F'\t' '!/^#/ && $4 - $3 == 600 { n++ } END { exit n == 1 ? 0 : 1 }' "$T/p/addrmap-dev0.tsv" ||
	fail "no 600 MiB box in the address map"
# by hand
gnuplot -c "$ROOT/scripts/timeline.gp" "$T/p/timeline-dev0.tsv" "$T/hand.png" >/dev/null 2>&1 ||
	fail "timeline.gp does not run by hand"
[ -s "$T/hand.png" ] || fail "timeline.gp by hand wrote nothing"
"$MEMTRACE" plot --format svg -o "$T/s" "$T/trace.bin" >/dev/null 2>&1 || fail "plot --format svg failed"
grep -q '<svg' "$T/s/timeline-dev0.svg" || fail "no SVG written"
"$MEMTRACE" plot --format gif "$T/trace.bin" >/dev/null 2>&1
expect_eq "$?" 2 "unknown format"
exit 0
