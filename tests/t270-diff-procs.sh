#!/bin/sh
# t270-diff-procs: `memtrace diff` of samples/multiprocess with 2 workers
# against 3 (rank r on device r, peak (r + 1) x 32 + 16 MiB): the
# processes do not correspond (rank 2 only after), devices 0 and 1 compare
# (48 and 80 MiB, unchanged), device 2 is only after (112 MiB) and is not
# compared with anything. Two runs of 2 workers correspond by rank, and
# each process's device is compared too.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/multiprocess" ] || skip "no $SAMPLES/multiprocess (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576
export SIMCUDA_DEVICES=3

for w in 2 3; do
	mkdir "$T/w$w"
	TRACE=$T/w$w/t traced "$SAMPLES/multiprocess" $w >/dev/null 2>"$T/err" || fail "multiprocess $w: $(cat "$T/err")"
done
mkdir "$T/again"
TRACE=$T/again/t traced "$SAMPLES/multiprocess" 2 >/dev/null 2>"$T/err" || fail "multiprocess 2: $(cat "$T/err")"
expect_eq "$(ls "$T/w2" | wc -l) $(ls "$T/w3" | wc -l)" "2 3" "traces per run"

dj() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
def fig(d, k): return "%s %s %s" % (d[k]["before"], d[k]["after"], d[k]["change"])
print(eval(sys.argv[2]))' "$T/d.json" "$1"
}
"$MEMTRACE" diff --json "$T"/w2/* -- "$T"/w3/* >"$T/d.json" 2>"$T/err" || fail "diff --json: $(cat "$T/err")"
expect_eq "$(dj 'r["processes"]["correspond"], r["processes"]["matched_by"], len(r["processes"]["pairs"]), len(r["processes"]["before_only"]), len(r["processes"]["after_only"])')" \
	"(False, 'rank', 2, 0, 1)" "2 against 3 workers: processes"
expect_eq "$(dj '[(d["device"], d["in"], fig(d, "peak_reserved_bytes")) for d in r["devices"]]')" \
	"[(0, 'both', '$((48 * MiB)) $((48 * MiB)) 0'), (1, 'both', '$((80 * MiB)) $((80 * MiB)) 0'), (2, 'after_only', 'None $((112 * MiB)) None')]" \
	"2 against 3 workers: devices"
expect_eq "$(dj 'r["process_devices"], r["sites_at_peak"][0]["status"], r["sites_at_peak"][0]["change_bytes"]')" \
	"([], 'appeared', $((96 * MiB)))" "2 against 3 workers: no process compared; device 2's shard appeared"
"$MEMTRACE" diff "$T"/w2/* -- "$T"/w3/* >"$T/d.txt" 2>"$T/err" || fail "diff: $(cat "$T/err")"
expect_eq "$(grep -c 'processes: they do not correspond (2 before, 3 after, matched by rank)' "$T/d.txt")" 1 "text: not corresponding"
expect_eq "$(grep -c '^device 2: only after, no device corresponds$' "$T/d.txt")" 1 "text: device 2"

"$MEMTRACE" diff --json "$T"/w2/* -- "$T"/again/* >"$T/d.json" 2>"$T/err" || fail "diff --json: $(cat "$T/err")"
expect_eq "$(dj 'r["processes"]["correspond"], r["processes"]["matched_by"], len(r["processes"]["pairs"])')" \
	"(True, 'rank', 2)" "2 against 2 workers: processes"
expect_eq "$(dj '[(d["device"], fig(d, "peak_reserved_bytes")) for d in r["process_devices"]]')" \
	"[(0, '$((48 * MiB)) $((48 * MiB)) 0'), (1, '$((80 * MiB)) $((80 * MiB)) 0')]" "2 against 2 workers: each process's device"
expect_eq "$(dj 'r["site_matches"], r["sites_at_peak"]')" \
	"({'exact': 4, 'fuzzy': 0, 'before_only': 0, 'after_only': 0}, [])" "2 against 2 workers: sites"
