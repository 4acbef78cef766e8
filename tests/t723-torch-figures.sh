#!/bin/sh
# t723-torch-figures: memtrace's framework figures equal PyTorch's own
# counters on the torch double, in every allocator mode and through the
# drains' hazards: tests/torchdouble/py-figures.py (odd sizes: 4-byte
# scalars, 1000-byte biases, 3 MiB + 1, 5 MiB + 3, 33 MiB from blocks not
# split) prints memory_stats() at its end, and the report's peaks of
# allocated (allocated_bytes.all.peak), requested
# (requested_bytes.all.peak) and reserved (reserved_bytes.all.peak) and its
# figures at exit (with inactive_split_bytes) must be those exactly, in the
# JSON and in the database, with every drain's check of the
# counters holding and nothing drifting:
#   default, expandable_segments:True, max_split_size_mb:40,
#   roundup_power2_divisions:4, record_stream on a side stream,
#   PyTorch's clock refit moving time_us by 200 us between snapshots (past
#   any time slack), a 2.1 history without time_us (drain times, said),
#   the program's own _record_memory_history with a large ring (kept, said).
# A ring too small for the run (the program's max_entries=40) cannot give
# the figures: the loss is said (dropped events, resyncs, failed checks),
# never a silent wrong answer.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
TD=$ROOT/tests/torchdouble
cd "$T" || exit 1

# fig NAME: PyTorch's figures and memtrace's, one JSON line each
figures() {
	python3 - "$1" <<'PY'
import json, sys
n = sys.argv[1]
mem = [l for l in open(n + ".out") if l.startswith("MEMSTATS ")]
print(json.dumps(json.loads(mem[0][9:]), sort_keys=True) if mem else "no MEMSTATS line")
r = json.load(open(n + ".json"))["framework"]
d = [d for d in r["devices"] if d["pid"] is None][0]
print(json.dumps({"allocated_peak": d["peak_allocated"]["allocated_bytes"],
                  "requested_peak": d["peak_requested"]["requested_bytes"],
                  "reserved_peak": d["peak_reserved"]["reserved_bytes"],
                  "allocated": d["at_exit"]["allocated_bytes"],
                  "requested": d["at_exit"]["requested_bytes"],
                  "reserved": d["at_exit"]["reserved_bytes"],
                  "inactive_split": d["at_exit"]["inactive_split_bytes"]}, sort_keys=True))
c, dr, dn = r["checks"], r["drift"], r["drains"]
print("checks=%d mismatches=%d drift=%d drains=%d resyncs=%d dropped=%d timing=%s program=%d" % (
    c["count"], c["mismatches"], dr["alloc_without_free_block"] + dr["alloc_larger_than_free_block"]
    + dr["segment_released_while_used"], dn["count"], dn["resyncs"], r["dropped_events"],
    dn["timing"], dn["program_history_calls"]))
PY
}

# run NAME CONF ARGS [ENV...]: py-figures.py under memtrace; report JSON
run() {
	n=$1 conf=$2 args=$3
	shift 3
	env LD_LIBRARY_PATH="$SIM" PYTHONPATH="$TD" PYTORCH_CUDA_ALLOC_CONF="$conf" \
		MEMTRACE_TORCH_DRAIN_S=0.02 "$@" "$MEMTRACE" run --no-summary -o "$n.bin" -- \
		python3 "$TD/py-figures.py" $args >"$n.out" 2>"$n.err" ||
		fail "$n: run exited $?: $(cat "$n.err")"
	"$MEMTRACE" report "$n.bin" >"$n.txt" 2>"$n.rerr" || fail "$n: report exited $?"
	"$MEMTRACE" report --json "$n.bin" >"$n.json" 2>>"$n.rerr" || fail "$n: report --json exited $?"
	figures "$n" >"$n.fig" || fail "$n: figures: $(cat "$n.fig")"
}

# exact NAME: PyTorch's figures are memtrace's, every check held, none drifted
exact() {
	expect_eq "$(sed -n 2p "$1.fig")" "$(sed -n 1p "$1.fig")" "$1: memtrace's figures are PyTorch's"
	sed -n 3p "$1.fig" | grep -q "mismatches=0 drift=0 " || fail "$1: $(sed -n 3p "$1.fig")"
	sed -n 3p "$1.fig" | grep -q "^checks=0 " && fail "$1: no drain could check: $(sed -n 3p "$1.fig")"
	sed -n 3p "$1.fig" | grep -q " dropped=0 " || fail "$1: events lost: $(sed -n 3p "$1.fig")"
	grep -q "^  checked: allocated, requested and reserved equal PyTorch's own counters at " "$1.txt" ||
		fail "$1: the text does not say the checks held"
	grep -q "^  checked: PyTorch's own peaks (memory_stats(), read after [^)]*): allocated .*: the same$" "$1.txt" ||
		fail "$1: the text does not hold the peaks to PyTorch's: $(grep "own peaks" "$1.txt")"
	# the database holds the same figures
	db=$(sqlite3 "$1.bin.db" "SELECT (SELECT allocated FROM fw_device WHERE trace IS NULL AND moment = 'peak_allocated') || ' ' || (SELECT requested_bytes FROM fw_device WHERE trace IS NULL AND moment = 'peak_requested') || ' ' || (SELECT reserved FROM fw_device WHERE trace IS NULL AND moment = 'peak_reserved') || ' ' || (SELECT allocated || ' ' || requested_bytes || ' ' || reserved || ' ' || inactive_split FROM fw_device WHERE trace IS NULL AND moment = 'exit')")
	expect_eq "$db" "$(sed -n 1p "$1.fig" | python3 -c 'import json, sys; f = json.load(sys.stdin); print(" ".join(str(f[k]) for k in ("allocated_peak", "requested_peak", "reserved_peak", "allocated", "requested", "reserved", "inactive_split")))')" \
		"$1: the database's figures are PyTorch's"
}

run default "" "--sleep 25"
exact default
# the figures are not friendly ones: blocks are not requests
python3 -c 'import json, sys; f = json.loads(sys.argv[1]); sys.exit(f["allocated_peak"] == f["requested_peak"])' \
	"$(sed -n 1p default.fig)" || fail "default: allocated peak equals requested: the sizes are too friendly"
run expandable "expandable_segments:True" "--sleep 25"
exact expandable
run maxsplit "max_split_size_mb:40" "--sleep 25"
exact maxsplit
run rounddiv "roundup_power2_divisions:4" "--sleep 25"
exact rounddiv
run stream "" "--record-stream --sleep 25"
exact stream
run refit "" "--sleep 25" TORCHDOUBLE_REFIT_JUMP_US=200 TORCHDOUBLE_REFIT_JUMP_AT=2
exact refit
run v21 "" "--sleep 25" TORCHDOUBLE_VERSION=2.1
exact v21
sed -n 3p v21.fig | grep -q " timing=drain " || fail "v21: timing: $(sed -n 3p v21.fig)"
grep -q "^  note: the history had no times (torch before 2.2): each tensor event has the time of the drain" v21.txt ||
	fail "v21: the text does not say the times are the drains'"
run own "" "--sleep 25 --own-history 100000"
exact own
sed -n 3p own.fig | grep -q " program=1$" || fail "own: $(sed -n 3p own.fig)"
grep -q "^  note: the program called _record_memory_history itself 1 time; memtrace drained before each call" own.txt ||
	fail "own: the text does not say the program changed the history"

# a ring too small: said, never silent
run small "" "--sleep 25 --own-history 40"
sed -n 3p small.fig | grep -q " dropped=0 " && fail "small: no loss said: $(sed -n 3p small.fig)"
sed -n 3p small.fig | grep -q " mismatches=0 " && fail "small: checks did not catch it: $(sed -n 3p small.fig)"
grep -q "^  note: [0-9]* framework events were lost before memtrace read them" small.txt &&
	grep -q "^  warning: at [0-9]* of [0-9]* drains the figures differ from PyTorch's counters" small.txt ||
	fail "small: the text does not say what was lost: $(sed -n '/drains:/,/^$/p' small.txt)"
# PyTorch's own peaks stay exact there, and the report gives them
pt=$(python3 -c 'import json, sys; r = json.load(open("small.json"))["framework"]; d = [d for d in r["devices"] if d["pid"] is not None][0]["pytorch_peaks"]; print(json.dumps({"allocated_peak": d["allocated_bytes"], "requested_peak": d["requested_bytes"], "reserved_peak": d["reserved_bytes"]}, sort_keys=True))')
expect_eq "$pt" "$(sed -n 1p small.fig | python3 -c 'import json, sys; f = json.load(sys.stdin); print(json.dumps({k: f[k] for k in ("allocated_peak", "requested_peak", "reserved_peak")}, sort_keys=True))')" \
	"small: PyTorch's own peaks in the JSON"
grep -q "^  warning: PyTorch's own peaks (memory_stats(), read after [^)]*): .*: memtrace's rebuilt peaks above differ" small.txt ||
	fail "small: the text does not set PyTorch's peaks against the rebuilt ones"
exit 0
