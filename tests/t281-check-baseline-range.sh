#!/bin/sh
# t281-check-baseline-range: a relative rule whose limit (the baseline's
# figure plus N) is past 2^63 or 2^64 saturates instead of wrapping to 0
# (issue 25, row 7): `peak <= baseline + 10000000TB` is the most lenient
# rule and passes; `baseline - N` past 0 is 0; a percent saturates too; a
# value of 2^64 bytes or more is refused as out of range, as it is in the
# absolute form.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576
traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"

results() {
	python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("limit", x.get("error")))' "$1"
}
"$MEMTRACE" check --json --baseline "$T/trace.bin" \
	"peak <= baseline + 10000000TB" "peak <= baseline + 9223372036854775808" \
	"peak <= baseline + 18446744073709551000" "live_at_exit <= baseline + 18446744073709551615B" \
	"peak <= baseline + 1e300%" "peak >= baseline - 10000000TB" "peak <= baseline - 200%" \
	"peak <= baseline" "$T/trace.bin" >"$T/r.json" 2>"$T/err"
expect_eq "$?" 1 "exit status (only the rule with a limit of 0 fails)"
expect_eq "$(results "$T/r.json")" "peak <= baseline + 10000000TB | pass 10000000000117440512
peak <= baseline + 9223372036854775808 | pass 9223372036972216320
peak <= baseline + 18446744073709551000 | pass 18446744073709551615
live_at_exit <= baseline + 18446744073709551615B | pass 18446744073709551615
peak <= baseline + 1e300% | pass 18446744073709551615
peak >= baseline - 10000000TB | pass 0
peak <= baseline - 200% | FAIL 0
peak <= baseline | pass $((112 * MiB))" "limits saturate"

# (the first two are 112 MiB more than 10^19 and 2^63)

# out of range: refused, in both forms, with exit status 2
for r in "peak <= 20000000TB" "peak <= baseline + 20000000TB" "peak <= baseline + 1e400%" \
	"peak <= 18446744073709551616"; do
	"$MEMTRACE" check --baseline "$T/trace.bin" "$r" "$T/trace.bin" >"$T/out" 2>"$T/err"
	expect_eq "$?" 2 "'$r': exit status"
	grep -q "^memtrace: bad rule '$r': '.*' is out of range (below 16 EiB, 2^64 bytes)$" "$T/err" ||
		fail "'$r': $(cat "$T/err")"
done
exit 0
