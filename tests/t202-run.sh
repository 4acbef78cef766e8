#!/bin/sh
# t202-run: what `memtrace run` does around the library: exit status
# pass-through (128+N for a signal, 127 for a missing command), LD_PRELOAD
# prepended, the MEMTRACE_* contract of docs/environment.md, stale output
# handling, and the closing list of this run's traces (--no-summary) or the
# summary's last line (t203 checks its figures). The traced command
# writes its own traces here (the reader test's sample, with the run id), so
# none of this needs the recorder; without build/libmemtrace.so, a copy of
# memtrace runs beside an empty stand-in library.
. "$(dirname "$0")/lib.sh"

GEN=$B/tests/unit/test-analyze-reader
[ -x "$GEN" ] || skip "no $GEN (make build/tests/unit/test-analyze-reader)"
# inside `run`, the generator runs without the recorder: it needs none, and
# with make ASAN=1 it is built with ASan, whose runtime a preloaded library
# must not precede
RGEN="env -u LD_PRELOAD $GEN"
if [ -f "$B/libmemtrace.so" ]; then
	LIB=$(cd "$B" && pwd -P)/libmemtrace.so
else
	mkdir "$T/bin" && cp "$MEMTRACE" "$T/bin/memtrace" || fail "cannot copy memtrace"
	echo 'int memtrace_stand_in;' | ${CC:-cc} -shared -fPIC -x c - -o "$T/bin/libmemtrace.so" ||
		skip "cannot build a stand-in libmemtrace.so"
	MEMTRACE=$T/bin/memtrace
	LIB=$(cd "$T/bin" && pwd -P)/libmemtrace.so
fi
mkdir "$T/work" && cd "$T/work" || exit 1
W=$(pwd -P)
NONE="memtrace: no CUDA memory calls were traced; no trace written"

# mt ARGS...: runs memtrace with stdout in $T/out, stderr in $T/err, status in $rc.
mt() { "$MEMTRACE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
expect() { # RC STDERR WHAT
	expect_eq "$rc" "$1" "$3: exit status"
	expect_eq "$(cat "$T/err")" "$2" "$3: stderr"
}

mt run -- sh -c 'exit 3'
expect 3 "$NONE" "exit 3"
mt run true
expect 0 "$NONE" "true"
mt run -- sh -c 'kill -TERM $$'
expect 143 "$NONE" "killed by SIGTERM"
mt run -- sh -c 'kill -KILL $$'
expect 137 "$NONE" "killed by SIGKILL"
mt run -- ./no-such-command
expect 127 "memtrace: cannot run './no-such-command': No such file or directory" "missing command"
: >not-executable
mt run ./not-executable
expect 126 "memtrace: cannot run './not-executable': Permission denied" "not executable"
mt run
expect 2 "memtrace: no command given (try 'memtrace run --help')" "no command"
mt run --depth 257 true
expect 2 "memtrace: bad --depth '257': expected a number from 0 to 256 (try 'memtrace run --help')" "--depth 257"
mt run --depth x true
expect 2 "memtrace: bad --depth 'x': expected a number from 0 to 256 (try 'memtrace run --help')" "--depth x"
mt run -o
expect 2 "memtrace: option '-o' needs a value (try 'memtrace run --help')" "-o without a value"

# LD_PRELOAD: the library first, an existing value kept
mt run -- sh -c 'echo "$LD_PRELOAD"'
expect_eq "$(cat "$T/out")" "$LIB" "LD_PRELOAD"
LD_PRELOAD=libm.so.6 "$MEMTRACE" run -- sh -c 'echo "$LD_PRELOAD"' >"$T/out" 2>/dev/null
expect_eq "$(cat "$T/out")" "$LIB:libm.so.6" "LD_PRELOAD prepended"

# the MEMTRACE_* variables
mt run -- sh -c 'echo "$MEMTRACE_ROOT_PID $$|$MEMTRACE_OUTPUT|$MEMTRACE_DEPTH|$MEMTRACE_FOLLOW"'
pids=$(cut -d'|' -f1 "$T/out")
expect_eq "${pids% *}" "${pids#* }" "MEMTRACE_ROOT_PID is the command's pid"
expect_eq "$(cut -d'|' -f2- "$T/out")" "$W/trace.bin|64|1" "default variables"
mt run -o sub/t.bin true
expect 2 "memtrace: cannot write to '$W/sub': No such file or directory" "missing output directory"
mkdir sub
mt run --depth 0 --no-follow -o sub/../t.bin -- sh -c 'echo "$MEMTRACE_OUTPUT|$MEMTRACE_DEPTH|$MEMTRACE_FOLLOW"'
expect_eq "$(cat "$T/out")" "$W/sub/../t.bin|0|0" "variables from options"
mt run --depth=8 --output=sub/t.bin -- sh -c 'echo "$MEMTRACE_OUTPUT|$MEMTRACE_DEPTH"'
expect_eq "$(cat "$T/out")" "$W/sub/t.bin|8" "--output= and --depth="
mt run -- sh -c 'echo "$MEMTRACE_RUN_ID"'
id1=$(cat "$T/out")
mt run -- sh -c 'echo "$MEMTRACE_RUN_ID"'
case "$id1" in ''|0|*[!0-9]*) fail "MEMTRACE_RUN_ID '$id1' is not a non-zero number" ;; esac
[ "$id1" != "$(cat "$T/out")" ] || fail "two runs got the same MEMTRACE_RUN_ID"

# the list of traces (--no-summary): this run's only, the output first
"$GEN" --write-sample sub/t.5.bin run_id=1 pid=5 || fail "cannot write a trace"
mt run --no-summary -o sub/t.bin -- sh -c '
	'"$RGEN"' --write-sample "$MEMTRACE_OUTPUT" run_id=$MEMTRACE_RUN_ID &&
	'"$RGEN"' --write-sample sub/t.77.bin run_id=$MEMTRACE_RUN_ID pid=77 torn &&
	'"$RGEN"' --write-sample sub/t.6.bin run_id=$MEMTRACE_RUN_ID pid=6 &&
	exit 4'
expect 4 "memtrace: warning: 'sub/t.77.bin': 1 torn record skipped (the process was killed while writing)
memtrace: wrote sub/t.bin (pid 4242, 4 events)
memtrace: wrote sub/t.6.bin (pid 6, 4 events)
memtrace: wrote sub/t.77.bin (pid 77, 4 events)" "list of traces"
# the summary instead (its figures: t203): the same traces, and how to report on them
mt run -o sub/t.bin -- sh -c '
	'"$RGEN"' --write-sample "$MEMTRACE_OUTPUT" run_id=$MEMTRACE_RUN_ID &&
	'"$RGEN"' --write-sample sub/t.6.bin run_id=$MEMTRACE_RUN_ID pid=6 &&
	'"$RGEN"' --write-sample sub/t.66.bin run_id=$MEMTRACE_RUN_ID pid=6 &&
	exit 4'
expect_eq "$rc" 4 "summary: exit status"
expect_eq "$(grep -c '^memtrace: device [01]: peak ' "$T/err")" 2 "summary: device lines"
expect_eq "$(tail -n 1 "$T/err")" \
	"memtrace: wrote 3 traces (2 processes); next: memtrace report sub/t.bin sub/t.6.bin sub/t.66.bin" \
	"summary: traces"
expect_eq "$(wc -l <"$T/err")" 3 "summary: lines"
[ -s "$T/out" ] && fail "summary: something on stdout"

# a stale trace at the output is replaced; anything else is left alone
mt run -o sub/t.bin -- sh -c 'test ! -e "$MEMTRACE_OUTPUT"'
expect 0 "$NONE" "stale trace removed"
echo precious >keep.bin
mt run -o keep.bin true
expect 2 "memtrace: 'keep.bin' exists and is not a memtrace trace; not overwriting it" "other file at the output"
expect_eq "$(cat keep.bin)" precious "other file kept"
"$GEN" --write-sample target.bin || fail "cannot write a trace"
ln -s target.bin link.bin
mt run -o link.bin true
expect 2 "memtrace: 'link.bin' exists and is not a memtrace trace; not overwriting it" "symlink at the output"
[ -f target.bin ] && [ -L link.bin ] || fail "symlink or its target removed"
mt run -o sub true
expect 2 "memtrace: cannot write 'sub': Is a directory" "directory at the output"
exit 0
