#!/bin/sh
# t722-fw-blocks: allocated as PyTorch counts it (block bytes, dropping at
# free_requested), requested as PyTorch counts it (the tensors' own sizes,
# dropping at free_completed), and the free blocks over real blocks, on
# histories of tests/clients/dl-fwgen.c whose blocks are worked out here by
# hand from c10/cuda/CUDACachingAllocator.cpp @001074d (round_size: up to
# 512 B, or roundup_power2_next_division; should_split: small pool or
# expandable segments split when >= 512 B remain, the large pool when the
# block is under max_split_size and more than 1 MiB remains), the same in
# the text, the JSON and the database; and the drains' checks against
# PyTorch's own counters said, a wrong one as a warning.
. "$(dirname "$0")/lib.sh"

GEN=$CLIENTS/dl-fwgen
command -v sqlite3 >/dev/null || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
M=1048576
pj() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
gen() {
	env LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o "$1.bin" -- "$GEN" "$1" \
		>"$1.out" 2>"$1.err" || fail "$1: run exited $?: $(cat "$1.err")"
	"$MEMTRACE" report "$1.bin" >"$1.txt" 2>"$1.rerr" || fail "$1: report exited $?"
	"$MEMTRACE" report --json "$1.bin" >"$1.json" 2>"$1.rerr" || fail "$1: report --json exited $?"
}
# state D MOMENT: (reserved, allocated, requested, cached, inactive split,
# largest free, awaiting) of the run's device 0 at MOMENT
state() {
	pj "$1.json" "[(s['reserved_bytes'], s['allocated_bytes'], s['requested_bytes'], s['cached_bytes'], s['inactive_split_bytes'], s['largest_free_block_bytes'], s['awaiting_free_bytes']) for d in r['framework']['devices'] if d['pid'] is None for s in [d['$2']]][0]"
}

# --- odd: 2 MiB segment S: 4 B -> 512, 1000 B -> 1024, 1 MiB - 100 -> 1 MiB
# (2048 * 512), then 2 MiB - 1536 - 1 MiB = 1047040 B free in S;
# 34 MiB segment L: 33 MiB, 1 MiB left (not > kSmallSize): block 34 MiB;
# 20 MiB segment M: 3 MiB + 1 -> 3 MiB + 512, 16 MiB with 1 MiB - 512 left
# (not > kSmallSize): block 17 MiB - 512.
gen odd
al=$((512 + 1024 + M + 34*M + 3*M + 512 + 17*M - 512))
rq=$((4 + 1000 + M - 100 + 33*M + 3*M + 1 + 16*M))
expect_eq "$al $rq" "$((55*M + 1536)) $((53*M + 905))" "odd: the sums worked out"
expect_eq "$(state odd peak_allocated)" "($((56*M)), $al, $rq, $((56*M - al)), 1047040, 1047040, 0)" \
	"odd: peak of allocated (block bytes), requested beside it; the free 1047040 B of S is inactive split"
expect_eq "$(state odd peak_requested)" "($((56*M)), $al, $rq, $((56*M - al)), 1047040, 1047040, 0)" \
	"odd: the peak of requested is the same moment"
# at exit: L's 34 MiB block free (the whole segment: not split), S's 512 B
# block free beside its free tail: inactive split 512 + 1047040
ex_al=$((1024 + M + 3*M + 512 + 17*M - 512))
ex_rq=$((1000 + M - 100 + 3*M + 1 + 16*M))
expect_eq "$(state odd at_exit)" "($((56*M)), $ex_al, $ex_rq, $((56*M - ex_al)), 1047552, $((34*M)), 0)" \
	"odd: at exit"
expect_eq "$(pj odd.json "(r['framework']['checks']['count'], r['framework']['checks']['mismatches'], r['framework']['checks']['first_mismatch'], r['framework']['drift'])")" \
	"(1, 0, None, {'alloc_without_free_block': 0, 'alloc_larger_than_free_block': 0, 'segment_released_while_used': 0, 'first_time_ns': None})" \
	"odd: the drain's check held; nothing drifted"
grep -q -F "  checked: allocated, requested and reserved equal PyTorch's own counters at the 1 drain that could read them" odd.txt ||
	fail "odd: text does not say the check held: $(sed -n '/^framework/,/^tensor/p' odd.txt)"
grep -q -F "  peak allocated 55.0 MiB at " odd.txt && grep -q -F "  peak requested 53.0 MiB at " odd.txt ||
	fail "odd: text peaks: $(grep 'peak ' odd.txt)"
expect_eq "$(sqlite3 odd.bin.db "SELECT size, requested FROM fw_blocks ORDER BY alloc_ns")" \
"512|4
1024|1000
$M|$((M - 100))
$((34*M))|$((33*M))
$((3*M + 512))|$((3*M + 1))
$((17*M - 512))|$((16*M))" "odd: database, each block and its request"
expect_eq "$(sqlite3 odd.bin.db "SELECT allocated, requested_bytes FROM fw_device WHERE trace IS NULL AND moment = 'peak_requested'")" \
	"$al|$rq" "odd: database, the peak of requested"
# the largest tensor site holds the whole 34 MiB block, as memory_viz shows it
expect_eq "$(pj odd.json "[(s['site'], s['bytes']) for s in r['framework']['devices'][0]['peak_allocated']['sites']]")" \
	"[(2, $((34*M))), (3, $((20*M))), (1, $((M + 1536)))]" "odd: tensor sites at the peak hold block bytes"

# --- round: roundup_power2_divisions 4: 1300000 lies in [1 MiB, 2 MiB),
# steps of 256 KiB: 1310720; 5 MiB + 1 in [4 MiB, 8 MiB), steps of 1 MiB:
# 6 MiB. 20 MiB - 1310720 - 6 MiB > 1 MiB: both split.
gen round
expect_eq "$(state round peak_allocated)" \
	"($((20*M)), $((1310720 + 6*M)), $((1300000 + 5*M + 1)), $((14*M - 1310720)), $((14*M - 1310720)), $((14*M - 1310720)), 0)" \
	"round: blocks rounded by the divisions"

# --- maxsplit 40 MiB: 45 MiB takes the freed 50 MiB block whole; 5 MiB
# splits the freed 12 MiB block.
gen maxsplit
expect_eq "$(state maxsplit at_exit)" "($((62*M)), $((55*M)), $((50*M)), $((7*M)), $((7*M)), $((7*M)), 0)" \
	"maxsplit: an oversize block is not split"

# --- stream: between free_requested and free_completed the block is not
# allocated (allocated_bytes dropped) but still requested and awaiting
gen stream
expect_eq "$(state stream peak_allocated)" "($((20*M)), $((8*M)), $((8*M)), $((12*M)), $((12*M)), $((12*M)), 0)" \
	"stream: peak of allocated"
expect_eq "$(pj stream.json "(r['framework']['checks']['count'], r['framework']['checks']['mismatches'])")" "(2, 0)" \
	"stream: both checks held (allocated 0 and requested 8 MiB while awaiting)"

# --- badcheck: a drain's counters that disagree are said, with both bytes
gen badcheck
expect_eq "$(pj badcheck.json "(lambda c: (c['count'], c['mismatches'], c['first_mismatch']['figure'], c['first_mismatch']['memtrace_bytes'], c['first_mismatch']['pytorch_bytes']))(r['framework']['checks'])")" \
	"(1, 1, 'allocated', $ex_al, $((ex_al + 1024)))" "badcheck: JSON"
grep -q -F "  warning: at 1 of 1 drains the figures differ from PyTorch's counters (first at " badcheck.txt &&
	grep -q -F "allocated memtrace $ex_al B, PyTorch $((ex_al + 1024)) B)" badcheck.txt ||
	fail "badcheck: text: $(grep -A1 warning badcheck.txt)"
exit 0
