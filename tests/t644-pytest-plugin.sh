#!/bin/sh
# t644: memtrace's pytest plugin (python/memtrace_pytest.py) under
# `memtrace run` (enabled by the bootstrap, no -p): per-test peak and leak
# exactly as tests/data/pytest-gpu/test_gpu.py's header works them out, in
# the plugin's table and the report's; a test over its gpu_memory limit
# fails with "GPU MEMORY", the others pass or fail on their own. Without
# memtrace, `-p memtrace_pytest` checks nothing and says so.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -m pytest --version >/dev/null 2>&1 || skip "no pytest for $PY (python3-pytest)"
cd "$T" || exit 1
cp "$ROOT/tests/data/pytest-gpu/test_gpu.py" .
unset PYTEST_PLUGINS PYTEST_ADDOPTS

traced "$PY" -m pytest -p no:cacheprovider -v test_gpu.py >out 2>err
expect_eq "$?" "1" "pytest's exit status (three tests fail)"
expect_eq "$(grep '^test_gpu.py::' out | grep -v '^test_gpu.py::[a-z_]*  ' | sed 's/ *\[.*//' | sed 's/  */ /g')" \
"test_gpu.py::test_clean PASSED
test_gpu.py::test_leaks PASSED
test_gpu.py::test_over_peak GPU MEMORY
test_gpu.py::test_within PASSED
test_gpu.py::test_over_leaks GPU MEMORY
test_gpu.py::test_fails_itself FAILED
test_gpu.py::test_fixture PASSED" "each test's outcome"
grep -qx 'memtrace: test test_gpu.py::test_over_peak: GPU memory peak 19.0 MiB over its limit of 10.0 MiB' out ||
	fail "the over-peak failure's message: $(cat out)"
grep -qx 'memtrace: test test_gpu.py::test_over_leaks: GPU memory leaked 2.00 MiB over its limit of 1.00 MiB' out ||
	fail "the over-leaks failure's message"
sed -n '/ memtrace: GPU memory per test /,/ short test summary /p' out | sed '1d;$d' >table
expect_eq "$(cat table)" "figures of the process's reserved, over all its devices
test                                                     peak       leaked  gpu_memory mark
test_gpu.py::test_clean                              8.00 MiB          0 B
test_gpu.py::test_leaks                              3.00 MiB     3.00 MiB
test_gpu.py::test_over_peak                          19.0 MiB          0 B  peak 19.0 MiB over its limit of 10.0 MiB
test_gpu.py::test_within                             23.0 MiB          0 B  within its limits
test_gpu.py::test_over_leaks                         5.00 MiB     2.00 MiB  leaked 2.00 MiB over its limit of 1.00 MiB
test_gpu.py::test_fails_itself                       6.00 MiB          0 B
test_gpu.py::test_fixture                            10.0 MiB          0 B" "the plugin's table"

# the report says the same, text and JSON; the reports the plugin ran were
# not traced (one trace only)
expect_eq "$(ls *.bin)" "trace.bin" "the only trace"
"$MEMTRACE" report --no-db trace.bin >text 2>err || fail "report failed: $(cat err)"
expect_eq "$(sed -n '/^  tests: /,/^$/p' text | sed '/^$/d' | sed 1,2d | sed 's/^ *//' | tr -s ' ')" \
"test_gpu.py::test_clean 8.00 MiB 0 B
test_gpu.py::test_leaks 3.00 MiB 3.00 MiB
test_gpu.py::test_over_peak 19.0 MiB 0 B
test_gpu.py::test_within 23.0 MiB 0 B
test_gpu.py::test_over_leaks 5.00 MiB 2.00 MiB
test_gpu.py::test_fails_itself 6.00 MiB 0 B
test_gpu.py::test_fixture 10.0 MiB 0 B" "the report's tests"
"$MEMTRACE" report --json --no-db trace.bin | python3 -c '
import json, sys
M = 1 << 20
t = json.load(sys.stdin)["ranges"]["tests"]
got = [(x["name"].split("::")[1], x["reserved_at_start"] // M, x["peak_reserved"] // M, x["reserved_at_end"] // M) for x in t]
assert got == [("test_clean", 0, 8, 0), ("test_leaks", 0, 3, 3), ("test_over_peak", 3, 19, 3),
               ("test_within", 3, 23, 3), ("test_over_leaks", 3, 5, 5), ("test_fails_itself", 5, 6, 5),
               ("test_fixture", 9, 10, 9)], got
' || fail "the JSON's tests"
"$MEMTRACE" dump trace.bin | grep '^range' | grep -vc 'origin=pytest' | grep -qx 0 || fail "a range not of origin pytest"

# without memtrace: the plugin by -p, nothing checked, said once
mkdir lib && cp "$ROOT/python/memtrace.py" "$ROOT/python/memtrace_pytest.py" lib/
PYTHONPATH=$T/lib sim "$PY" -m pytest -p no:cacheprovider -p memtrace_pytest -v test_gpu.py >plain 2>err
expect_eq "$?" "1" "pytest's exit status without memtrace (one test fails)"
expect_eq "$(grep -c ' PASSED' plain) $(grep -c ' FAILED' plain)" "6 1" "outcomes without memtrace"
grep -q '^not recorded: this process does not run under memtrace' plain || fail "the plugin's line without memtrace"
exit 0
