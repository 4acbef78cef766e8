#!/bin/sh
# t409-rob-no-records: a trace that lost its records is never a clean pass
# (issue 25, row 2). Cut right after its header, its only slab zeroed, cut
# inside its header (`head -c 5000`), or cut in the middle of a slab: every
# reader warns (a trace with no record at all: "holds no records: cut or
# never written"), its process is read as interrupted, report, view and
# dump still exit 0, and `memtrace check` fails with a line saying what was
# lost, whatever its rules say, as `memtrace run --check` would; a damaged
# baseline fails it too.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
traced "$SAMPLES/leak" >/dev/null 2>err || fail "leak failed: $(cat err)"
HS=$(od -An -tu4 -j 12 -N 4 trace.bin | tr -d ' ')
SS=$(od -An -tu4 -j 16 -N 4 trace.bin | tr -d ' ')

head -c "$HS" trace.bin >header.bin
python3 -c 'import sys
d = bytearray(open("trace.bin", "rb").read()); hs = int(sys.argv[1])
d[hs:] = bytes(len(d) - hs); open("zeroed.bin", "wb").write(d)' "$HS"
head -c 5000 trace.bin >cut5000.bin
head -c $((HS + SS / 2)) trace.bin >half.bin

nothing="holds no records: cut or never written"
for f in header zeroed cut5000 half; do
	case $f in
	header | zeroed) want="memtrace: warning: '$f.bin': $nothing" ;;
	cut5000) want="memtrace: warning: 'cut5000.bin': truncated before the first slab (5000 of $HS header bytes); $nothing" ;;
	half) want="memtrace: warning: 'half.bin': truncated: the last slab has $((SS / 2)) of $SS bytes; loaded the records before the cut" ;;
	esac
	# report, dump, view: exit 0, and say it
	"$MEMTRACE" report --no-db "$f.bin" >out 2>err
	expect_eq "$?" 0 "report $f: exit status"
	expect_eq "$(cat err)" "$want" "report $f: the warning"
	if [ "$f" != half ]; then
		grep -q "interrupted: killed or crashed" out || fail "report $f: not read as interrupted: $(cat out)"
	fi
	"$MEMTRACE" dump "$f.bin" >out 2>err
	expect_eq "$?" 0 "dump $f: exit status"
	expect_eq "$(cat err)" "$want" "dump $f: the warning"
	"$MEMTRACE" view -o "$f.html" "$f.bin" >out 2>err
	expect_eq "$?" 0 "view $f: exit status"
	grep -qF "$want" err || fail "view $f: no warning: $(cat err)"
	# check: fails, the most lenient rule too, with the warning as the line
	"$MEMTRACE" check "peak <= 1TiB" "failures >= 0" "$f.bin" >out 2>err
	expect_eq "$?" 1 "check $f: exit status"
	expect_eq "$(cat out)" "FAIL trace intact: ${want#memtrace: warning: }
memtrace check: 1 of 3 checks failed" "check $f: the lines"
	"$MEMTRACE" check --json "peak <= 1TiB" "$f.bin" >out.json 2>err
	expect_eq "$?" 1 "check --json $f: exit status"
	expect_eq "$(python3 -c 'import json
j = json.load(open("out.json")); r = j["results"][-1]
print(j["passed"], j["failed"], r["rule"], r["pass"], r["error"])')" \
		"False 1 trace intact False ${want#memtrace: warning: }" "check --json $f"
done

# the whole trace passes; a damaged baseline fails the check too
"$MEMTRACE" check "peak <= 1TiB" trace.bin >out 2>err
expect_eq "$?" 0 "check of the whole trace: exit status"
"$MEMTRACE" check --baseline header.bin "peak <= baseline + 1TiB" trace.bin >out 2>err
expect_eq "$?" 1 "check against a baseline with no records: exit status"
grep -q "^FAIL baseline trace intact: 'header.bin': $nothing$" out ||
	fail "check against a baseline with no records: $(cat out)"
# the rules file, the JUnit XML: the same failure
"$MEMTRACE" check --junit j.xml "peak <= 1TiB" zeroed.bin >out 2>err
expect_eq "$?" 1 "check --junit zeroed: exit status"
grep -q "<failure message=\"'zeroed.bin': $nothing\"" j.xml || fail "junit: $(cat j.xml)"
exit 0
