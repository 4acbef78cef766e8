#!/bin/sh
# t289-check-tests: `memtrace check` on pytest's tests (issue 26): the suite
# of t644 (tests/data/pytest-gpu/test_gpu.py, whose header works out each
# test's figures by hand: held at its start / peak / at its end, MiB:
# clean 0/8/0, leaks 0/3/3, over_peak 3/19/3, within 3/23/3, over_leaks
# 3/5/5, fails_itself 5/6/5, fixture 9/10/9). [test:GLOB] gives one result
# per test, by nodeid; a glob that matches no test fails and says so; the
# JUnit XML has one testcase per test, named as pytest's junitxml names it,
# with its rules' verdicts, beside the run-level rules' testcases.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -m pytest --version >/dev/null 2>&1 || skip "no pytest for $PY (python3-pytest)"
cd "$T" || exit 1
cp "$ROOT/tests/data/pytest-gpu/test_gpu.py" .
unset PYTEST_PLUGINS PYTEST_ADDOPTS
MiB=1048576

traced "$PY" -m pytest -p no:cacheprovider test_gpu.py >out 2>err
expect_eq "$?" "1" "pytest's exit status (three tests fail)"

"$MEMTRACE" check --json --junit j.xml "leaked[test:*] <= 0" "peak[test:*over*] <= 10MiB" \
	"peak[test:test_gpu.py::test_within] <= 23MiB" "peak[test:nothing*] <= 1GiB" \
	"peak <= 23MiB" trace.bin >res.json 2>err
expect_eq "$?" 1 "exit status"
expect_eq "$(python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("value", x.get("error")), x.get("test", ""))' res.json)" \
"leaked[test:*] <= 0 | pass 0 test_gpu.py::test_clean
leaked[test:*] <= 0 | FAIL $((3 * MiB)) test_gpu.py::test_leaks
leaked[test:*] <= 0 | pass 0 test_gpu.py::test_over_peak
leaked[test:*] <= 0 | pass 0 test_gpu.py::test_within
leaked[test:*] <= 0 | FAIL $((2 * MiB)) test_gpu.py::test_over_leaks
leaked[test:*] <= 0 | pass 0 test_gpu.py::test_fails_itself
leaked[test:*] <= 0 | pass 0 test_gpu.py::test_fixture
peak[test:*over*] <= 10MiB | FAIL $((19 * MiB)) test_gpu.py::test_over_peak
peak[test:*over*] <= 10MiB | pass $((5 * MiB)) test_gpu.py::test_over_leaks
peak[test:test_gpu.py::test_within] <= 23MiB | pass $((23 * MiB)) test_gpu.py::test_within
peak[test:nothing*] <= 1GiB | FAIL no test of the run's 7 matches 'nothing*' 
peak <= 23MiB | pass $((23 * MiB)) " "the results, one per test"

"$MEMTRACE" check "peak[test:*over_peak] <= 10MiB" trace.bin >text 2>&1
expect_eq "$(head -1 text)" "FAIL peak[test:*over_peak] <= 10MiB: peak reserved 19.0 MiB (19922944 B) in test 'test_gpu.py::test_over_peak'" "the text"

expect_eq "$(python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(r.tag, r.get("tests"), r.get("failures"))
for s in r.findall("testsuite"):
    print(s.get("name"), s.get("tests"), s.get("failures"))
    for c in s.findall("testcase"):
        f, o = c.find("failure"), c.find("system-out")
        print(" ", c.get("classname"), c.get("name"), "|", f.text if f is not None else "ok")
        if o is not None:
            print("   ", o.text.replace("\n", "\n    "))' j.xml)" \
"testsuites 9 4
memtrace check 2 1
  memtrace.check peak[test:nothing*] <= 1GiB | peak[test:nothing*] <= 1GiB: no test of the run's 7 matches 'nothing*'
  memtrace.check peak <= 23MiB (device 0) | ok
memtrace check: pytest tests 7 3
  test_gpu test_clean | ok
    PASS leaked[test:*] <= 0: leaked (held more at its end than at its start) 0 B in test 'test_gpu.py::test_clean'
  test_gpu test_leaks | leaked[test:*] <= 0: leaked (held more at its end than at its start) 3.00 MiB (3145728 B) in test 'test_gpu.py::test_leaks'
    FAIL leaked[test:*] <= 0: leaked (held more at its end than at its start) 3.00 MiB (3145728 B) in test 'test_gpu.py::test_leaks'
  test_gpu test_over_peak | peak[test:*over*] <= 10MiB: peak reserved 19.0 MiB (19922944 B) in test 'test_gpu.py::test_over_peak'
    PASS leaked[test:*] <= 0: leaked (held more at its end than at its start) 0 B in test 'test_gpu.py::test_over_peak'
    FAIL peak[test:*over*] <= 10MiB: peak reserved 19.0 MiB (19922944 B) in test 'test_gpu.py::test_over_peak'
  test_gpu test_within | ok
    PASS leaked[test:*] <= 0: leaked (held more at its end than at its start) 0 B in test 'test_gpu.py::test_within'
    PASS peak[test:test_gpu.py::test_within] <= 23MiB: peak reserved 23.0 MiB (24117248 B) in test 'test_gpu.py::test_within'
  test_gpu test_over_leaks | leaked[test:*] <= 0: leaked (held more at its end than at its start) 2.00 MiB (2097152 B) in test 'test_gpu.py::test_over_leaks'
    FAIL leaked[test:*] <= 0: leaked (held more at its end than at its start) 2.00 MiB (2097152 B) in test 'test_gpu.py::test_over_leaks'
    PASS peak[test:*over*] <= 10MiB: peak reserved 5.00 MiB (5242880 B) in test 'test_gpu.py::test_over_leaks'
  test_gpu test_fails_itself | ok
    PASS leaked[test:*] <= 0: leaked (held more at its end than at its start) 0 B in test 'test_gpu.py::test_fails_itself'
  test_gpu test_fixture | ok
    PASS leaked[test:*] <= 0: leaked (held more at its end than at its start) 0 B in test 'test_gpu.py::test_fixture'" "the JUnit XML"
exit 0
