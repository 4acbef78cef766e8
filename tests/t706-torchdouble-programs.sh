#!/bin/sh
# t706-torchdouble-programs: the double's programs for memtrace's side
# (tests/torchdouble/py-odd.py and py-modes.py) print, on their last line,
# PyTorch's own counters as MEMSTATS JSON; each figure here is the one their
# header comments work out by hand from PyTorch's rules, in each mode.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
# pyd ARGS...: the double's python3, PYTORCH_CUDA_ALLOC_CONF set to $CONF
# when that is not empty
CONF=
pyd() {
	if [ -n "$CONF" ]; then
		PYTORCH_CUDA_ALLOC_CONF=$CONF PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"
	else
		PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"
	fi
}
# memstats: the MEMSTATS line of stdin as "key=value ..." in a fixed order
memstats() {
	python3 -c 'import json, sys
l = [x for x in sys.stdin if x.startswith("MEMSTATS ")][-1]
d = json.loads(l[9:])
print(" ".join("%s=%d" % (k, d[k]) for k in ("allocated_peak", "requested_peak", "reserved_peak",
      "allocated_current", "requested_current", "reserved_current", "inactive_split_bytes",
      "largest_free")))'
}
check() { # WHAT EXPECTED CMD...
	what=$1 want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err" || fail "$what: $(cat "$T/err")"
	expect_eq "$(memstats <"$T/out")" "$want" "$what"
}
check py-odd.py "allocated_peak=38804480 requested_peak=37753749 reserved_peak=58720256 allocated_current=35653120 requested_current=34603020 reserved_current=58720256 inactive_split_bytes=2095616 largest_free=20971520" \
	pyd "$TD/py-odd.py"
DEF="allocated_peak=198180864 requested_peak=197132288 reserved_peak=216006656 allocated_current=162529792 requested_current=161480708 reserved_current=216006656 inactive_split_bytes=1048064 largest_free=31457280"
check "py-modes.py default" "$DEF" pyd "$TD/py-modes.py"
CONF=max_split_size_mb:100
check "py-modes.py max_split_size_mb:100" "$DEF" pyd "$TD/py-modes.py"
CONF=
check "py-modes.py record_stream" "allocated_peak=198180864 requested_peak=197132288 reserved_peak=216006656 allocated_current=162529792 requested_current=163577860 reserved_current=216006656 inactive_split_bytes=19922432 largest_free=31457280" \
	pyd "$TD/py-modes.py" record_stream
CONF=expandable_segments:True
check "py-modes.py expandable_segments" "allocated_peak=197132288 requested_peak=197132288 reserved_peak=211812352 allocated_current=161481216 requested_current=161480708 reserved_current=211812352 inactive_split_bytes=0 largest_free=36700160" \
	pyd "$TD/py-modes.py"
