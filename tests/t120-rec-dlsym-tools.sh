#!/bin/sh
# memtrace beside another preload tool that interposes dlsym and forwards
# with dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34") (dlsym-tool.c), in both
# LD_PRELOAD orders and through `memtrace run --preload`: the tool sees
# every look-up of dl-dlsym (8: cuInit, cuDeviceGet,
# cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuMemAlloc_v2, cuMemFree_v2,
# cuNoSuchFunction, and RTLD_NEXT "write", which still finds libc's), and
# memtrace records its 2 allocations and 2 frees. Before: with memtrace
# first the tool saw nothing; with the tool first memtrace recorded nothing.
. "$(dirname "$0")/lib.sh"

${CC:-cc} -fPIC -shared -g "$ROOT/tests/clients/so/dlsym-tool.c" -o "$T/libdlsym-tool.so" -ldl ||
	fail "cannot build libdlsym-tool.so"
PROGRAM_NAMES="cuCtxSetCurrent cuDeviceGet cuDevicePrimaryCtxRetain cuInit cuMemAlloc_v2 cuMemFree_v2 cuNoSuchFunction write"

# check WHAT: the tool's log and the trace of the run just made
check() {
	[ -f "$T/tool.log" ] || fail "$1: the tool saw no look-up"
	for name in $PROGRAM_NAMES; do
		expect_eq "$(grep -cx "$name" "$T/tool.log")" 1 "$1: the tool's look-ups of $name"
	done
	[ -f "$T/trace.bin" ] || fail "$1: no trace"
	same_events "$T/trace.bin" "$T/calls.log"
	expect_eq "$(dump_events "$T/trace.bin" | tr '\n' ';')" \
		"alloc device 0 0x500000000000 2097152 0;alloc device 0 0x500000200000 5242880 0;free 0x500000000000 0;free 0x500000200000 0;" \
		"$1: the events"
	expect_eq "$(cat "$T/out")" "a=0x500000000000 b=0x500000200000" "$1: the program's output"
}

for order in memtrace-first tool-first; do
	rm -f "$T"/trace*.bin "$T/calls.log" "$T/tool.log"
	case $order in
	memtrace-first) pre=$B/libmemtrace.so:$T/libdlsym-tool.so ;;
	tool-first) pre=$T/libdlsym-tool.so:$B/libmemtrace.so ;;
	esac
	DLSYM_TOOL_LOG=$T/tool.log MEMTRACE_OUTPUT=$T/trace.bin LD_PRELOAD=$pre \
		sim "$CLIENTS/dl-dlsym" >"$T/out" 2>"$T/err" || fail "$order: dl-dlsym failed: $(cat "$T/err")"
	check "$order"
done

# memtrace run --preload: memtrace's library first, then the tool
rm -f "$T"/trace*.bin "$T/calls.log" "$T/tool.log"
DLSYM_TOOL_LOG=$T/tool.log sim "$MEMTRACE" run --no-summary --preload "$T/libdlsym-tool.so" -o "$T/trace.bin" -- \
	"$CLIENTS/dl-dlsym" >"$T/out" 2>"$T/err" || fail "run --preload: dl-dlsym failed: $(cat "$T/err")"
check "run --preload"
# the order written in LD_PRELOAD, an earlier LD_PRELOAD kept last
(cd "$T" && LD_PRELOAD=libm.so.6 "$MEMTRACE" run --no-summary --preload ./libdlsym-tool.so --preload libz.so.1 \
	-o "$T/env.bin" -- sh -c 'echo "$LD_PRELOAD"') >"$T/env" 2>"$T/err" || fail "run --preload: sh failed: $(cat "$T/err")"
expect_eq "$(cat "$T/env")" "$(cd "$B" && pwd -P)/libmemtrace.so:$(cd "$T" && pwd -P)/libdlsym-tool.so:libz.so.1:libm.so.6" \
	"run --preload: LD_PRELOAD"
"$MEMTRACE" run --preload "$T/nothing.so" -- true 2>"$T/err"
expect_eq "$?" 2 "run --preload of a missing file: exit status"
expect_eq "$(cat "$T/err")" "memtrace: cannot preload '$T/nothing.so': No such file or directory (try 'memtrace run --help')" \
	"run --preload of a missing file: the message"
exit 0
