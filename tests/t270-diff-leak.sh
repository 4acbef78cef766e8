#!/bin/sh
# t270-diff-leak: `memtrace diff` of samples/leak against the same file
# with the leak fixed (tests/clients/rt-leak-fixed.c: the history of loss
# records freed at the end; main's lines moved down by 7). Peak 112 MiB on
# both sides; left at exit 20 MiB before, 0 after: keep_loss() disappears
# from the sites at exit. Every site is matched on function and file only
# (main's lines differ): "fuzzy". The other way round, --fail-if
# 'live_at_exit > 0' catches the leak coming back.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

TRACE=$T/leak.bin traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak: $(cat "$T/err")"
TRACE=$T/fixed.bin traced "$CLIENTS/rt-leak-fixed" >/dev/null 2>"$T/err" || fail "rt-leak-fixed: $(cat "$T/err")"
expect_eq "$("$MEMTRACE" dump "$T/fixed.bin" | grep -c '^free .*result=0')" 41 "fixed: 31 + 10 cudaFree"

"$MEMTRACE" diff --json "$T/leak.bin" "$T/fixed.bin" >"$T/d.json" 2>"$T/err" || fail "diff --json: $(cat "$T/err")"
dj() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
def fig(d, k): return "%s %s %s" % (d[k]["before"], d[k]["after"], d[k]["change"])
def frames(s): return " < ".join("%s@%s:%d" % (f["function"], f["file"], f["line"]) for f in s["frames"])
print(eval(sys.argv[2]))' "$T/d.json" "$1"
}
expect_eq "$(dj 'fig(r["devices"][0], "peak_reserved_bytes")')" "$((112 * MiB)) $((112 * MiB)) 0" "peak unchanged"
expect_eq "$(dj 'fig(r["devices"][0], "left_at_exit_bytes")')" "$((20 * MiB)) 0 -$((20 * MiB))" "left at exit"
expect_eq "$(dj 'r["devices"][0]["left_at_exit_bytes"]["change_percent"]')" "-100.0" "left at exit in percent"
expect_eq "$(dj 'r["sites_at_peak"], r["site_matches"]')" \
	"([], {'exact': 0, 'fuzzy': 5, 'before_only': 0, 'after_only': 0})" "no change at the peak; 5 sites, fuzzy"
expect_eq "$(dj '[(s["status"], s["match"], s["before_bytes"], s["after_bytes"], s["change_bytes"]) for s in r["sites_at_exit"]]')" \
	"[('disappeared', 'fuzzy', $((20 * MiB)), 0, -$((20 * MiB)))]" "keep_loss disappears at exit"
expect_eq "$(dj 'frames(r["sites_at_exit"][0])')" "keep_loss@samples/leak.c:54 < main@samples/leak.c:83" "its frames (after)"

"$MEMTRACE" diff "$T/leak.bin" "$T/fixed.bin" >"$T/d.txt" 2>"$T/err" || fail "diff: $(cat "$T/err")"
expect_eq "$(grep '^  left at exit' "$T/d.txt" | tr -s ' ')" " left at exit 20.0 MiB 0 B -20.0 MiB -100.0%" "text: left at exit"
expect_eq "$(grep 'disappeared' "$T/d.txt" | tr -s ' ')" \
	" -20.0 MiB disappeared 20.0 MiB -> 0 B device 0 keep_loss (leak.c:54) < main (leak.c:83) [fuzzy: lines differ]" "text: keep_loss"

st() { "$MEMTRACE" diff "$@" >"$T/out" 2>"$T/err"; echo $?; }
expect_eq "$(st "$T/leak.bin" "$T/fixed.bin" --fail-if 'live_at_exit > 0')" 0 "fail-if: the leak went away"
expect_eq "$(st "$T/fixed.bin" "$T/leak.bin" --fail-if 'live_at_exit > 0')" 1 "fail-if: the leak came back"
expect_eq "$(grep 'appeared' "$T/out" | tr -s ' ')" \
	" +20.0 MiB appeared 0 B -> 20.0 MiB device 0 keep_loss (leak.c:54) < main (leak.c:76) [fuzzy: lines differ]" "text: the leak back"
