#!/bin/sh
# A plugin linked with -lcuda and loaded with dlopen(RTLD_DEEPBIND) binds
# cuMemAlloc_v2 / cuMemFree_v2 to libcuda itself, not to the preloaded
# recorder. memtrace points the plugin's GOT entries at its wrappers (at the
# program's dlsym of the plugin's entry point): its 2 allocations (4 and
# 12 MiB) and 1 free are traced, lazily bound (RTLD_LAZY) or bound at load
# (RTLD_NOW: then a NOTE names the module). Before: nothing traced.
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
$CC -I"$ROOT/include" -I"${CUDA_HOME:-/usr/local/cuda}/include" -fPIC -shared -g \
	"$ROOT/tests/clients/so/deepbind-plugin.c" -o "$T/libdeepbind-plugin.so" -L"$B/simcuda/driver" -lcuda ||
	fail "cannot build libdeepbind-plugin.so"
$CC -g "$ROOT/tests/clients/so/deepbind-main.c" -o "$T/deepbind-main" -ldl || fail "cannot build deepbind-main"
# the same plugin, relocated at load (-z now, RELRO GOT): the entries are
# bound to libcuda already and sit on read-only pages
$CC -I"$ROOT/include" -I"${CUDA_HOME:-/usr/local/cuda}/include" -fPIC -shared -g -Wl,-z,now,-z,relro \
	"$ROOT/tests/clients/so/deepbind-plugin.c" -o "$T/libdeepbind-now.so" -L"$B/simcuda/driver" -lcuda ||
	fail "cannot build libdeepbind-now.so"

for mode in lazy now relro; do
	rm -f "$T"/trace*.bin "$T/calls.log"
	case $mode in
	relro) plugin=$T/libdeepbind-now.so arg=now ;;
	*) plugin=$T/libdeepbind-plugin.so arg=$mode ;;
	esac
	traced "$T/deepbind-main" "$plugin" "$arg" >"$T/out" 2>"$T/err" || fail "$mode: deepbind-main failed: $(cat "$T/err")"
	expect_eq "$(grep -c '^alloc ' "$T/calls.log")" 2 "$mode: the driver's allocations"
	expect_eq "$(grep -c '^free ' "$T/calls.log")" 1 "$mode: the driver's frees"
	[ -f "$T/trace.bin" ] || fail "$mode: no trace: $(cat "$T/err")"
	same_events "$T/trace.bin" "$T/calls.log"
	expect_eq "$(dump_events "$T/trace.bin" | tr '\n' ';')" \
		"alloc device 0 0x500000000000 4194304 0;alloc device 0 0x500000400000 12582912 0;free 0x500000000000 0;" \
		"$mode: the plugin's events"
	notes=$("$MEMTRACE" dump "$T/trace.bin" | grep '^note ' | sed 's/^note time=[^ ]* tid=[0-9]* //')
	if [ "$mode" = lazy ]; then
		expect_eq "$notes" "" "lazy: no note (nothing was bound to libcuda yet)"
	else
		expect_eq "$notes" "text=\"deepbind module=$plugin imports=2: bound to libcuda directly, redirected to memtrace\"" \
			"$mode: the note naming the module"
	fi
	grep -q warning "$T/err" && fail "$mode: a warning: $(cat "$T/err")"
	"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "$mode: report failed"
	expect_eq "$(grep -m1 '"peak_reserved_bytes"' "$T/json" | sed 's/.*: //; s/,//')" 16777216 "$mode: peak 4 + 12 MiB"
	# the report shows the recorder's note, in text and JSON alike
	"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "$mode: text report failed"
	shown=$(grep '^note: pid [0-9]*, from the recorder: ' "$T/text" | sed 's/^note: pid [0-9]*, from the recorder: //')
	listed=$(python3 -c 'import json,sys; print("\n".join(n for p in json.load(open(sys.argv[1]))["processes"] for n in p["recorder_notes"]))' "$T/json")
	if [ "$mode" = lazy ]; then
		expect_eq "$shown|$listed" "|" "lazy: no note in the report"
	else
		expect_eq "$shown" "deepbind module=$plugin imports=2: bound to libcuda directly, redirected to memtrace" \
			"$mode: the text report's note"
		expect_eq "$listed" "$shown" "$mode: the JSON's note is the text's"
	fi
done
exit 0
