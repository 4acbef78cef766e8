#!/bin/sh
# Bad input: an empty, wrong-magic, short, newer-format or corrupt trace is
# refused with one line and exit 1 (a missing one: 2), by report and plot
# alike; a torn record or a trace cut before its first slab loads with a
# warning. The reader test's sample trace (every record type, two devices)
# reports without complaint.
. "$(dirname "$0")/lib.sh"

GEN=$B/tests/unit/test-analyze-reader
[ -x "$GEN" ] || skip "no $GEN"
cd "$T" || exit 1
"$GEN" --write-sample s.bin && "$GEN" --write-sample torn.bin torn || fail "cannot write the sample traces"
: >empty.bin
printf 'NOTATRACE-NOTATRACE-NOTATRACE-NOTATRACE-NOTATRACE-NOTATRACE-NOTATRACE' >magic.bin
head -c 40 s.bin >short.bin
cp s.bin v3.bin && printf '\003' | dd of=v3.bin bs=1 seek=8 conv=notrunc 2>/dev/null
cp s.bin bad.bin && printf '\377' | dd of=bad.bin bs=1 seek=$((4096 + 16 + 1)) conv=notrunc 2>/dev/null
head -c 2000 s.bin >hdr.bin

refused() { # FILE MESSAGE
	for cmd in report plot; do
		if [ $cmd = plot ]; then
			"$MEMTRACE" plot -o plots "$1" >out 2>err
		else
			"$MEMTRACE" report --no-db "$1" >out 2>err
		fi
		rc=$?
		expect_eq "$rc" 1 "$cmd $1: exit status"
		expect_eq "$(cat err)" "$2" "$cmd $1: message"
		[ -s out ] && fail "$cmd $1 printed a report"
	done
	return 0
}
refused empty.bin "memtrace: 'empty.bin': empty file, not a memtrace trace"
refused magic.bin "memtrace: 'magic.bin': not a memtrace trace (bad magic)"
refused short.bin "memtrace: 'short.bin': truncated trace header (40 of 64 bytes)"
refused v3.bin "memtrace: 'v3.bin': trace format 3 is newer than this memtrace (reads up to 2)"
refused bad.bin "memtrace: 'bad.bin': corrupt process record at offset 0x1010: short size encoding"
# one bad file among good ones refuses the run
"$MEMTRACE" report s.bin bad.bin >out 2>err
expect_eq "$?" 1 "a bad trace among good ones"
"$MEMTRACE" report missing.bin >out 2>err
expect_eq "$?" 2 "missing trace: exit status"
expect_eq "$(cat err)" "memtrace: cannot open 'missing.bin': No such file or directory" "missing trace: message"
"$MEMTRACE" report >out 2>err
expect_eq "$?" 2 "no trace given"

"$MEMTRACE" report --json torn.bin >out 2>err || fail "torn trace: exit $?"
expect_eq "$(cat err)" "memtrace: warning: 'torn.bin': 1 torn record skipped (the process was killed while writing)" "torn warning"
grep -q '"total": 4' out || fail "torn trace: the records before the tear are not all there"
"$MEMTRACE" report hdr.bin >out 2>err || fail "trace cut before its first slab: exit $?"
grep -q 'truncated before the first slab' err || fail "no warning for the cut trace"
grep -q '^memtrace report: 1 process, .*0 events' out || fail "cut trace: $(head -1 out)"
"$MEMTRACE" report --json s.bin >out 2>err || fail "sample trace: exit $?"
[ -s err ] && fail "sample trace warned: $(cat err)"
if command -v python3 >/dev/null 2>&1; then
	python3 -m json.tool out >/dev/null || fail "the JSON report does not parse"
fi
exit 0
