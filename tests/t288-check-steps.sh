#!/bin/sh
# t288-check-steps: `memtrace check` on the program's steps (issue 26), on
# rt-nvtx train (tests/clients/rt-nvtx.c, by hand): steps 1-3 end at 10, 20,
# 30 MiB, so growth_per_step = (30 - 10) / 2 = 10 MiB; they peak at 30, 40,
# 50 MiB, so first_step_excess = 30 - 50 (the upper median of 40 and 50) =
# -20 MiB, a signed figure held to its limit as one. rt-nvtx threads has no
# step: the rule fails and says so. The unit scopes (docs/check.md), by
# hand from the same program: step k starts at 10(k-1) MiB, io:load keeps
# 10 MiB (ends at 10k), forward holds 20 more (peak 10k + 20, freed after
# its pop: it ends there, 20 MiB kept), backward 5 freed inside (peak
# 10k + 5, 0 kept); a step peaks at 10k + 20 and keeps 10 MiB.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3 headers are missing)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

results() {
	python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("value", x.get("error")), x.get("limit", ""))' "$1"
}

traced "$CLIENTS/rt-nvtx" train 2>/dev/null || fail "rt-nvtx train failed"
"$MEMTRACE" check --json "growth_per_step <= 10MiB" "growth_per_step < 10MiB" \
	"growth_per_step <= 0" "first_step_excess <= 0" "first_step_excess >= 0" \
	"first_step_excess != 0" "$T/trace.bin" >"$T/train.json" 2>"$T/err"
expect_eq "$?" 1 "train: exit status"
expect_eq "$(results "$T/train.json")" "growth_per_step <= 10MiB | pass $((10 * MiB)) $((10 * MiB))
growth_per_step < 10MiB | FAIL $((10 * MiB)) $((10 * MiB))
growth_per_step <= 0 | FAIL $((10 * MiB)) 0
first_step_excess <= 0 | pass -$((20 * MiB)) 0
first_step_excess >= 0 | FAIL -$((20 * MiB)) 0
first_step_excess != 0 | pass -$((20 * MiB)) 0" "train: results"
"$MEMTRACE" check "first_step_excess >= 0" "$T/trace.bin" >"$T/out" 2>&1
expect_eq "$?" 1 "train text: exit status"
grep -q "first step's peak over the others' median -20.0 MiB (-$((20 * MiB)) B), limit 0" "$T/out" ||
	fail "train text: $(cat "$T/out")"

TRACE=$T/threads.bin traced "$CLIENTS/rt-nvtx" threads 2>/dev/null || fail "rt-nvtx threads failed"
"$MEMTRACE" check --json "growth_per_step <= 0" "$T/threads.bin" >"$T/threads.json" 2>"$T/err"
expect_eq "$?" 1 "no steps: exit status"
expect_eq "$(results "$T/threads.json")" "growth_per_step <= 0 | FAIL the run has no steps (no range named like a step: 'step N', 'iteration N', 'batch N'; docs/units.md) " "no steps: the rule fails, said"


# --- scopes: a range by its name, a step, a span of steps ------------------
"$MEMTRACE" check --json "peak[range:forward] <= 50MiB" "peak[phase:forward] < 50MiB" \
	"leaked[range:forward] <= 0" "leaked[range:backward] <= 0" "peak[range:io:load] <= 30MiB" \
	"leaked[range:io:load] == 10MiB" "peak[range:step N] == 50MiB" "peak[range:step 2] == 40MiB" \
	"peak[range:*ward] >= 51MiB" "peak[step:2] <= 40MiB" "peak[step:1-2] < 40MiB" \
	"leaked[step:1-3] <= 10MiB" "growth_per_step[step:2-3] <= 9MiB" \
	"first_step_excess[step:2-3] == 0" "first_step_excess[step:1-2] <= 0" \
	"peak[range:nothing] <= 1GiB" "peak[step:7] <= 1GiB" "growth_per_step[step:3-9] <= 1GiB" \
	"tensor_peak_allocated[range:forward] <= 1GiB" "peak[test:*] <= 1GiB" \
	"$T/trace.bin" >"$T/scoped.json" 2>"$T/err"
expect_eq "$?" 1 "scopes: exit status"
python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("value", x.get("error")), x.get("range", ""), x.get("step", ""))' "$T/scoped.json" >"$T/scoped"
expect_eq "$(cat "$T/scoped")" "peak[range:forward] <= 50MiB | pass $((50 * MiB)) forward 3
peak[range:forward] < 50MiB | FAIL $((50 * MiB)) forward 3
leaked[range:forward] <= 0 | FAIL $((20 * MiB)) forward 1
leaked[range:backward] <= 0 | pass 0 backward 1
peak[range:io:load] <= 30MiB | pass $((30 * MiB)) io:load 3
leaked[range:io:load] == 10MiB | pass $((10 * MiB)) io:load 1
peak[range:step N] == 50MiB | pass $((50 * MiB)) step 3 3
peak[range:step 2] == 40MiB | pass $((40 * MiB)) step 2 2
peak[range:*ward] >= 51MiB | FAIL $((50 * MiB)) forward 3
peak[step:2] <= 40MiB | pass $((40 * MiB)) step 2 2
peak[step:1-2] < 40MiB | FAIL $((40 * MiB)) step 2 2
leaked[step:1-3] <= 10MiB | pass $((10 * MiB)) step 1 1
growth_per_step[step:2-3] <= 9MiB | FAIL $((10 * MiB))  
first_step_excess[step:2-3] == 0 | FAIL -$((10 * MiB))  
first_step_excess[step:1-2] <= 0 | pass -$((10 * MiB))  
peak[range:nothing] <= 1GiB | FAIL no range of the run's 4 matches 'nothing'  
peak[step:7] <= 1GiB | FAIL the run has no step 7 (3 steps, 1 to 3)  
growth_per_step[step:3-9] <= 1GiB | FAIL the run has 1 step in that span: a figure per step needs two  
tensor_peak_allocated[range:forward] <= 1GiB | FAIL the run has no PyTorch tensor records (docs/torch.md)  
peak[test:*] <= 1GiB | FAIL the run has no pytest test (\`memtrace run pytest ...\`: docs/units.md)  " "scopes: results"

# the text names the instance; a rules file takes the scopes (inih cuts a
# line at its first ':', inside the brackets here)
printf '[rules]\npeak[range:io:load] <= 20MiB\nleaked[step:2] <= 0\n' >"$T/rules.ini"
"$MEMTRACE" check --rules "$T/rules.ini" "peak[range:forward] <= 40MiB" \
	"growth_per_step[step:1-3] <= 0" "$T/trace.bin" >"$T/out" 2>&1
expect_eq "$?" 1 "text: exit status"
expect_eq "$(cat "$T/out")" "FAIL peak[range:io:load] <= 20MiB: peak reserved 30.0 MiB (31457280 B) in range 'io:load' (step 3)
FAIL leaked[step:2] <= 0: leaked (held more at its end than at its start) 10.0 MiB (10485760 B) in step 2
FAIL peak[range:forward] <= 40MiB: peak reserved 50.0 MiB (52428800 B) in range 'forward' (step 3)
FAIL growth_per_step[step:1-3] <= 0: growth of reserved per step 10.0 MiB (10485760 B) over steps 1-3, limit 0 B
memtrace check: 4 of 4 checks failed" "text: the lines"

# a baseline of the same run: the same instance's figure
"$MEMTRACE" check --json --baseline "$T/trace.bin" "peak[range:forward] <= baseline" \
	"leaked[step:1-3] < baseline" "$T/trace.bin" >"$T/base.json" 2>"$T/err"
expect_eq "$?" 1 "baseline: exit status"
expect_eq "$(python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(x["rule"], "|", x["pass"], x["value"], x["baseline"], x["limit"])' "$T/base.json")" "peak[range:forward] <= baseline | True $((50 * MiB)) $((50 * MiB)) $((50 * MiB))
leaked[step:1-3] < baseline | False $((10 * MiB)) $((10 * MiB)) $((10 * MiB))" "baseline: the figures"

# refused, one line each, exit status 2
bad() {
	"$MEMTRACE" check "$1" "$T/trace.bin" >"$T/out" 2>&1
	expect_eq "$? $(cat "$T/out")" "2 memtrace: bad rule '$1': $2" "refused: $1"
}
bad "growth_per_step[dev0] <= 0" "growth_per_step is of the run's steps or of a span of them ([step:A-B])"
bad "growth_per_step[step:2] <= 0" "growth_per_step is of the run's steps or of a span of them ([step:A-B])"
bad "growth_per_step <= baseline" "growth_per_step is signed: no baseline"
bad "leaked <= 0" "leaked is of a range, a step or a test: [range:NAME], [step:N], [test:GLOB]"
bad "leaked[dev0] <= 0" "leaked is of a range, a step or a test: [range:NAME], [step:N], [test:GLOB]"
bad "live_at_exit[step:1] <= 0" "a range, step or test has peak, tensor_peak_allocated and leaked (and steps growth_per_step, first_step_excess), not live_at_exit"
bad "peak[step:3-1] <= 0" "the steps 3-1 run backwards"
bad "peak[step:x] <= 0" "expected a step number or two, [step:N] or [step:A-B] (below 2^32)"
bad "peak[step:4294967296] <= 0" "expected a step number or two, [step:N] or [step:A-B] (below 2^32)"
bad "peak[range:] <= 0" "an empty name in the scope"
bad "peak[range:a <= 0" "the scope has no closing ']'"
bad "peak[bogus:1] <= 0" "expected a scope [devN], [pid:N], [rank:N], [range:NAME], [step:N], [step:A-B] or [test:GLOB] after the figure"
exit 0
