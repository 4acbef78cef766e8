#!/bin/sh
# t282-check-misspelt: an argument of `memtrace check` that looks like a
# rule (it has a comparison) is parsed as one, and a wrong one is refused
# with what is wrong (issue 25, row 11), not taken for a trace's file name
# ("no rule given", "cannot open 'pek <= 1'"): an unknown figure with the
# nearest name, a bad operator, scope or value; the same from -r, from a
# rules file and from `memtrace run --check`.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"

# bad RULE MESSAGE: check RULE trace.bin exits 2 with "memtrace: bad rule 'RULE': MESSAGE"
bad() {
	"$MEMTRACE" check "$1" "$T/trace.bin" >"$T/out" 2>"$T/err"
	expect_eq "$?" 2 "'$1': exit status"
	expect_eq "$(cat "$T/err")" "memtrace: bad rule '$1': $2" "'$1': message"
	expect_eq "$(cat "$T/out")" "" "'$1': no output"
}
bad "pek <= 3GiB" "unknown figure 'pek'; did you mean 'peak'?"
bad "pek <= 1" "unknown figure 'pek'; did you mean 'peak'?"
bad "Peak<=1" "unknown figure 'Peak'; did you mean 'peak'?"
bad "live_at_exti <= 0" "unknown figure 'live_at_exti'; did you mean 'live_at_exit'?"
bad "failure == 0" "unknown figure 'failure'; did you mean 'failures'?"
bad "alocated_peak[dev0] <= 1GiB" "unknown figure 'alocated_peak'; did you mean 'allocated_peak'?"
bad "memory <= 1GiB" "unknown figure 'memory' (expected peak, allocated_peak, live_at_exit, failures, oom_retries, untraced, shm_left, growth_per_step, first_step_excess, leaked, tensor_peak_allocated, requested_peak, tensor_live_at_exit, ooms, oom_fragmentation, oom_other_stream, oom_device_full, oom_outside, drain_share, parameters_peak, gradients_peak, optimizer_state_peak, activations_peak, temporaries_peak)"
bad "<= 1GiB" "expected a figure (peak, allocated_peak, live_at_exit, failures, oom_retries, untraced, shm_left, growth_per_step, first_step_excess, leaked, tensor_peak_allocated, requested_peak, tensor_live_at_exit, ooms, oom_fragmentation, oom_other_stream, oom_device_full, oom_outside, drain_share, parameters_peak, gradients_peak, optimizer_state_peak, activations_peak, temporaries_peak)"
bad "peak = 1GiB" "expected <=, <, >=, >, == or != after peak"
bad "peak =< 1GiB" "expected <=, <, >=, >, == or != after peak"
bad "peak[gpu0] <= 1GiB" "expected a scope [devN], [pid:N], [rank:N], [range:NAME], [step:N], [step:A-B] or [test:GLOB] after the figure"
bad "peak <= 1 GiB per device" "unexpected 'per device' after the value"
bad "peak <= nan" "'nan' is not a number: expected a size (8GiB, 512MiB, 0), a count, or baseline [+|- N[%|unit]]"
bad "peak <= 0x100" "unexpected 'x100' after the value"
bad "peak <= -1" "a negative value: expected a size (8GiB, 512MiB, 0), a count, or baseline [+|- N[%|unit]]"
bad "peak <= 5%" "a percent is of the baseline: baseline + N%"

# -r and the rules file say the same
"$MEMTRACE" check -r "pek <= 3GiB" "$T/trace.bin" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "-r: exit status"
expect_eq "$(cat "$T/err")" "memtrace: bad rule 'pek <= 3GiB': unknown figure 'pek'; did you mean 'peak'?" "-r: message"
printf '[rules]\npeak <= 1GiB\npek <= 3GiB\n' >"$T/r.ini"
"$MEMTRACE" check --rules "$T/r.ini" "$T/trace.bin" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "rules file: exit status"
grep -q "unknown figure 'pek'; did you mean 'peak'?$" "$T/err" || fail "rules file: $(cat "$T/err")"
sim "$MEMTRACE" run --no-summary -o "$T/run.bin" --check "pek <= 3GiB" -- true >/dev/null 2>"$T/err"
expect_eq "$?" 2 "run --check: exit status"
grep -q "unknown figure 'pek'; did you mean 'peak'?" "$T/err" || fail "run --check: $(cat "$T/err")"

# a file that is there is a file, even with a comparison in its name
cp "$T/trace.bin" "$T/peak<=1"
"$MEMTRACE" check "peak <= 112MiB" "$T/peak<=1" >"$T/out" 2>"$T/err"
expect_eq "$?" 0 "a trace named like a rule: exit status"
# and a name with '=' but no blank beside it is a file name
"$MEMTRACE" check "peak <= 112MiB" "$T/run=3.bin" >"$T/out" 2>"$T/err"
expect_eq "$?" 2 "missing run=3.bin: exit status"
expect_eq "$(cat "$T/err")" "memtrace: cannot open '$T/run=3.bin': No such file or directory" "missing run=3.bin: message"
# the right rules still work, spaced or not
"$MEMTRACE" check "peak<=112MiB" "live_at_exit <= 20 MiB" "failures==0" "$T/trace.bin" >"$T/out" 2>"$T/err"
expect_eq "$?" 0 "good rules: exit status"
exit 0
