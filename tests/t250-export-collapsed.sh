#!/bin/sh
# `memtrace export --format collapsed`: folded stacks, root (the device)
# first, one line per site of the report's full list. samples/leak.c: at
# the peak (112 MiB) weights 32, gradients 32, activations 24, the losses
# kept 20 and the batch 4 MiB; at exit the 20 MiB of keep_loss(), the
# report's left at exit. samples/stream-ordered.c: the lines sum to what
# the report's sites hold at the peak (the pool's reserve beyond them has
# no stack, so they sum to less than the peak).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
for s in leak stream-ordered; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
MiB=1048576
TRACE=leak.bin traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
TRACE=so.bin traced "$SAMPLES/stream-ordered" >out 2>err || fail "stream-ordered failed: $(cat err)"

"$MEMTRACE" export --format collapsed leak.bin >peak 2>err || fail "export failed: $(cat err)"
[ -s err ] && fail "export wrote to stderr: $(cat err)"
expect_eq "$(cat peak)" "device 0;main (leak.c:72);alloc_weights (leak.c:29) $((32 * MiB))
device 0;main (leak.c:77);backward (leak.c:62) $((32 * MiB))
device 0;main (leak.c:75);forward (leak.c:45) $((24 * MiB))
device 0;main (leak.c:76);keep_loss (leak.c:54) $((20 * MiB))
device 0;main (leak.c:74);load_batch (leak.c:37) $((4 * MiB))" "leak: at the peak"
expect_eq "$(awk '{ s += $NF } END { print s }' peak)" $((112 * MiB)) "leak: the lines sum to the peak"
"$MEMTRACE" export --format collapsed --at exit -o exit leak.bin >out 2>err || fail "export --at exit failed: $(cat err)"
expect_eq "$(cat exit)" "device 0;main (leak.c:76);keep_loss (leak.c:54) $((20 * MiB))" "leak: at exit"
"$MEMTRACE" report --json --no-db leak.bin >leak.json || fail "report failed"
expect_eq "$(awk '{ s += $NF } END { print s }' exit)" \
	"$(python3 -c 'import json; print(json.load(open("leak.json"))["devices"][0]["left_at_exit_bytes"])')" \
	"leak: the lines sum to the report's left at exit"

"$MEMTRACE" export --format collapsed so.bin >so 2>err || fail "export failed: $(cat err)"
"$MEMTRACE" report --json --no-db so.bin >so.json || fail "report failed"
expect_eq "$(awk '{ s += $NF } END { print s }' so)" \
	"$(python3 -c 'import json; r = json.load(open("so.json")); print(sum(s["bytes"] for s in r["devices"][0]["peak_sites"]))')" \
	"stream-ordered: the lines sum to what the report's sites hold at the peak"
expect_eq "$(wc -l <so)" "$(python3 -c 'import json; print(len(json.load(open("so.json"))["devices"][0]["peak_sites"]))')" \
	"stream-ordered: one line per site"
expect_eq "$(grep -cvE '^device 0(;[^;]+)+ [0-9]+$' so)" 0 "stream-ordered: every line folded"

"$MEMTRACE" export --format collapsed --at never leak.bin >out 2>err
expect_eq "$?" 2 "--at never: usage error"
expect_eq "$(cat err)" "memtrace: --at takes peak, exit, oom, oom:N or a time (+12.5ms, 40us, 3s, or ns since the run's start), not 'never' (try 'memtrace export --help')" "--at never: message"
"$MEMTRACE" export leak.bin >out 2>err
expect_eq "$?" 2 "no --format: usage error"
"$MEMTRACE" export --format svg leak.bin >out 2>err
expect_eq "$?" 2 "unknown format: usage error"
expect_eq "$(cat err)" "memtrace: unknown format 'svg' (perfetto, collapsed, torch-snapshot or parquet) (try 'memtrace export --help')" "unknown format: message"
exit 0
