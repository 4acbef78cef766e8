#!/bin/sh
# t280-check-exit: the exit statuses of `memtrace check` (0 passed, 1 a
# rule failed, 2 usage, bad rule or unreadable trace) and of `memtrace run`
# with --check (the program's status when it failed, else the check's) and
# --require-trace (3 when nothing was traced); --junit writes JUnit XML
# that python3's xml.etree parses, one testcase per result, a <failure>
# for each broken rule.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"

traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"

st() { "$@" >"$T/out" 2>"$T/err"; echo $?; }
expect_eq "$(st "$MEMTRACE" check "peak <= 112MiB" "$T/trace.bin")" 0 "passing"
expect_eq "$(st "$MEMTRACE" check "peak <= 111MiB" "$T/trace.bin")" 1 "failing"
expect_eq "$(st "$MEMTRACE" check "$T/trace.bin")" 2 "no rule"
expect_eq "$(cat "$T/err")" "memtrace: no rule given (RULE, -r, --rules or ./.memtrace.ini) (try 'memtrace check --help')" "no rule: message"
expect_eq "$(st "$MEMTRACE" check "peak <= 1GiB")" 2 "no trace"
expect_eq "$(st "$MEMTRACE" check -r "peek <= 1GiB" "$T/trace.bin")" 2 "unknown figure"
expect_eq "$(st "$MEMTRACE" check -r "peak <= 1GiB" "$T/missing.bin")" 2 "missing trace"
printf 'not a trace' >"$T/bad.bin"
expect_eq "$(st "$MEMTRACE" check -r "peak <= 1GiB" "$T/bad.bin")" 2 "bad trace"
expect_eq "$(st "$MEMTRACE" check "peak <= baseline" "$T/trace.bin")" 2 "baseline rule without --baseline"
expect_eq "$(st "$MEMTRACE" check --bogus "peak <= 1GiB" "$T/trace.bin")" 2 "unknown option"
expect_eq "$(st "$MEMTRACE" check --help)" 0 "--help"

# --- JUnit XML, parsed ----------------------------------------------------------
"$MEMTRACE" check --junit "$T/j.xml" "peak <= 112MiB" "live_at_exit <= 0" "failures == 0" \
	"$T/trace.bin" >/dev/null
expect_eq "$?" 1 "junit: exit status"
expect_eq "$(python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot(); s = r.find("testsuite")
print(r.tag, s.get("tests"), s.get("failures"))
for c in s.findall("testcase"):
    f = c.find("failure")
    print(c.get("name"), "|", f.get("message") if f is not None else "ok")' "$T/j.xml")" "testsuites 3 1
peak <= 112MiB (device 0) | ok
live_at_exit <= 0 (device 0) | live at exit 20.0 MiB (20971520 B) on device 0; top site keep_loss (leak.c:54) < main (leak.c:76) (20.0 MiB)
failures == 0 (device 0) | ok" "junit: parsed"

# a baseline JSON that is not a report, or of a newer format
printf '{"before": {}}\n' >"$T/notrep.json"
expect_eq "$(st "$MEMTRACE" check --baseline "$T/notrep.json" "peak <= baseline" "$T/trace.bin")" 2 "baseline JSON not a report"
expect_eq "$(cat "$T/err")" "memtrace: '$T/notrep.json' is not the JSON of memtrace report (no format_version, devices and peak_all_devices)" "baseline JSON not a report: message"
printf '{"format_version": 99, "devices": [], "peak_all_devices": {}}\n' >"$T/newer.json"
expect_eq "$(st "$MEMTRACE" check --baseline "$T/newer.json" "peak <= baseline" "$T/trace.bin")" 2 "baseline JSON newer"
expect_eq "$(cat "$T/err")" "memtrace: '$T/newer.json' is a report of format_version 99; this memtrace reads up to 2" "baseline JSON newer: message"
printf '{"format_version": 2,' >"$T/cut.json"
expect_eq "$(st "$MEMTRACE" check --baseline "$T/cut.json" "peak <= baseline" "$T/trace.bin")" 2 "baseline JSON cut short"
expect_eq "$(wc -l <"$T/err")" 1 "baseline JSON cut short: one line"
grep -q "^memtrace: cannot read '$T/cut.json' as JSON: " "$T/err" || fail "baseline JSON cut short: $(cat "$T/err")"

# --- memtrace run --check / --require-trace ---------------------------------
r() { sim "$MEMTRACE" run --no-summary -o "$T/run.bin" "$@" >"$T/out" 2>"$T/err"; echo $?; }
expect_eq "$(r --check "live_at_exit <= 20MiB" -- "$SAMPLES/leak")" 0 "run --check: passes"
expect_eq "$(r --check "live_at_exit <= 0" -- "$SAMPLES/leak")" 1 "run --check: fails"
grep -q '^FAIL live_at_exit <= 0: live at exit 20.0 MiB' "$T/out" || fail "run --check: output $(cat "$T/out")"
printf '[rules]\nlive_at_exit <= 0\n[suppressions]\nleak:keep_loss\n' >"$T/ci.ini"
expect_eq "$(r --check "$T/ci.ini" --check "peak <= 112MiB" -- "$SAMPLES/leak")" 0 "run --check FILE and RULE"
# the program failed: its status, whatever the check says
expect_eq "$(r --check "peak <= 1GiB" -- sh -c "\"$SAMPLES/leak\" >/dev/null; exit 5")" 5 "run --check: program's status"
expect_eq "$(r --check "peek" -- true)" 2 "run --check: bad rule before the run"
[ -e "$T/run.bin" ] && fail "run --check with a bad rule ran the program"
# nothing traced
expect_eq "$(r --require-trace -- true)" 3 "--require-trace: nothing traced"
expect_eq "$(tail -n 1 "$T/err")" "memtrace: --require-trace: the program made no CUDA memory call" "--require-trace: message"
expect_eq "$(r -- true)" 0 "no --require-trace: nothing traced passes"
expect_eq "$(r --require-trace -- false)" 1 "--require-trace: the program's failure first"
expect_eq "$(r --require-trace -- "$SAMPLES/leak")" 0 "--require-trace: traced"
expect_eq "$(r --check "failures == 0" -- true)" 2 "--check: nothing traced to check"
# run --check --junit and --json: the check's output (its JSON after the
# program's own line on stdout)
expect_eq "$(r --check "live_at_exit <= 0" --check "peak <= 112MiB" --junit "$T/run.xml" --json -- "$SAMPLES/leak")" 1 "run --check --junit --json: status"
expect_eq "$(python3 -c 'import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot().find("testsuite")
print(s.get("tests"), s.get("failures"))
for c in s.findall("testcase"):
    print(c.get("name"), "|", "FAIL" if c.find("failure") is not None else "ok")' "$T/run.xml")" "2 1
live_at_exit <= 0 (device 0) | FAIL
peak <= 112MiB (device 0) | ok" "run --check --junit: parsed"
expect_eq "$(python3 -c 'import json, sys
s = open(sys.argv[1]).read(); r = json.loads(s[s.index("{"):])
print(r["passed"], r["checks"], r["failed"], [(x["rule"], x["value"]) for x in r["results"]])' "$T/out")" "False 2 1 [('live_at_exit <= 0', 20971520), ('peak <= 112MiB', 117440512)]" "run --check --json: parsed"
expect_eq "$(r --junit "$T/nocheck.xml" -- true)" 2 "run --junit without --check"
exit 0
