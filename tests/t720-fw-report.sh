#!/bin/sh
# t720-fw-report: the framework's allocator (FW events) in the report, with
# figures worked out by hand in tests/clients/dl-fwgen.c, the same in the
# text, the JSON and the database:
#   split  two 20 MiB segments, tensors 8+8+4 MiB in the first, 6 MiB in
#          the second, the middle 8 MiB freed: at exit allocated 18 MiB,
#          cached 22, inactive split 22, largest free block 14 MiB; at the
#          peak of allocated (26) cached 14, inactive split 14, largest 14;
#          at the peak of reserved (40) allocated 20, inactive split 0,
#          largest 20; top tensor site train.py:21 with 16 MiB
#   leak   one 1 MiB tensor kept per step at train.py:33 for 8 steps: a
#          tensor leak candidate (left at exit, growing), 12 MiB of cache
#          at exit listed apart; the activations of train.py:30 are not
#   oom    12 MiB cached in 4 pieces of 3 MiB, a 6 MiB request fails:
#          "fragmentation", device free 2 MiB of 24 (the simulated device
#          less a 2 MiB context), top holder train.py:45 with 8 MiB
# And a trace without FW events has no framework section (no "framework"
# in JSON, empty fw tables).
. "$(dirname "$0")/lib.sh"

GEN=$CLIENTS/dl-fwgen
command -v sqlite3 >/dev/null || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
M=1048576
q() { sqlite3 "$1" "$2"; }
pj() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

gen() {     # gen SCENARIO [ENV...]: trace SCENARIO.bin, text, JSON, database
	s=$1
	shift
	env LD_LIBRARY_PATH=$SIM "$@" "$MEMTRACE" run --no-summary -o "$s.bin" -- "$GEN" "$s" \
		>"$s.out" 2>"$s.err" || fail "$s: run exited $?: $(cat "$s.err")"
	"$MEMTRACE" report "$s.bin" >"$s.txt" 2>"$s.rerr" || fail "$s: report exited $?: $(cat "$s.rerr")"
	"$MEMTRACE" report --json "$s.bin" >"$s.json" 2>"$s.rerr" || fail "$s: report --json exited $?"
}

# line FILE PREFIX: the one line of the text report that starts with PREFIX
line() {
	n=$(grep -c -F -- "$2" "$1")
	[ "$n" = 1 ] || fail "$1: $n lines with '$2'
$(sed -n '/^framework/,$p' "$1" | head -40)"
	grep -F -- "$2" "$1"
}

# --- split: reserved = allocated + cached, and the free space inside
gen split
line split.txt "framework: PyTorch, device 0" >/dev/null
expect_eq "$(line split.txt "  peak allocated ")" \
"  peak allocated 26.0 MiB at $(grep -o '  peak allocated 26.0 MiB at [^:]*' split.txt | sed 's/.* at //'): reserved 40.0 MiB = allocated 26.0 MiB + cached 14.0 MiB (requested 26.0 MiB; inactive split 14.0 MiB, largest free block 14.0 MiB)" \
	"split: text, peak of allocated"
line split.txt "  peak reserved 40.0 MiB at " | grep -q -F ": reserved 40.0 MiB = allocated 20.0 MiB + cached 20.0 MiB (requested 20.0 MiB; inactive split 0 B, largest free block 20.0 MiB)" ||
	fail "split: text, peak of reserved: $(line split.txt "  peak reserved ")"
expect_eq "$(line split.txt "  at exit: reserved")" \
	"  at exit: reserved 40.0 MiB = allocated 18.0 MiB + cached 22.0 MiB (requested 18.0 MiB; inactive split 22.0 MiB, largest free block 14.0 MiB)" \
	"split: text, at exit"
expect_eq "$(line split.txt "  CUDA API: ")" \
	"  CUDA API: peak reserved 40.0 MiB; at the framework's peak of reserved 40.0 MiB, of which 0 B outside the framework's segments (other allocations: NCCL, cuBLAS, other libraries)" \
	"split: text, beside the CUDA level"
expect_eq "$(sed -n '/top tensor sites at the peak of allocated/{n;p;n;p;n;p}' split.txt)" \
"      16.0 MiB      2 tensors  train.py:21 step < train.py:60 main  (+1 framework frame inside)
      6.00 MiB      1 tensor   train.py:23 step < train.py:60 main  (+1 framework frame inside)
      4.00 MiB      1 tensor   train.py:22 step < train.py:60 main  (+1 framework frame inside)" \
	"split: text, top tensor sites at the peak of allocated"
expect_eq "$(pj split.json "[(s['reserved_bytes'], s['allocated_bytes'], s['cached_bytes'], s['inactive_split_bytes'], s['largest_free_block_bytes'], s['awaiting_free_bytes']) for d in r['framework']['devices'] if d['pid'] is None for s in (d['peak_allocated'], d['peak_reserved'], d['at_exit'])]")" \
	"[($((40*M)), $((26*M)), $((14*M)), $((14*M)), $((14*M)), 0), ($((40*M)), $((20*M)), $((20*M)), 0, $((20*M)), 0), ($((40*M)), $((18*M)), $((22*M)), $((22*M)), $((14*M)), 0)]" \
	"split: JSON, peak of allocated, of reserved, at exit"
expect_eq "$(pj split.json "[(s['site'], s['bytes'], s['count']) for s in r['framework']['devices'][0]['peak_allocated']['sites']]")" \
	"[(1, $((16*M)), 2), (3, $((6*M)), 1), (2, $((4*M)), 1)]" "split: JSON, sites at the peak of allocated"
expect_eq "$(pj split.json "[(s['site'], s['file'], s['line'], s['function'], s['user'], s['allocs'], s['bytes'], s['peak_bytes'], s['exit_bytes']) for s in r['framework']['sites']]")" \
	"[(1, '/work/train.py', 21, 'step', True, 2, $((16*M)), $((16*M)), $((8*M))), (2, '/work/train.py', 22, 'step', True, 1, $((4*M)), $((4*M)), $((4*M))), (3, '/work/train.py', 23, 'step', True, 1, $((6*M)), $((6*M)), $((6*M)))]" \
	"split: JSON, tensor sites"
expect_eq "$(q split.bin.db "SELECT moment, reserved, allocated, cached, inactive_split, largest_free, awaiting_free FROM fw_device WHERE trace IS NULL ORDER BY rowid")" \
"peak_allocated|$((40*M))|$((26*M))|$((14*M))|$((14*M))|$((14*M))|0
peak_reserved|$((40*M))|$((20*M))|$((20*M))|0|$((20*M))|0
exit|$((40*M))|$((18*M))|$((22*M))|$((22*M))|$((14*M))|0
peak_requested|$((40*M))|$((26*M))|$((14*M))|$((14*M))|$((14*M))|0" "split: database, fw_device of the run"
expect_eq "$(q split.bin.db "SELECT moment, reserved, allocated, cached FROM fw_device WHERE trace = 1 AND moment = 'exit'")" \
	"exit|$((40*M))|$((18*M))|$((22*M))" "split: database, fw_device of the process"
expect_eq "$(q split.bin.db "SELECT site, size, free_requested_ns IS NOT NULL, free_completed_ns IS NOT NULL, free_completed_ns >= free_requested_ns FROM fw_blocks ORDER BY alloc_ns")" \
"1|$((8*M))|0|0|
1|$((8*M))|1|1|1
2|$((4*M))|0|0|
3|$((6*M))|0|0|" "split: database, fw_blocks"
expect_eq "$(q split.bin.db "SELECT id, file, line, function, allocs, bytes, peak_bytes, exit_bytes, exit_count, leak_at_exit, leak_growing FROM fw_sites WHERE id = 1")" \
	"1|/work/train.py|21|step|2|$((16*M))|$((16*M))|$((8*M))|1|1|0" "split: database, fw_sites"
expect_eq "$(q split.bin.db "SELECT frames FROM fw_sites WHERE id = 1")" \
	"/usr/lib/python3/site-packages/torch/nn/functional.py:2100 linear < /work/train.py:21 step < /work/train.py:60 main" \
	"split: database, frames of a site"
expect_eq "$(q split.bin.db "SELECT count(*) > 0, max(allocated) FROM fw_timeline WHERE trace IS NULL")" \
	"1|$((26*M))" "split: database, timeline reaches the peak of allocated"

# --- leak: a tensor site that keeps growing, apart from the cache
gen leak
expect_eq "$(sed -n '/^tensor leak candidates/,/^$/p' leak.txt)" \
"tensor leak candidates
    dev 0   8.00 MiB      8 tensors  train.py:33 step < train.py:60 main  (+1 framework frame inside)
              left at exit, growing (highest live 8.00 MiB)
  cache held at exit (the framework's free blocks, not a leak): pid $(sed -n 's/^  pid \([0-9]*\) .*/\1/p' leak.txt) device 0 12.0 MiB" "leak: text, tensor leak candidates"
expect_eq "$(pj leak.json "[(l['site'], l['reasons'], l['bytes'], l['count']) for l in r['framework']['leaks']] + [(c['device'], c['bytes']) for c in r['framework']['cache_at_exit']]")" \
	"[(1, ['live_at_exit', 'growing'], $((8*M)), 8), (0, $((12*M)))]" "leak: JSON, leaks and cache at exit"
expect_eq "$(q leak.bin.db "SELECT id, line, allocs, exit_bytes, exit_count, leak_at_exit, leak_growing FROM fw_sites ORDER BY id")" \
"1|33|8|$((8*M))|8|1|1
2|30|8|0|0|0|0" "leak: database, fw_sites"

# --- oom: enough cache, in pieces
gen oom SIMCUDA_MEM=24M SIMCUDA_CTX_OVERHEAD=2M
expect_eq "$(cat oom.out)" "device_free=$((2*M)) total=$((24*M))" "oom: the device as the generator saw it"
expect_eq "$(sed -n '/^framework out-of-memory errors/,/^$/p' oom.txt | sed 's/^  +.* pid [0-9]* device/  T pid P device/')" \
"framework out-of-memory errors (1)
  T pid P device 0: request of 6.00 MiB failed: fragmentation
      reserved 20.0 MiB = allocated 8.00 MiB + cached 12.0 MiB (requested 8.00 MiB; inactive split 12.0 MiB, largest free block 3.00 MiB)
      device free 2.00 MiB (as the framework saw it) of 24.0 MiB; outside the framework 2.00 MiB; memtrace's reserved of the process 20.0 MiB
      top holders   8.00 MiB      4 tensors  train.py:45 fill < train.py:60 main  (+1 framework frame inside)" "oom: text"
expect_eq "$(pj oom.json "[(o['requested_bytes'], o['device_free_bytes'], o['device_total_bytes'], o['outside_framework_bytes'], o['cuda_reserved_bytes'], o['verdict'], o['state']['cached_bytes'], o['state']['largest_free_block_bytes'], o['state']['allocated_bytes'], o['top_holders']) for o in r['framework']['ooms']]")" \
	"[($((6*M)), $((2*M)), $((24*M)), $((2*M)), $((20*M)), 'fragmentation', $((12*M)), $((3*M)), $((8*M)), [{'site': 2, 'bytes': $((8*M)), 'count': 4}])]" \
	"oom: JSON"
expect_eq "$(q oom.bin.db "SELECT trace, requested, device_free, device_total, cuda_reserved, cached, largest_free, inactive_split, verdict FROM fw_device WHERE moment = 'oom'")" \
	"1|$((6*M))|$((2*M))|$((24*M))|$((20*M))|$((12*M))|$((3*M))|$((12*M))|fragmentation" "oom: database"

# --- no FW events: no section, null, empty tables
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o plain.bin -- "$CLIENTS/rt-basic" >/dev/null 2>&1 ||
	fail "rt-basic under memtrace failed"
"$MEMTRACE" report plain.bin >plain.txt 2>&1 || fail "plain: report failed"
"$MEMTRACE" report --json plain.bin >plain.json 2>&1 || fail "plain: report --json failed"
expect_eq "$(grep -c -e '^framework' -e 'tensor' plain.txt)" 0 "plain: no framework section"
expect_eq "$(pj plain.json "'framework' in r")" "False" "plain: no JSON framework object"
expect_eq "$(q plain.bin.db "SELECT (SELECT count(*) FROM fw_blocks) + (SELECT count(*) FROM fw_device)")" 0 "plain: empty fw tables"
exit 0
