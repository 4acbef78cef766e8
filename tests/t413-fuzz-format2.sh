#!/bin/sh
# The format-2 mutation fuzzer (tests/fuzz/fuzz2.py), bounded for CI:
# seeds made here by the test clients (several threads; short threads whose
# slabs are reused, with MT_REC_OWNER records; framework records of
# dl-fwgen), then mutants of them for FUZZ2_SECONDS (default 40) with the
# fixed seed FUZZ2_SEED (default 25), through report, report --json, dump,
# check, view, export, top --once and the live follower (top --once
# --dir). fuzz2.py says what each must do: no
# crash, hang or sanitizer report (make ASAN=1 test runs it under ASan and
# UBSan), a refusal in one line, the readers agreeing, check never passing
# what report warns about, and damage the format shows said. A failure
# names the mutant; FUZZ2_SEED and its number replay it.
#   make fuzz2 [FUZZ2_SECONDS=600]   the same for longer
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
command -v python3 >/dev/null 2>&1 || skip "no python3"
seconds=${FUZZ2_SECONDS:-40}
seed=${FUZZ2_SEED:-25}

mk() { # NAME CLIENT ARGS...: a seed trace, NAME.bin
	name=$1; shift
	sim "$MEMTRACE" run --no-summary --depth 4 -o "$T/$name.bin" -- "$@" >"$name.out" 2>&1 ||
		fail "seed $name: $(cat "$name.out")"
}
mk threads "$CLIENTS/rt-threads" 3 300
mk short "$CLIENTS/rt-short-threads" 40 3
mk pools "$CLIENTS/rt-pools"
mk fwsplit "$CLIENTS/dl-fwgen" split
mk fwleak "$CLIENTS/dl-fwgen" leak
mk fwexpand "$CLIENTS/dl-fwgen" expand
"$MEMTRACE" dump short.bin | grep -q '^owner' || fail "seed short: no owner records"
"$MEMTRACE" dump fwsplit.bin | grep -q '^fw_event' || fail "seed fwsplit: no framework records"
[ "$(ls threads*.bin short*.bin pools*.bin fw*.bin | wc -l)" = 6 ] || fail "a seed wrote more than one trace: $(ls ./*.bin)"

python3 "$ROOT/tests/fuzz/fuzz2.py" --memtrace "$MEMTRACE" --work "$T/work" --seed "$seed" \
	--seconds "$seconds" --jobs 2 threads.bin short.bin pools.bin fwsplit.bin fwleak.bin fwexpand.bin >fuzz.out 2>&1
rc=$?
cat fuzz.out
[ $rc = 0 ] || fail "fuzz2 (seed $seed): $(grep -c '^FAIL' fuzz.out) mutants broke a promise"
grep -q "^fuzz2: [0-9]* mutants" fuzz.out || fail "fuzz2 said nothing"
n=$(sed -n 's/^fuzz2: \([0-9]*\) mutants.*/\1/p' fuzz.out)
[ "$n" -ge 20 ] || fail "fuzz2 ran $n mutants only in $seconds s"
exit 0
