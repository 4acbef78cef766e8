#!/bin/sh
# Command lines and paths with quotes, backslashes, newlines, tabs and bytes
# that are not UTF-8 come out of `memtrace dump` escaped, exactly: the
# client runs from a file named q"b\s<newline>x<0xff>y and re-executes
# itself with argv[0] = we"ird\0<newline><0xff><tab>, an argument with a
# blank, an empty one, a valid UTF-8 one and a control byte.
. "$(dirname "$0")/lib.sh"

name=$(printf 'q"b\\s\nx\377y')
cp "$CLIENTS/rt-rob-argv" "$T/$name" || fail "cannot copy the client"
cd "$T" || exit 1
sim "$MEMTRACE" run -o trace.bin -- "./$name" reexec >out 2>err || fail "run failed: $(cat err)"
expect_eq "$(cat out)" "5 args" "client output"
"$MEMTRACE" dump trace.bin >dump 2>dump.err || fail "dump failed: $(cat dump.err)"
[ -s dump.err ] && fail "dump warned: $(cat dump.err)"

# exe is the file's real path; the command line is what execv() was given.
line=$(grep '^process ' dump | sed 's/^process pid=[0-9]* ppid=[0-9]* rank=-1 local_rank=-1 world_size=-1 host="[^"]*" //')
expect_eq "$line" 'exe="'"$T"'/q\"b\\s\nx\xffy" cmdline="we\"ird\\0\n\xff\t" "a b" "" "é" "\x01"' "process record"
# the executable is the first module; its path escaped the same way
expect_eq "$(grep -c '^module .* path="'"$T"'/q\\"b\\\\s\\nx\\xffy"$' dump)" 1 "module record of the executable"
# nothing else escaped wrongly: every record is one line, no raw byte 0xff
expect_eq "$(grep -c "$(printf '\377')" dump)" 0 "raw 0xff bytes in the dump"
expect_eq "$(grep -cvE '^(# trace|process|module|stack|alloc|free|meminfo|driver|exit) ' dump)" 0 "lines that are not records"
expect_eq "$(grep -cE '^(alloc|free) ' dump)" 2 "events"

# the report, once it exists: the same bytes in the text report (escaped
# the same way), the JSON (a byte that is not UTF-8 reads as the code point
# of the same value, \u00ff) and the database (the bytes themselves)
"$MEMTRACE" report --help >/dev/null 2>&1 || exit 0
"$MEMTRACE" report trace.bin >report 2>report.err || fail "report failed: $(cat report.err)"
grep -qF ' we"ird\0\x0a\xff\x09 a b  é \x01' report || fail "text report: no escaped command line: $(grep -m 3 pid report)"
"$MEMTRACE" report --json --no-db trace.bin >json 2>json.err || fail "report --json failed: $(cat json.err)"
argv=$(awk '/"argv": \[/ { on = 1 } on { sub(/^ +/, ""); printf "%s", $0 } on && /\]/ { exit }' json)
expect_eq "$argv" '"argv": ["we\"ird\\0\n\u00ff\t","a b","","é","\u0001"],' "JSON argv"
expect_eq "$(grep -m 1 '"exe": ' json | sed 's/^ *//')" '"exe": "'"$T"'/q\"b\\s\nx\u00ffy",' "JSON exe"
expect_eq "$(sqlite3 trace.bin.db 'SELECT hex(exe) FROM processes')" \
	"$(printf '%s/q"b\\s\nx\377y' "$T" | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" "exe in the database"
exit 0
