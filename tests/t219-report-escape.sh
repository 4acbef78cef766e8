#!/bin/sh
# Strings from the trace (here a command line with quotes, a backslash, a
# newline, a tab and a byte that is not UTF-8) are escaped in the JSON
# (which must parse), printed safely in the text, and stored verbatim in
# the database through bound parameters.
. "$(dirname "$0")/lib.sh"

nl='
'
traced "$CLIENTS/rt-rep-peak" "a\"b'c" "back\\slash" "new${nl}line	tab" "$(printf 'bad\377byte')" "'); DROP TABLE events; --" \
	>"$T/out" 2>"$T/err" || fail "rt-rep-peak failed: $(cat "$T/err")"
"$MEMTRACE" report --json "$T/trace.bin" >"$T/json" || fail "report --json failed"
grep -q '"a\\"b'"'"'c",$' "$T/json" || fail "quote not escaped in JSON"
grep -q '"back\\\\slash",$' "$T/json" || fail "backslash not escaped in JSON"
grep -q '"new\\nline\\ttab",$' "$T/json" || fail "newline/tab not escaped in JSON"
grep -q '"bad\\u00ffbyte",$' "$T/json" || fail "invalid UTF-8 not escaped in JSON"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["processes"][0]["argv"][3] == "new\nline\ttab"' "$T/json" ||
		fail "the JSON report does not parse to the same arguments"
fi
"$MEMTRACE" report "$T/trace.bin" >"$T/text" || fail "report failed"
grep -q "^  pid [0-9]* *rt-rep-peak a\"b'c back\\\\slash new\\\\x0aline\\\\x09tab bad\\\\xffbyte '); DROP TABLE events; --$" "$T/text" ||
	fail "command line not escaped in the text: $(sed -n 2p "$T/text")"
expect_eq "$(sqlite3 "$T/trace.bin.db" "SELECT count(*) FROM events")" 10 "events survive"
sqlite3 "$T/trace.bin.db" "SELECT command FROM processes" | grep -q "DROP TABLE events" ||
	fail "command not stored verbatim"
exit 0
