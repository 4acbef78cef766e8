#!/bin/sh
# t283-diff-fail-if-parse: `memtrace diff --fail-if` reads its expression
# with the parser of `memtrace check`'s rules (issue 25, row 8): what check
# refuses (nan, inf, hex, a sign, out of range, junk after the value, an
# unknown figure) diff refuses with the same words and exit status 2,
# instead of taking 'peak > nan' and never firing; the limits it takes
# are those check takes (every unit of docs/check.md).
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"
A=$T/trace.bin

# both VALUE: check 'peak <= VALUE' and diff --fail-if 'peak > VALUE' refuse
# it with the same reason
both() {
	"$MEMTRACE" check "peak <= $1" "$A" >/dev/null 2>"$T/cerr"
	expect_eq "$?" 2 "check '$1': exit status"
	"$MEMTRACE" diff --fail-if "peak > $1" "$A" "$A" >/dev/null 2>"$T/derr"
	expect_eq "$?" 2 "diff '$1': exit status"
	why=$(sed -n "s/^memtrace: bad rule 'peak <= .*': //p" "$T/cerr" | sed 's/: expected .*//')
	[ -n "$why" ] || fail "check '$1': $(cat "$T/cerr")"
	grep -q "^memtrace: --fail-if 'peak > $1': $why" "$T/derr" ||
		fail "diff '$1' does not say '$why': $(cat "$T/derr")"
}
for v in nan NaN inf infinity -1 -0 0x10 1e400 20000000TB 18446744073709551616 '1 GiB extra' 'lots'; do
	both "$v"
done
# a percent: diff takes it (the growth), check takes it of a baseline only
"$MEMTRACE" diff --fail-if "peak > inf%" "$A" "$A" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "diff inf%: exit status"
"$MEMTRACE" diff --fail-if "peak > 1e400%" "$A" "$A" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "diff 1e400%: exit status"
# unknown figures: the same suggestion
"$MEMTRACE" diff --fail-if "pek > 0" "$A" "$A" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "diff pek: exit status"
expect_eq "$(cat "$T/err")" "memtrace: --fail-if 'pek > 0': unknown figure 'pek'; did you mean 'peak'? (try 'memtrace diff --help')" "diff pek: message"
"$MEMTRACE" diff --fail-if "peak >= 0" "$A" "$A" >/dev/null 2>"$T/err"
expect_eq "$?" 2 "diff >=: exit status"
expect_eq "$(cat "$T/err")" "memtrace: --fail-if 'peak >= 0': expected > after peak (try 'memtrace diff --help')" "diff >=: message"
# what it takes: check's units (TB, KB, T, ...), the JSON names, spaces
for e in "peak > 1TB" "peak > 1 KB" "peak > 0.5T" "peak_reserved_bytes > 0" "cached>0" "peak > 5 %"; do
	"$MEMTRACE" diff --fail-if "$e" "$A" "$A" >/dev/null 2>"$T/err"
	expect_eq "$?" 0 "diff --fail-if '$e' on the same run: exit status ($(cat "$T/err"))"
done
exit 0
