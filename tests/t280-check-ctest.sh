#!/bin/sh
# t280-check-ctest: the README's ctest recipe, as written there, on the leak
# sample with Debian's cmake: the test passes when .memtrace.ini suppresses
# keep_loss, and fails with the broken rule's line in ctest's output when it
# does not.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v cmake >/dev/null 2>&1 && command -v ctest >/dev/null 2>&1 || skip "no cmake/ctest (scripts/install-deps.sh)"

mkdir "$T/proj"
# the add_test block of the README, with the sample for the program
sed -n '/^add_test(NAME train_gpu_memory/,/)$/p' "$ROOT/README.md" |
	sed "s|\\\$<TARGET_FILE:train>|$SAMPLES/leak|; s|COMMAND memtrace|COMMAND $MEMTRACE|" >"$T/add_test.cmake"
grep -q "COMMAND $MEMTRACE run" "$T/add_test.cmake" || fail "no add_test recipe in README.md"
{ echo 'cmake_minimum_required(VERSION 3.16)'; echo 'project(demo NONE)'; echo 'enable_testing()'
  cat "$T/add_test.cmake"; } >"$T/proj/CMakeLists.txt"
printf '[rules]\npeak <= 112MiB\nlive_at_exit <= 0\nfailures == 0\n[suppressions]\nleak:keep_loss\n' \
	>"$T/proj/.memtrace.ini"
cmake -S "$T/proj" -B "$T/proj/build" >"$T/cmake.out" 2>&1 || fail "cmake: $(tail -5 "$T/cmake.out")"
export LD_LIBRARY_PATH=$SIM
(cd "$T/proj" && ctest --test-dir build --output-on-failure) >"$T/ctest.out" 2>&1 ||
	fail "ctest failed with the suppression: $(tail -20 "$T/ctest.out")"
grep -q '100% tests passed, 0 tests failed out of 1' "$T/ctest.out" || fail "ctest: $(cat "$T/ctest.out")"

sed -i 's/^leak:keep_loss/leak:nothing_kept/' "$T/proj/.memtrace.ini"
(cd "$T/proj" && ctest --test-dir build --output-on-failure) >"$T/ctest.out" 2>&1 &&
	fail "ctest passed without the suppression"
grep -q '0% tests passed, 1 tests failed out of 1' "$T/ctest.out" || fail "ctest: $(cat "$T/ctest.out")"
grep -q '^FAIL live_at_exit <= 0: live at exit 20.0 MiB (20971520 B) on device 0; top site keep_loss (leak.c:54) < main (leak.c:76) (20.0 MiB)$' \
	"$T/ctest.out" || fail "ctest: no line of the broken rule: $(cat "$T/ctest.out")"
exit 0
