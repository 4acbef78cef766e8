#!/bin/sh
# t200-cli: memtrace's command line: --help, --version, help CMD, usage
# errors (one line, exit 2), every option form (--opt=V, --opt V, -oV,
# -o V, --) in every command, and `memtrace dump` on files that are not
# traces (one exact error line, exit 1; missing file exit 2), never a hang.
. "$(dirname "$0")/lib.sh"

# mt ARGS...: runs memtrace with stdout in $T/out, stderr in $T/err, status in $rc.
mt() { "$MEMTRACE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# expect RC STDERR WHAT: the status and the whole of stderr.
expect() {
	expect_eq "$rc" "$1" "$3: exit status"
	expect_eq "$(cat "$T/err")" "$2" "$3: stderr"
}

mt --version
expect 0 "" "--version"
expect_eq "$(cat "$T/out")" "memtrace 0.1.0" "--version"

mt --help
expect 0 "" "--help"
grep -q '^  run  ' "$T/out" || fail "--help lists no run"
grep -q '^  dump ' "$T/out" || fail "--help lists no dump"
grep -q '2 usage error' "$T/out" || fail "--help does not document the exit status"
mt help
expect 0 "" "help"

mt help run
expect 0 "" "help run"
expect_eq "$(head -n 1 "$T/out")" "usage: memtrace run [-o FILE] [--depth N] [--no-follow] [--no-summary] [--] CMD [ARGS...]" "help run"
mt run --help
expect 0 "" "run --help"
mt help dump
expect 0 "" "help dump"
expect_eq "$(head -n 1 "$T/out")" "usage: memtrace dump [--resolve-python] FILE" "help dump"

mt
expect_eq "$rc" 2 "no arguments: exit status"
mt --x
expect 2 "memtrace: unknown option '--x' (try 'memtrace --help')" "unknown option"
[ -s "$T/out" ] && fail "unknown option printed on stdout"
mt frobnicate
expect 2 "memtrace: unknown command 'frobnicate' (try 'memtrace --help')" "unknown command"
mt help frobnicate
expect 2 "memtrace: unknown command 'frobnicate' (try 'memtrace --help')" "help of an unknown command"
mt dump --x
expect 2 "memtrace: unknown option '--x' (try 'memtrace dump --help')" "dump --x"
mt dump
expect 2 "memtrace: no trace FILE given (try 'memtrace dump --help')" "dump without a file"
mt dump a b
expect 2 "memtrace: dump takes one FILE (try 'memtrace dump --help')" "dump a b"
mt run --x
expect 2 "memtrace: unknown option '--x' (try 'memtrace run --help')" "run --x"

cd "$T" || exit 1
mt dump missing.bin
expect 2 "memtrace: cannot open 'missing.bin': No such file or directory" "dump of a missing file"
mkdir dir
mt dump dir
expect 1 "memtrace: cannot read 'dir': Is a directory" "dump of a directory"
: >empty.bin
mt dump empty.bin
expect 1 "memtrace: 'empty.bin': empty file, not a memtrace trace" "dump of an empty file"
printf 'MEMTRAC' >short.bin
mt dump short.bin
expect 1 "memtrace: 'short.bin': not a memtrace trace (bad magic)" "dump of a 7-byte file"
{ printf 'NOTATRACE'; head -c 200 /dev/zero; } >magic.bin
mt dump magic.bin
expect 1 "memtrace: 'magic.bin': not a memtrace trace (bad magic)" "dump of a wrong-magic file"
{ printf 'MEMTRACE\001\000\000\000\100\000\000\000'; head -c 20 /dev/zero; } >header.bin
mt dump header.bin
expect 1 "memtrace: 'header.bin': truncated trace header (36 of 64 bytes)" "dump of a cut header"
# version 7
{ printf 'MEMTRACE\007\000\000\000\100\000\000\000\000\000\001\000'; head -c 48 /dev/zero; } >newer.bin
mt dump newer.bin
expect 1 "memtrace: 'newer.bin': trace format 7 is newer than this memtrace (reads up to 2)" "dump of a newer format"
{ printf 'MEMTRACE\001\000\000\000\000\020\000\000\000\060\000\000'; head -c 48 /dev/zero; } >slab.bin
mt dump slab.bin
expect 1 "memtrace: 'slab.bin': bad slab size 12288 (a power of two from 4096 to 16777216 expected)" "dump of a bad slab size"
# header_size 64: the first slab would not start on a page
{ printf 'MEMTRACE\001\000\000\000\100\000\000\000\000\000\001\000'; head -c 48 /dev/zero; } >hsize.bin
mt dump hsize.bin
expect 1 "memtrace: 'hsize.bin': bad header size 64 (a multiple of 4096 up to 16777216 expected)" "dump of a bad header size"
mkfifo fifo
timeout 10 "$MEMTRACE" dump fifo >"$T/out" 2>"$T/err"; rc=$?
expect 1 "memtrace: cannot read 'fifo': not a regular file" "dump of a fifo"

# --- one option parser: every form, in every command ----------------------
gunzip -c "$ROOT/tests/data/report-peak.bin.gz" >t.bin || fail "cannot unpack report-peak.bin"
mt report --no-db t.bin
expect 0 "" "report --no-db"
cp "$T/out" plain.txt
for form in "--db=a.db" "--db a.db" "t.bin --db a.db" "--sysroot=/ --debug-dir=/nonexistent" \
	    "--sysroot / --debug-dir /nonexistent --no-db" "--no-db -- t.bin"; do
	rm -f a.db t.bin.db
	# shellcheck disable=SC2086
	case "$form" in *t.bin*) mt report $form ;; *) mt report $form t.bin ;; esac
	expect 0 "" "report $form"
	expect_eq "$(cat "$T/out")" "$(cat plain.txt)" "report $form: the report"
	case "$form" in
	--db*|*--db\ a.db) [ -s a.db ] && [ ! -e t.bin.db ] || fail "report $form: not written to a.db" ;;
	*--no-db*) [ ! -e a.db ] && [ ! -e t.bin.db ] || fail "report $form: wrote a database" ;;
	*) [ -s t.bin.db ] || fail "report $form: no t.bin.db" ;;
	esac
done
mt report --json=1 t.bin
expect 2 "memtrace: option '--json' takes no value (try 'memtrace report --help')" "report --json=1"
mt report t.bin --db
expect 2 "memtrace: option '--db' needs a value (try 'memtrace report --help')" "report --db at the end"
mt report --sysroot
expect 2 "memtrace: option '--sysroot' needs a value (try 'memtrace report --help')" "report --sysroot"
mt report --frob t.bin
expect 2 "memtrace: unknown option '--frob' (try 'memtrace report --help')" "report --frob"
mt report --d=x t.bin
expect 2 "memtrace: ambiguous option '--d' (try 'memtrace report --help')" "report --d=x"
mt report -x t.bin
expect 2 "memtrace: unknown option '-x' (try 'memtrace report --help')" "report -x"
mt report --no-db -- --frob
expect 2 "memtrace: cannot open '--frob': No such file or directory" "report -- --frob: a file"

command -v gnuplot >/dev/null 2>&1 || fail "no gnuplot (scripts/install-deps.sh installs it)"
for form in "-oP1" "-o P2" "--output=P3" "--output P4" "t.bin -oP5" "--format=svg -oP6" "-oP7 -- t.bin"; do
	d=$(echo "$form" | sed 's/.*P\([0-9]\).*/P\1/')
	# shellcheck disable=SC2086
	case "$form" in *t.bin*) mt plot $form ;; *) mt plot $form t.bin ;; esac
	expect 0 "" "plot $form"
	expect_eq "$(cat "$T/out")" "wrote plots for 1 device to $d/" "plot $form"
	[ -s "$d/timeline-dev0.tsv" ] || fail "plot $form: no $d/timeline-dev0.tsv"
done
[ -s P6/timeline-dev0.svg ] || fail "plot --format=svg: no SVG"
[ -e t.bin.plots ] && fail "a plot went to t.bin.plots"
mt plot t.bin -o
expect 2 "memtrace: option '-o' needs a value (try 'memtrace plot --help')" "plot -o at the end"
mt plot --output
expect 2 "memtrace: option '--output' needs a value (try 'memtrace plot --help')" "plot --output"
mt plot -q t.bin
expect 2 "memtrace: unknown option '-q' (try 'memtrace plot --help')" "plot -q"
mt plot --outptu=x t.bin
expect 2 "memtrace: unknown option '--outptu' (try 'memtrace plot --help')" "plot --outptu=x"

mt dump --resolve-python -- t.bin
expect 0 "" "dump --resolve-python -- t.bin"
mt dump t.bin --resolve-python=1
expect 2 "memtrace: option '--resolve-python' takes no value (try 'memtrace dump --help')" "dump --resolve-python=1"
mt dump -- -t.bin
expect 2 "memtrace: cannot open '-t.bin': No such file or directory" "dump -- -t.bin: a file"

# run: its options end at CMD; what follows are CMD's own
[ -f "$B/libmemtrace.so" ] || fail "no $B/libmemtrace.so (make tests-build)"
show='echo "$MEMTRACE_OUTPUT|$MEMTRACE_DEPTH|$MEMTRACE_FOLLOW|$*"'
W=$(pwd -P)
for form in "--depth=5 -oR1.bin" "--depth 5 -o R1.bin" "--dep=5 --output=R1.bin" "--depth=5 --output R1.bin --"; do
	# shellcheck disable=SC2086
	mt run $form sh -c "$show" sh -o x --depth=9
	expect 0 "memtrace: no CUDA memory calls were traced; no trace written" "run $form"
	expect_eq "$(cat "$T/out")" "$W/R1.bin|5|1|-o x --depth=9" "run $form"
done
mt run --no-follow -- sh -c "$show" sh --no-follow
expect_eq "$(cat "$T/out")" "$W/trace.bin|64|0|--no-follow" "run --no-follow -- CMD --no-follow"
mt run --depth
expect 2 "memtrace: option '--depth' needs a value (try 'memtrace run --help')" "run --depth"
mt run -x true
expect 2 "memtrace: unknown option '-x' (try 'memtrace run --help')" "run -x"
mt run --no-follow=1 true
expect 2 "memtrace: option '--no-follow' takes no value (try 'memtrace run --help')" "run --no-follow=1"
mt run -o "" true
expect 2 "memtrace: empty output file name (try 'memtrace run --help')" "run -o ''"
mt run --no true
expect 2 "memtrace: ambiguous option '--no' (try 'memtrace run --help')" "run --no"
mt run --no-s -- sh -c 'echo "$*"' sh --no-summary
expect 0 "memtrace: no CUDA memory calls were traced; no trace written" "run --no-s"
expect_eq "$(cat "$T/out")" "--no-summary" "run --no-s: CMD's own --no-summary"
exit 0
