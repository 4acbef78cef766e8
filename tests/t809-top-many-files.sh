#!/bin/sh
# Issue 25 row 3: `memtrace top --dir` on more traces than file
# descriptors. 150 finished traces of one run: under a soft limit of 40
# (the hard one higher) top raises the soft limit and shows all of them;
# under a hard limit of 40 it closes the ended processes' traces (keeping
# their figures) and still shows all 150. On a running job with fewer
# descriptors than traces it says how many it could not follow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toplib.sh"
cd "$T" || exit 1
command -v python3 >/dev/null 2>&1 || skip "no python3"

sim "$MEMTRACE" run --no-summary -o "$T/one.bin" -- "$CLIENTS/rt-basic" >run.out 2>&1 || fail "run: $(cat run.out)"
mkdir many
i=0
while [ $i -lt 150 ]; do cp one.bin "many/trace.$i.bin"; i=$((i + 1)); done
nprocs() { python3 -c 'import json, sys; print(len(json.load(sys.stdin)["processes"]))' <"$1"; }
hard=$(sh -c 'ulimit -Hn')
if [ "$hard" = unlimited ] || [ "$hard" -gt 200 ]; then
	sh -c "ulimit -Sn 40 && exec '$MEMTRACE' top --once --json --dir many" >soft.json 2>soft.err ||
		fail "top under a soft limit of 40: $(cat soft.err)"
	expect_eq "$(nprocs soft.json)" 150 "processes under a soft limit of 40"
fi
sh -c "ulimit -n 40 && exec '$MEMTRACE' top --once --json --dir many" >hard.json 2>hard.err ||
	fail "top under a hard limit of 40: $(cat hard.err)"
expect_eq "$(nprocs hard.json)" 150 "processes under a hard limit of 40 (ended traces closed)"
"$MEMTRACE" report --json --no-db many/trace.0.bin >/dev/null 2>&1 || fail "report"

top_start
top_wait 1
sh -c "ulimit -n 6 && exec '$MEMTRACE' top --once --json trace.bin" >run.json 2>run.err
grep -q "warning: [0-9]* traces\{0,1\} of the run could not be followed" run.err ||
	fail "no word of the traces not followed: $(cat run.err)"
[ "$(grep -c 'could not be followed' run.err)" = 1 ] || fail "said more than once: $(cat run.err)"
top_go; top_wait 2; top_go; top_wait 3; top_end
exit 0
