#!/bin/sh
# The whole path with no change to the program: py-steps.py (8 steps) on the
# torch test double, under memtrace run; the report splits reserved into
# allocated and cached exactly as the double's own memory_stats count them,
# and names the leaking line. Figures (py-steps.py's header, n = 8):
# allocated peak 29 MiB with reserved 40 MiB there, cached 11 MiB, all of it
# inactive split, largest free block 11 MiB; at exit 20 MiB allocated
# (weights 12 MiB and the leak, 8 x 1 MiB from the line marked L:leak).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble
MiB=1048576
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o s.bin -- python3 "$TD/py-steps.py" 8 >out 2>err ||
	fail "py-steps failed: $(cat err)"
expect_eq "$(head -1 out)" "allocated_peak=$((29 * MiB)) reserved_peak=$((40 * MiB))" "the double's own figures"
"$MEMTRACE" report --no-db s.bin >text 2>err || fail "report failed: $(cat err)"
"$MEMTRACE" report --json --db s.db s.bin >json 2>err || fail "report --json failed: $(cat err)"
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
step=$(grep -n '# L:step$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
main=$(grep -n '# L:main$' "$TD/py-steps.py" | cut -d: -f1)

expect_eq "$(grep '^  peak allocated ' text | sed 's/ at +[0-9.]* [mu]*s:/ at T:/')" \
	"  peak allocated 29.0 MiB at T: reserved 40.0 MiB = allocated 29.0 MiB + cached 11.0 MiB (requested 29.0 MiB; inactive split 11.0 MiB, largest free block 11.0 MiB)" \
	"text: reserved = allocated + cached at the peak of allocated"
expect_eq "$(grep '^  at exit: ' text)" \
	"  at exit: reserved 40.0 MiB = allocated 20.0 MiB + cached 20.0 MiB (requested 20.0 MiB; inactive split 0 B, largest free block 20.0 MiB)" \
	"text: at exit"
grep -A1 '^tensor leak candidates' text | tail -1 >leakline
expect_eq "$(sed 's/^ *//' leakline | tr -s ' ')" "dev 0 12.0 MiB 1 tensor py-steps.py:$weights main < py-steps.py:$main <module>" \
	"the weights, kept to the end"
grep -q "^    dev 0   8.00 MiB      8 tensors  py-steps.py:$leak step < py-steps.py:$step main" text ||
	fail "the leaking line py-steps.py:$leak is not a tensor leak candidate: $(sed -n '/^tensor leak/,/^$/p' text)"

pj() { python3 -c 'import json, sys; r = json.load(open("json")); f = r["framework"]; d = [x for x in f["devices"] if x["pid"] is None][0]; print(eval(sys.argv[1]))' "$1"; }
expect_eq "$(pj '(d["peak_allocated"]["allocated_bytes"], d["peak_reserved"]["reserved_bytes"], d["peak_allocated"]["cached_bytes"], d["peak_allocated"]["inactive_split_bytes"])')" \
	"($((29 * MiB)), $((40 * MiB)), $((11 * MiB)), $((11 * MiB)))" "JSON: the peaks"
expect_eq "$(pj '[(l["bytes"], l["count"], [s["line"] for s in f["sites"] if s["site"] == l["site"]][0]) for l in f["leaks"]]')" \
	"[($((12 * MiB)), 1, $weights), ($((8 * MiB)), 8, $leak)]" "JSON: tensor leak candidates and their lines"
# at the CUDA API, the double's segments are the cache of a caching allocator
expect_eq "$(python3 -c 'import json; r = json.load(open("json")); d = r["devices"][0]; print(d["peak_reserved_bytes"], d["cached_bytes_at_peak"])')" \
	"$((40 * MiB)) $((40 * MiB))" "CUDA level: 40 MiB of segments, all cached"
expect_eq "$(sqlite3 s.db "SELECT allocated, reserved FROM fw_device WHERE trace IS NULL AND moment = 'peak_allocated'")" \
	"$((29 * MiB))|$((40 * MiB))" "database: the peak of allocated"

# py-oom.py (its header): 40 MiB of tensors and 40 MiB cached in eight 5 MiB
# pieces when an 8 MiB request fails: PyTorch's own view says
# fragmentation, and so does the report
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o oom.bin -- python3 "$TD/py-oom.py" >out 2>err ||
	fail "py-oom failed: $(cat err)"
"$MEMTRACE" report --no-db oom.bin >oom.txt 2>err || fail "report failed: $(cat err)"
grep -A2 '^framework out-of-memory errors (1)$' oom.txt | sed 's/+[0-9.]* [mu]*s pid [0-9]*/+T pid P/' >oom.got
expect_eq "$(cat oom.got)" "framework out-of-memory errors (1)
  +T pid P device 0: request of 8.00 MiB failed: fragmentation
      reserved 80.0 MiB = allocated 40.0 MiB + cached 40.0 MiB (requested 40.0 MiB; inactive split 40.0 MiB, largest free block 5.00 MiB)" \
	"the OOM and its verdict"
exit 0
