#!/bin/sh
# t270-diff-activations: `memtrace diff` of samples/activations without and
# with --checkpoint (t302: peak 176 and 128 MiB): the peak drops by exactly
# 48 MiB, layer_forward holds 96 MiB less at it (8 activations kept, then 2)
# and layer_recompute 48 MiB more (3 recomputed), a site only the second
# run has. The same program rebuilt with one more function in front
# (tests/clients/rt-act-rebuilt.c: every address differs) matches every
# site exactly and changes nothing. --fail-if and the exit statuses.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/activations" ] || skip "no $SAMPLES/activations (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

TRACE=$T/plain.bin traced "$SAMPLES/activations" >/dev/null 2>"$T/err" || fail "activations: $(cat "$T/err")"
TRACE=$T/ck.bin traced "$SAMPLES/activations" --checkpoint >/dev/null 2>"$T/err" || fail "activations --checkpoint: $(cat "$T/err")"
TRACE=$T/rebuilt.bin traced "$CLIENTS/rt-act-rebuilt" >/dev/null 2>"$T/err" || fail "rt-act-rebuilt: $(cat "$T/err")"

# the rebuilt binary's stacks really have other addresses
"$MEMTRACE" dump "$T/plain.bin" | awk '$1 == "stack"' | cut -d' ' -f4- >"$T/ips.plain"
"$MEMTRACE" dump "$T/rebuilt.bin" | awk '$1 == "stack"' | cut -d' ' -f4- >"$T/ips.rebuilt"
[ -s "$T/ips.plain" ] || fail "no stacks in the trace"
[ "$(grep -c . "$T/ips.plain")" = "$(grep -c . "$T/ips.rebuilt")" ] || fail "not the same number of stacks"
cmp -s "$T/ips.plain" "$T/ips.rebuilt" && fail "the rebuilt binary has the same addresses"

"$MEMTRACE" diff --json "$T/plain.bin" "$T/ck.bin" >"$T/d.json" 2>"$T/err" || fail "diff --json: $(cat "$T/err")"
# dj EXPR: EXPR in python, with r the comparison
dj() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
def fig(d, k): return "%s %s %s" % (d[k]["before"], d[k]["after"], d[k]["change"])
def site(s): return "%s %s %d %d %d %s" % (s["status"], s["match"], s["before_bytes"], s["after_bytes"], s["change_bytes"], s["frames"][0]["function"])
print(eval(sys.argv[2]))' "$T/d.json" "$1"
}
expect_eq "$(dj 'r["processes"]["correspond"], r["processes"]["matched_by"], len(r["devices"]), r["devices"][0]["in"]')" \
	"(True, 'single', 1, 'both')" "checkpoint: processes and devices"
expect_eq "$(dj 'fig(r["devices"][0], "peak_reserved_bytes")')" "$((176 * MiB)) $((128 * MiB)) -$((48 * MiB))" "checkpoint: peak reserved"
expect_eq "$(dj 'fig(r["devices"][0], "peak_allocated_bytes")')" "$((176 * MiB)) $((128 * MiB)) -$((48 * MiB))" "checkpoint: peak allocated"
expect_eq "$(dj 'r["devices"][0]["peak_reserved_bytes"]["change_percent"]')" "-27.273" "checkpoint: peak change in percent"
expect_eq "$(dj '" ".join(fig(r["devices"][0], k) for k in ("left_at_exit_bytes", "failures", "oom_retries", "cached_bytes_at_peak"))')" \
	"0 0 0 0 0 0 0 0 0 0 0 0" "checkpoint: exit, failures, OOM retries, cached"
expect_eq "$(dj '" | ".join(site(s) for s in r["sites_at_peak"])')" \
	"shrank exact $((128 * MiB)) $((32 * MiB)) -$((96 * MiB)) layer_forward | appeared after_only 0 $((48 * MiB)) $((48 * MiB)) layer_recompute" \
	"checkpoint: the sites that changed at the peak"
expect_eq "$(dj 'sum(s["change_bytes"] for s in r["sites_at_peak"])')" "-$((48 * MiB))" "checkpoint: the sites add up to the peak's change"
expect_eq "$(dj 'r["sites_at_exit"], r["site_matches"]')" \
	"([], {'exact': 3, 'fuzzy': 0, 'before_only': 0, 'after_only': 1})" "checkpoint: exit and site matches"

# the text says the same
"$MEMTRACE" diff "$T/plain.bin" "$T/ck.bin" >"$T/d.txt" 2>"$T/err" || fail "diff: $(cat "$T/err")"
expect_eq "$(grep 'peak reserved' "$T/d.txt" | tr -s ' ')" " peak reserved 176 MiB 128 MiB -48.0 MiB -27.3%" "text: peak reserved"
expect_eq "$(grep -c 'shrank .*128 MiB -> 32.0 MiB .*layer_forward (activations.c:' "$T/d.txt")" 1 "text: layer_forward"
expect_eq "$(grep -c 'appeared .*0 B -> 48.0 MiB .*layer_recompute (activations.c:.*\[site only after\]' "$T/d.txt")" 1 "text: layer_recompute"

# a rebuilt binary: every site matched on its frames, nothing changed
"$MEMTRACE" diff --json "$T/plain.bin" "$T/rebuilt.bin" >"$T/d.json" 2>"$T/err" || fail "diff rebuilt: $(cat "$T/err")"
expect_eq "$(dj 'r["site_matches"], r["sites_at_peak"], r["sites_at_exit"], fig(r["devices"][0], "peak_reserved_bytes")')" \
	"({'exact': 3, 'fuzzy': 0, 'before_only': 0, 'after_only': 0}, [], [], '$((176 * MiB)) $((176 * MiB)) 0')" "rebuilt: sites matched"

# --fail-if: exit 1 only when it holds; 2 for usage and trace errors
st() { "$MEMTRACE" diff "$@" >"$T/out" 2>"$T/err"; echo $?; }
expect_eq "$(st "$T/plain.bin" "$T/ck.bin" --fail-if 'peak > 0')" 0 "fail-if: the peak went down"
expect_eq "$(st "$T/ck.bin" "$T/plain.bin" --fail-if 'peak > 5%')" 1 "fail-if: +37.5% > 5%"
expect_eq "$(tail -n 1 "$T/out")" "--fail-if 'peak > 5%': holds" "fail-if: the line saying it"
expect_eq "$(st "$T/ck.bin" "$T/plain.bin" --fail-if 'peak > 37.5%')" 0 "fail-if: +37.5% is not > 37.5%"
expect_eq "$(st "$T/ck.bin" "$T/plain.bin" --fail-if 'peak > 48MiB')" 0 "fail-if: +48 MiB is not > 48 MiB"
expect_eq "$(st "$T/ck.bin" "$T/plain.bin" --fail-if 'allocated_peak > 47MiB')" 1 "fail-if: +48 MiB > 47 MiB"
expect_eq "$(st --json "$T/ck.bin" "$T/plain.bin" --fail-if 'peak > 47MiB')" 1 "fail-if --json"
expect_eq "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["fail_if"])' "$T/out")" \
	"{'expression': 'peak > 47MiB', 'holds': True}" "fail-if in the JSON"
expect_eq "$(st "$T/ck.bin" "$T/plain.bin" --fail-if 'peek > 4')" 2 "fail-if: unknown figure"
expect_eq "$(cat "$T/err")" "memtrace: --fail-if 'peek > 4': unknown figure 'peek'; did you mean 'peak'? (try 'memtrace diff --help')" "fail-if: the message"
expect_eq "$(st "$T/ck.bin")" 2 "one trace only"
expect_eq "$(st "$T/ck.bin" "$T/plain.bin" "$T/rebuilt.bin")" 2 "three traces without --"
expect_eq "$(st "$T/ck.bin" --)" 2 "nothing after --"
expect_eq "$(st "$T/nope.bin" "$T/ck.bin")" 2 "a missing trace"
printf 'not a trace' >"$T/bad.bin"
expect_eq "$(st "$T/bad.bin" "$T/ck.bin")" 2 "an invalid trace"
expect_eq "$(st "$T/plain.bin" -- "$T/ck.bin")" 0 "BEFORE -- AFTER"
expect_eq "$(st --help)" 0 "--help"
expect_eq "$(head -n 1 "$T/out")" "usage: memtrace diff [OPTIONS] BEFORE... -- AFTER..." "--help prints the usage"
