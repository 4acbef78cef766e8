#!/bin/sh
# Bad input to every command that reads a trace (dump, and report and plot
# once they exist): missing files, directories, devices, and a real trace
# truncated, corrupted or of a newer format. Each gives one exact line on
# stderr and the documented status (1 invalid trace, 2 usage error or
# missing file), never a crash; damage a killed process leaves (a torn
# record, a cut file) loads with one warning and status 0. Then bad
# arguments of every subcommand, and the inputs the fuzzer found
# (tests/data/fuzz-*.bin), which must be refused or loaded, not crash.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

# the commands that read traces: report and plot join once they exist
readers=dump
for c in report plot; do
	"$MEMTRACE" "$c" --help >/dev/null 2>&1 && readers="$readers $c"
done

# mt ARGS...: runs memtrace with stdout in out, stderr in err, status in rc.
mt() { "$MEMTRACE" "$@" >out 2>err; rc=$?; }
# refused RC LINE FILE: every reader refuses FILE with exactly LINE
refused() {
	for c in $readers; do
		mt "$c" "$3"
		[ "$rc" -lt 128 ] || fail "$c '$3': killed by signal $((rc - 128))"
		expect_eq "$rc" "$1" "$c '$3': exit status"
		expect_eq "$(cat err)" "$2" "$c '$3': stderr"
	done
}
# loads WARNING FILE: every reader loads FILE with exactly that warning
loads() {
	for c in $readers; do
		mt "$c" "$2"
		expect_eq "$rc" 0 "$c '$2': exit status"
		expect_eq "$(cat err)" "$1" "$c '$2': stderr"
	done
}
# poke FILE OFFSET BYTES: overwrite bytes (printf escapes) in place
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }

# a real trace: slab 0 at 65536, its process record at 0x10010 (its size,
# which depends on the host name and the checkout's path, at +4;
# hostname_len at +28), the header's version at 8, header_size at 12,
# slab_size at 16
sim "$MEMTRACE" run --depth 2 -o good.bin -- "$CLIENTS/rt-basic" >/dev/null 2>&1 || fail "cannot record a trace"
P=$((65536 + 16))
PSIZE=$(od -An -tu4 -j $((P + 4)) -N 4 good.bin | tr -d ' ')
expect_eq "$(od -An -tu1 -j $P -N 1 good.bin | tr -d ' ')" 1 "the good trace starts with its process record"
loads "" good.bin

refused 2 "memtrace: cannot open 'missing.bin': No such file or directory" missing.bin
refused 2 "memtrace: cannot open 'nodir/x.bin': No such file or directory" nodir/x.bin
refused 2 "memtrace: cannot open 'good.bin/x.bin': Not a directory" good.bin/x.bin
refused 2 "memtrace: cannot open '': No such file or directory" ""
mkdir dir
refused 1 "memtrace: cannot read 'dir': Is a directory" dir
refused 1 "memtrace: cannot read '/dev/null': not a regular file" /dev/null
: >empty.bin
refused 1 "memtrace: 'empty.bin': empty file, not a memtrace trace" empty.bin
head -c 7 good.bin >magic7.bin
refused 1 "memtrace: 'magic7.bin': not a memtrace trace (bad magic)" magic7.bin
cp good.bin magic.bin; poke magic.bin 0 'memtrace'
refused 1 "memtrace: 'magic.bin': not a memtrace trace (bad magic)" magic.bin
head -c 63 good.bin >header.bin
refused 1 "memtrace: 'header.bin': truncated trace header (63 of 64 bytes)" header.bin
cp good.bin newer.bin; poke newer.bin 8 '\003'
refused 1 "memtrace: 'newer.bin': trace format 3 is newer than this memtrace (reads up to 2)" newer.bin
cp good.bin newest.bin; poke newest.bin 8 '\377\377\377\377'
refused 1 "memtrace: 'newest.bin': trace format 4294967295 is newer than this memtrace (reads up to 2)" newest.bin
cp good.bin v0.bin; poke v0.bin 8 '\000'
refused 1 "memtrace: 'v0.bin': bad trace format version 0" v0.bin
cp good.bin hsize.bin; poke hsize.bin 12 '\001\020\000\000'
refused 1 "memtrace: 'hsize.bin': bad header size 4097 (a multiple of 4096 up to 16777216 expected)" hsize.bin
cp good.bin ssize.bin; poke ssize.bin 16 '\000\000\000\002'
refused 1 "memtrace: 'ssize.bin': bad slab size 33554432 (a power of two from 4096 to 16777216 expected)" ssize.bin

# corrupt records
cp good.bin size3.bin; poke size3.bin $((P + 4)) '\003\000\000\000'
refused 1 "memtrace: 'size3.bin': corrupt record at offset 0x10010: bad size 3" size3.bin
cp good.bin past.bin; poke past.bin $((P + 4)) '\000\000\020\000'
refused 1 "memtrace: 'past.bin': corrupt record at offset 0x10010: size 1048576 runs past the slab end" past.bin
cp good.bin strings.bin; poke strings.bin $((P + 28)) '\377\377'
# 40 fixed bytes + hostname 65535 + exe (u16 at +30) + command line (u32 at +32)
need=$((40 + 65535 + $(od -An -tu2 -j $((P + 30)) -N 2 good.bin) + $(od -An -tu4 -j $((P + 32)) -N 4 good.bin)))
refused 1 "memtrace: 'strings.bin': corrupt process record at offset 0x10010: strings need $need bytes, the record has $PSIZE" strings.bin
# (format 1: in format 2 a zero first byte ends the slab's records)
cp good.bin type0.bin; poke type0.bin 8 '\001'; poke type0.bin $P '\000\017'
refused 1 "memtrace: 'type0.bin': corrupt record at offset 0x10010: type 0" type0.bin
cp good.bin short.bin; poke short.bin $P '\001\017'
refused 1 "memtrace: 'short.bin': corrupt process record at offset 0x10010: short size encoding" short.bin
cp good.bin event.bin; poke event.bin $P '\004\000'
refused 1 "memtrace: 'event.bin': corrupt alloc record at offset 0x10010: long size encoding" event.bin

# damage a killed process leaves: loads, with a warning for each damage
cp good.bin torn.bin; poke torn.bin $P '\000'
# (its only slab's first record torn: nothing else is left of it)
loads "memtrace: warning: 'torn.bin': 1 torn record skipped (the process was killed while writing)
memtrace: warning: 'torn.bin': holds no records: cut or never written" torn.bin
head -c $((65536 + 100)) good.bin >cut.bin
# (100 bytes: the process record is cut, so no record is whole)
loads "memtrace: warning: 'cut.bin': truncated: the last slab has 100 of 65536 bytes; loaded the records before the cut
memtrace: warning: 'cut.bin': holds no records: cut or never written" cut.bin
head -c 1000 good.bin >cuthdr.bin
loads "memtrace: warning: 'cuthdr.bin': truncated before the first slab (1000 of 65536 header bytes); holds no records: cut or never written" cuthdr.bin
mt dump cuthdr.bin
expect_eq "$(cat out)" "# trace 'cuthdr.bin': format 2.2, pid $(od -An -tu4 -j 20 -N 4 good.bin | tr -d ' '), slab 65536, 0 records" "dump of a trace cut before its first slab"

# bad arguments, every subcommand: one line, status 2, nothing on stdout
usage() { # LINE ARGS...
	want=$1; shift
	mt "$@"
	expect_eq "$rc" 2 "memtrace $*: exit status"
	expect_eq "$(cat err)" "$want" "memtrace $*: stderr"
	[ -s out ] && fail "memtrace $*: printed on stdout: $(head -n 3 out)"
}
usage "memtrace: help: too many arguments (try 'memtrace --help')" help run dump
usage "memtrace: unknown command 'dump ' (try 'memtrace --help')" "dump "
usage "memtrace: unknown option '-' (try 'memtrace --help')" -
usage "memtrace: unknown option '-x' (try 'memtrace dump --help')" dump -x good.bin
usage "memtrace: dump takes one FILE (try 'memtrace dump --help')" dump good.bin good.bin
usage "memtrace: no trace FILE given (try 'memtrace dump --help')" dump --
usage "memtrace: empty output file name (try 'memtrace run --help')" run -o "" true
usage "memtrace: option '--depth' needs a value (try 'memtrace run --help')" run --depth
usage "memtrace: bad --depth '-1': expected a number from 0 to 256 (try 'memtrace run --help')" run --depth=-1 true
usage "memtrace: bad --depth '99999999999999999999': expected a number from 0 to 256 (try 'memtrace run --help')" run --depth 99999999999999999999 true
usage "memtrace: cannot write 'dir/': not a file name" run -o dir/ true
usage "memtrace: cannot write to '$T/good.bin': Not a directory" run -o good.bin/x.bin true
for c in $readers; do
	[ "$c" = dump ] && continue
	mt "$c" --no-such-option good.bin
	expect_eq "$rc" 2 "$c --no-such-option: exit status"
	expect_eq "$(cat err)" "memtrace: unknown option '--no-such-option' (try 'memtrace $c --help')" "$c --no-such-option: stderr"
	mt "$c"
	expect_eq "$rc" 2 "$c without a trace: exit status"
	expect_eq "$(grep -c . err)" 1 "$c without a trace: stderr lines"
done

# inputs the fuzzer found (tests/data/fuzz-*.bin, named after what broke):
# each is refused with one line or loads, never a crash, and under
# sanitizers (make ASAN=1) nothing is reported
for src in "$ROOT"/tests/data/fuzz-*.bin; do
	[ -f "$src" ] || continue
	f=$(basename "$src")
	cp "$src" "$f"      # report and plot write beside the trace
	for c in $readers; do
		mt "$c" "$f"
		[ "$rc" -le 1 ] || fail "$c $f: exit status $rc: $(head -n 5 err)"
		grep -qE 'runtime error|Sanitizer' err && fail "$c $f: $(grep -m 1 -E 'runtime error|Sanitizer' err)"
		[ "$rc" = 0 ] || expect_eq "$(grep -c . err)" 1 "$c $f: stderr lines"
	done
done
exit 0
