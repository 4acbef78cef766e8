#!/bin/sh
# t200-cli: memtrace's command line: --help, --version, help CMD, usage
# errors (one line, exit 2), and `memtrace dump` on files that are not
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
expect_eq "$(head -n 1 "$T/out")" "usage: memtrace run [-o FILE] [--depth N] [--no-follow] [--] CMD [ARGS...]" "help run"
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
expect 1 "memtrace: 'newer.bin': trace format 7 is newer than this memtrace (reads up to 1)" "dump of a newer format"
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
exit 0
