#!/bin/sh
# Calls made in another library's constructor (which runs before
# libmemtrace's) and destructor (after libmemtrace's): the recorder starts on
# the first hooked call and records until the process ends. ctor-lib.c:
# 5 allocations (16+16 MiB in the constructor, 24, 8, 8 MiB from main),
# 3 frees (a constructor block and the 24 MiB from main, an 8 MiB block in
# the destructor). Peak 56 MiB; live at exit 16 + 8 MiB; no unknown free.
# Before: 3 allocations, 2 frees, peak 24 MiB, one unknown free.
. "$(dirname "$0")/lib.sh"

jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }

CC=${CC:-cc}
$CC -I"$ROOT/include" -I"${CUDA_HOME:-/usr/local/cuda}/include" -fPIC -shared -g \
	"$ROOT/tests/clients/so/ctor-lib.c" -o "$T/libctor-lib.so" -L"$B/simcuda/driver" -lcuda ||
	fail "cannot build libctor-lib.so"
$CC -g "$ROOT/tests/clients/so/ctor-main.c" -o "$T/ctor-main" -L"$T" -lctor-lib -Wl,-rpath,"$T" \
	-Wl,-rpath-link,"$B/simcuda/driver" || fail "cannot build ctor-main"

traced "$T/ctor-main" >"$T/out" 2>"$T/err" || fail "ctor-main failed: $(cat "$T/err")"
expect_eq "$(grep -c '^alloc ' "$T/calls.log")" 5 "the driver's allocations"
expect_eq "$(grep -c '^free ' "$T/calls.log")" 3 "the driver's frees"
same_events "$T/trace.bin" "$T/calls.log"
expect_eq "$(dump_events "$T/trace.bin" | grep -c '^alloc ')" 5 "allocations recorded"
expect_eq "$(dump_events "$T/trace.bin" | grep -c '^free ')" 3 "frees recorded"
# the destructor's free comes before the exit record, which is the last one
expect_eq "$("$MEMTRACE" dump "$T/trace.bin" | grep -E '^(alloc|free|exit) ' | tail -n 2 | cut -d' ' -f1 | tr '\n' ' ')" \
	"free exit " "the destructor's free, then the exit record"

"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "report failed"
expect_eq "$(jnum events "$T/json")" 8 "events in the report"
expect_eq "$(jnum unknown_frees "$T/json")" 0 "unknown frees"
expect_eq "$(jnum peak_reserved_bytes "$T/json")" 58720256 "peak: 16 + 16 + 24 MiB"
expect_eq "$(jnum left_at_exit_bytes "$T/json")" 25165824 "left at exit: 16 + 8 MiB"
sed -n '/^  "leaks"/,/^  \]/p' "$T/json" >"$T/leaks"
expect_eq "$(grep '"bytes"' "$T/leaks" | sed 's/.*: //; s/,//' | sort -n | tr '\n' ' ')" "8388608 16777216 " \
	"leaks: b (constructor) and e, not the block freed in the destructor"
exit 0
