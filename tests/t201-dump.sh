#!/bin/sh
# t201-dump: `memtrace dump` of the reader unit test's sample trace (every
# record type, two threads, a timebase, an unwritten and a damaged slab, the
# exit record of exit(3), format 1.1), line for line; then the same trace
# with a torn record and cut short, which load with one warning each; the
# framework records' sample (format 1.2), line for line.
. "$(dirname "$0")/lib.sh"

GEN=$B/tests/unit/test-analyze-reader
[ -x "$GEN" ] || skip "no $GEN (make build/tests/unit/test-analyze-reader)"
cd "$T" || exit 1

"$GEN" --write-sample sample.bin || fail "cannot write the sample trace"
"$MEMTRACE" dump sample.bin >out 2>err || fail "dump exited $?"
[ -s err ] && fail "dump of a good trace warned: $(cat err)"
cat >expected <<'END'
# trace 'sample.bin': format 1.1, pid 4242, slab 4096, 16 records
process pid=4242 ppid=1 rank=3 local_rank=-1 world_size=8 host="node1" exe="/bin/x" cmdline="a" "b c"
driver version=13000
module time=+17 start=0x7f0000001000 end=0x7f0000009000 base=0x7f0000000000 build_id=abcd path="/lib/libcuda.so.1"
stack id=1 depth=2 0x401234 0x401300
alloc time=+60 tid=100 dev=0 api=cudaMalloc kind=device addr=0x7f1000000000 bytes=1048576 result=0(runtime) stack=1
timebase time=+5000000000
free time=+5000000005 tid=100 dev=-1 api=cuMemFree_v2 kind=device addr=0x7f1000000000 bytes=0 result=0 stack=0
alloc time=+101 tid=200 dev=1 api=cuMemAllocAsync kind=async addr=0x7f2000000000 bytes=4096 result=0 stack=0 stream=0x5000 pool=0x6000
pool time=+102 tid=200 dev=1 api=cuMemAllocAsync pool=0x6000 reserved=2097152 used=4096
meminfo time=+103 tid=200 dev=1 free=1000 total=2000
record type=99 size=24
record type=100 size=32
note time=+104 tid=200 text="hello"
note time=+104 tid=200 text="a\"b\\c\td\ne\x01f\xffgéh\xe2\x82"
alloc time=+9000000000 tid=100 dev=0 api=cuArrayCreate_v2 kind=array,estimated addr=0x10 bytes=64 result=0 stack=0
exit time=+9000000007 tid=100 how=exit status=3
END
diff -u expected out || fail "dump of the sample trace differs"

"$GEN" --write-sample torn.bin torn || fail "cannot write the torn trace"
"$MEMTRACE" dump torn.bin >out 2>err || fail "dump of a torn trace exited $?"
expect_eq "$(cat err)" "memtrace: warning: 'torn.bin': 1 torn record skipped (the process was killed while writing)" "torn warning"
sed 1s/sample/torn/ expected | diff -u - out || fail "dump of the torn trace differs"

# cut 36 bytes into slab 3, inside its first record: that one and the exit
# record after it are lost
head -c $((4096 + 3 * 4096 + 36)) sample.bin >cut.bin
"$MEMTRACE" dump cut.bin >out 2>err || fail "dump of a cut trace exited $?"
expect_eq "$(cat err)" "memtrace: warning: 'cut.bin': truncated: the last slab has 36 of 4096 bytes; loaded the records before the cut" "cut warning"
sed -e '1s/sample.bin.*/cut.bin'"'"': format 1.1, pid 4242, slab 4096, 14 records/' -e '$d' expected | sed '$d' | diff -u - out ||
	fail "dump of the cut trace differs"

# the framework records of format 1.2: two stacks and a note in the slab of
# thread 7, five events in a slab of their own
"$GEN" --write-sample fw.bin fw || fail "cannot write the framework sample"
"$MEMTRACE" dump fw.bin >out 2>err || fail "dump of the framework sample exited $?"
[ -s err ] && fail "dump of the framework sample warned: $(cat err)"
cat >expected <<'END'
# trace 'fw.bin': format 1.2, pid 4242, slab 4096, 10 records
process pid=4242 ppid=1 rank=3 local_rank=-1 world_size=8 host="node1" exe="/bin/x" cmdline="a" "b c"
alloc time=+100 tid=7 dev=0 api=cudaMalloc kind=device addr=0x7f0000000000 bytes=2097152 result=0(runtime) stack=0
fw_stack id=2 frames="train.py:42 step < /lib/torch/nn.py:7 forward"
fw_stack id=1 frames="/lib/torch/nn.py:7 forward"
fw_info time=+120 text="framework=torch\nversion=2.11.0\n"
fw_event time=+50 dev=0 action=segment_alloc addr=0x7f0000000000 size=2097152 stream=0x0 x=0 stack=1
fw_event time=+60 dev=0 action=alloc addr=0x7f0000000000 size=512 stream=0x0 x=0 stack=2
fw_event time=+150 dev=0 action=free_requested addr=0x7f0000000000 size=512 stream=0x0 x=0 stack=2
fw_event time=+170 dev=0 action=free_completed addr=0x7f0000000000 size=512 stream=0x0 x=0 stack=2
fw_event time=+200 dev=0 action=oom addr=0x0 size=1099511627776 stream=0x1234 x=4096 stack=0
END
diff -u expected out || fail "dump of the framework sample differs"

# a corrupt record: one line naming it, exit 1
cp sample.bin bad.bin
printf '\377' | dd of=bad.bin bs=1 seek=$((4096 + 16 + 1)) conv=notrunc 2>/dev/null
"$MEMTRACE" dump bad.bin >out 2>err
expect_eq "$?" 1 "dump of a corrupt trace: exit status"
expect_eq "$(cat err)" "memtrace: 'bad.bin': corrupt process record at offset 0x1010: short size encoding" "corrupt record"
exit 0
