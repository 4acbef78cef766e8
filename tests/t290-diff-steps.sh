#!/bin/sh
# t290-diff-steps: `memtrace diff` aligns the runs' steps on their numbers
# (issue 26), step N against step N. rt-nvtx train (tests/clients/rt-nvtx.c)
# before: steps 1-3, 10 MiB kept a step, step n peaks at 10n + 20 MiB
# (30, 40, 50); after: `train 5 20 2`, steps 2-6, 20 MiB kept a step, step
# n (the (n-1)th) peaks at 20(n-1) + 20 = 20n MiB (40, 60, 80, 100, 120).
# In both: step 2, 40 -> 40 MiB, and step 3, 50 -> 60 MiB (+10 MiB, +20%);
# only before: 1; only after: 4-6; growth per step 10 -> 20 MiB (+100%).
# --fail-if takes step_peak and growth_per_step; a run without steps
# (rt-nvtx threads) cannot be judged, which holds (exit 1), said.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3/ headers are missing)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

TRACE=$T/b.bin traced "$CLIENTS/rt-nvtx" train 2>/dev/null || fail "rt-nvtx train failed"
TRACE=$T/a.bin traced "$CLIENTS/rt-nvtx" train 5 20 2 2>/dev/null || fail "rt-nvtx train 5 20 2 failed"
TRACE=$T/n.bin traced "$CLIENTS/rt-nvtx" threads 2>/dev/null || fail "rt-nvtx threads failed"

"$MEMTRACE" diff "$T/b.bin" "$T/a.bin" >"$T/out" 2>"$T/err"
expect_eq "$?" 0 "text: exit status"
expect_eq "$(sed -n '/^steps, /,/^steps only after/p' "$T/out")" "steps, step N against step N: 3 of 'step N' before, 5 of 'step N' after; 2 in both
                                 before        after       change
  step 2: peak                 40.0 MiB     40.0 MiB          0 B
  step 3: peak                 50.0 MiB     60.0 MiB    +10.0 MiB  +20.0%
  growth per step              10.0 MiB     20.0 MiB    +10.0 MiB  +100.0%
  steps only before: 1
  steps only after: 4-6" "text: the steps"

"$MEMTRACE" diff --json "$T/b.bin" "$T/a.bin" >"$T/out.json" 2>"$T/err"
expect_eq "$?" 0 "json: exit status"
expect_eq "$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["steps"]
print(s["before"], s["after"], s["in_both"], s["only_before"], s["only_after"])
g = s["growth_per_step_bytes"]
print("growth", g["before"], g["after"], g["change"], g["change_percent"])
for x in s["steps"]:
    p = x["peak_reserved_bytes"]
    print(x["step"], p["before"], p["after"], p["change"], p["change_percent"])' "$T/out.json")" \
"{'range': 'step N', 'count': 3} {'range': 'step N', 'count': 5} 2 [1] [4, 5, 6]
growth $((10 * MiB)) $((20 * MiB)) $((10 * MiB)) 100.0
2 $((40 * MiB)) $((40 * MiB)) 0 0.0
3 $((50 * MiB)) $((60 * MiB)) $((10 * MiB)) 20.0" "json: the steps"

# --fail-if on the steps: held when grown by more than the limit
fi_() {
	"$MEMTRACE" diff --fail-if "$1" "$2" "$3" >"$T/out" 2>"$T/err"
	echo "$? $(tail -1 "$T/out")"
}
expect_eq "$(fi_ 'step_peak > 10MiB' "$T/b.bin" "$T/a.bin")" "0 --fail-if 'step_peak > 10MiB': does not hold" "step_peak, 10 MiB"
expect_eq "$(fi_ 'step_peak > 9MiB' "$T/b.bin" "$T/a.bin")" "1 --fail-if 'step_peak > 9MiB': holds" "step_peak, 9 MiB"
expect_eq "$(fi_ 'step_peak > 20%' "$T/b.bin" "$T/a.bin")" "0 --fail-if 'step_peak > 20%': does not hold" "step_peak, 20%"
expect_eq "$(fi_ 'step_peak > 19%' "$T/b.bin" "$T/a.bin")" "1 --fail-if 'step_peak > 19%': holds" "step_peak, 19%"
expect_eq "$(fi_ 'growth_per_step > 99%' "$T/b.bin" "$T/a.bin")" "1 --fail-if 'growth_per_step > 99%': holds" "growth, 99%"
expect_eq "$(fi_ 'growth_per_step > 0' "$T/a.bin" "$T/b.bin")" "0 --fail-if 'growth_per_step > 0': does not hold" "growth, the other way"
expect_eq "$(fi_ 'growth_per_step > 1GiB' "$T/b.bin" "$T/n.bin")" "1 --fail-if 'growth_per_step > 1GiB': cannot be judged (the run after has no steps): taken as holding" "no steps after"
"$MEMTRACE" diff --json --fail-if 'step_peak > 1GiB' "$T/n.bin" "$T/n.bin" >"$T/out.json"
expect_eq "$?" 1 "no steps: json exit status"
expect_eq "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["steps"], d["fail_if"])' "$T/out.json")" "None {'expression': 'step_peak > 1GiB', 'holds': True, 'error': 'neither run has steps'}" "no steps: json"
"$MEMTRACE" diff "$T/n.bin" "$T/n.bin" >"$T/out"
grep -q '^steps' "$T/out" && fail "a steps section without steps"
exit 0
