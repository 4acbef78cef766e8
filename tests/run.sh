#!/bin/sh
# tests/run.sh - runs every C unit test (build/tests/unit/test-*) and every
# end-to-end case (tests/tNNN-*.sh), then prints one closing line
# "N passed, N failed" (", N skipped" when some were) and exits non-zero if
# anything failed. `make test` builds first and then calls this.
#   tests/run.sh [PATTERN]   only the cases whose file name contains PATTERN
cd "$(dirname "$0")/.." || exit 1
pattern=${1:-}
passed=0 failed=0 skipped=0 failures=""
log=build/tests/log
mkdir -p "$log"

run_one() { # name, command...
	name=$1; shift
	out="$log/$(basename "$name").out"
	"$@" >"$out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		passed=$((passed + 1)); echo "ok      $name"
	elif [ $rc = 77 ]; then
		skipped=$((skipped + 1)); echo "skip    $name: $(grep -m1 '^SKIP' "$out" | cut -c7-)"
	else
		failed=$((failed + 1)); failures="$failures $name"
		echo "FAILED  $name (exit $rc)"; sed 's/^/        /' "$out" | tail -n 25
	fi
}

for t in build/tests/unit/test-*; do
	[ -x "$t" ] || continue
	case "$t" in *"$pattern"*) run_one "$t" "$t" ;; esac
done
for t in tests/t[0-9][0-9][0-9]-*.sh; do
	[ -f "$t" ] || continue
	case "$t" in *"$pattern"*) run_one "$t" sh "$t" ;; esac
done

[ -n "$failures" ] && echo "failed:$failures"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed = 0 ]
