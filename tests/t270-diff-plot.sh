#!/bin/sh
# t270-diff-plot: `memtrace diff --plot DIR` of samples/activations without
# and with --checkpoint (t270-diff-activations: peaks 176 and 128 MiB): the
# overlay's data has both timelines merged by time, each run's peak as its
# highest reserved value and marked, and the picture is drawn.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/activations" ] || skip "no $SAMPLES/activations (make tests-build)"
command -v gnuplot >/dev/null 2>&1 || skip "no gnuplot"

TRACE=$T/plain.bin traced "$SAMPLES/activations" >/dev/null 2>"$T/err" || fail "activations: $(cat "$T/err")"
TRACE=$T/ck.bin traced "$SAMPLES/activations" --checkpoint >/dev/null 2>"$T/err" || fail "activations --checkpoint: $(cat "$T/err")"

"$MEMTRACE" diff --plot "$T/p" "$T/plain.bin" "$T/ck.bin" >"$T/d.txt" 2>"$T/err" || fail "diff --plot: $(cat "$T/err")"
[ -s "$T/err" ] && fail "diff --plot said: $(cat "$T/err")"
grep -q 'peak reserved' "$T/d.txt" || fail "diff --plot: no comparison printed"
TSV=$T/p/diff-dev0.tsv
[ -s "$TSV" ] || fail "no $TSV"
expect_eq "$(head -n 1 "$TSV")" "$(printf '# time_s\tbefore_reserved_MiB\tbefore_allocated_MiB\tafter_reserved_MiB\tafter_allocated_MiB')" "the TSV's header"
# max COL: the largest value of column COL
max() { awk -v c="$1" 'NR > 1 && $c > m { m = $c } END { printf "%.3f\n", m }' "$TSV"; }
expect_eq "$(max 2)" "176.000" "max before reserved"
expect_eq "$(max 3)" "176.000" "max before allocated"
expect_eq "$(max 4)" "128.000" "max after reserved"
expect_eq "$(max 5)" "128.000" "max after allocated"
# merged by time: times strictly increasing, from 0, every row 5 columns
expect_eq "$(awk 'NR > 1 && (NF != 5 || (NR > 2 && $1 <= p)) { bad++ } NR > 1 { p = $1 } END { print bad + 0 }' "$TSV")" 0 "rows in time order"
# both runs end with nothing reserved
expect_eq "$(tail -n 1 "$TSV" | cut -f2-)" "$(printf '0.000\t0.000\t0.000\t0.000')" "the last row"
expect_eq "$(cut -f2-4 "$T/p/diff-dev0.marks.tsv")" "$(printf '176.000\tbefore\tpeak before 176 MiB\n128.000\tafter\tpeak after 128 MiB')" "the peaks marked"
[ -s "$T/p/diff-dev0.png" ] || fail "no diff-dev0.png"
expect_eq "$(head -c 4 "$T/p/diff-dev0.png" | od -An -c | tr -d ' ')" '211PNG' "diff-dev0.png is a PNG"

# --json with --plot: the JSON alone on stdout
"$MEMTRACE" diff --json --plot "$T/p2" "$T/plain.bin" "$T/ck.bin" >"$T/d.json" 2>"$T/err" || fail "diff --json --plot: $(cat "$T/err")"
expect_eq "$(head -c 1 "$T/d.json")" "{" "--json --plot: stdout starts with the JSON"
cmp -s "$TSV" "$T/p2/diff-dev0.tsv" || fail "--json --plot: another TSV"

# gnuplot missing: exit 2, before analyzing
mkdir "$T/bin"
PATH=$T/bin "$MEMTRACE" diff --plot "$T/p3" "$T/plain.bin" "$T/ck.bin" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "--plot without gnuplot: exit status"
expect_eq "$(cat "$T/err")" "memtrace: gnuplot not found in PATH: install it (e.g. 'apt-get install gnuplot-nox') to draw plots" "--plot without gnuplot: message"
[ -e "$T/p3" ] && fail "--plot without gnuplot: made the folder"
exit 0
