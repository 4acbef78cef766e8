#!/bin/sh
# t705-torchdouble-history: the double's history as real PyTorch's moves
# and varies: time_us refitted at every _snapshot() (a few us, and a forced
# jump past 50 us), the per-entry cost of _snapshot() held with the GIL,
# the 2.1 mode (no time_us, no allocator_settings, the four-option
# _record_memory_history), and a program's own _record_memory_history
# (setMaxEntries on a wrapped ring without re-linearizing, enabled=None
# clearing, sys.maxsize, context changes keeping the ring, @001074d).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
pyd() { (cd "$T" && PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"); }

# --- the refit ------------------------------------------------------------------
# The same entry read by snapshot 1, 2 and 3: with TORCHDOUBLE_REFIT_US=0 its
# time never moves; by default it moves by under 2 * 5 us; with
# TORCHDOUBLE_REFIT_JUMP_US=100 (from snapshot 2 on) by 100 +- 10 us at 2,
# and not again at 3 beyond the +-10 us of the refit.
cat >"$T/refit.py" <<'PY'
import torch
torch.cuda.memory._record_memory_history(max_entries=100)
x = torch.empty(512, dtype=torch.uint8, device="cuda")
t = [torch.cuda.memory._snapshot()["device_traces"][0][1]["time_us"] for _ in range(3)]
print(t[1] - t[0], t[2] - t[1])
PY
TORCHDOUBLE_REFIT_US=0 pyd refit.py >"$T/out" 2>"$T/err" || fail "refit.py: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "0 0" "no refit"
pyd refit.py >"$T/out" 2>"$T/err" || fail "refit.py: $(cat "$T/err")"
read d1 d2 <"$T/out"
[ "$d1" != 0 ] && [ "$d1" -ge -10 ] && [ "$d1" -le 10 ] && [ "$d2" -ge -10 ] && [ "$d2" -le 10 ] ||
	fail "default refit moved by $d1, $d2 us"
TORCHDOUBLE_REFIT_JUMP_US=100 pyd refit.py >"$T/out" 2>"$T/err" || fail "refit.py: $(cat "$T/err")"
read d1 d2 <"$T/out"
[ "$d1" -ge 90 ] && [ "$d1" -le 110 ] && [ "$d2" -ge -10 ] && [ "$d2" -le 10 ] ||
	fail "jump of 100 us moved by $d1, $d2 us"

# --- the cost of _snapshot(), holding the GIL ---------------------------------
# 1000 entries at 300 us: >= 0.3 s in one call; a busy thread meanwhile
# counts less than a fifth of what it counts while the main thread sleeps
# as long (it cannot have the GIL during the snapshot).
cat >"$T/cost.py" <<'PY'
import threading, time, torch
torch.cuda.memory._record_memory_history(max_entries=1000)
xs = [torch.empty(512, dtype=torch.uint8, device="cuda") for _ in range(1000)]
n = [0]
def spin():
    while True:
        n[0] += 1
threading.Thread(target=spin, daemon=True).start()
time.sleep(0.05)
c0 = n[0]; t0 = time.perf_counter()
torch.cuda.memory._snapshot()
c1 = n[0]; t1 = time.perf_counter()
time.sleep(t1 - t0)
c2 = n[0]
print("slow:", t1 - t0 >= 0.3, "held:", (c1 - c0) * 5 < (c2 - c1))
PY
TORCHDOUBLE_SNAPSHOT_US=300 pyd cost.py >"$T/out" 2>"$T/err" || fail "cost.py: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "slow: True held: True" "snapshot cost"

# --- 2.1 ----------------------------------------------------------------------------
cat >"$T/v21.py" <<'PY'
import torch
torch.cuda.memory._record_memory_history(max_entries=100)
x = torch.empty(4, dtype=torch.uint8, device="cuda")
s = torch.cuda.memory._snapshot()
print(torch.__version__, sorted(s), sorted(s["device_traces"][0][1]))
try:
    torch.cuda.memory._record_memory_history(max_entries=100, clear_history=True)
except TypeError:
    print("no clear_history")
print(torch.cuda.memory_stats()["requested_bytes.all.current"])
PY
TORCHDOUBLE_VERSION=2.1 pyd v21.py >"$T/out" 2>"$T/err" || fail "v21.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
2.1.0 ['device_traces', 'segments'] ['action', 'addr', 'frames', 'size', 'stream']
no clear_history
4
EOF
diff -u "$T/want" "$T/out" || fail "2.1 mode"

# --- a program's own _record_memory_history --------------------------------------
# max_entries=4; entries e0 (segment_alloc) and e1..e6 (allocs a1..a6):
#   after e3 the ring is [e0 e1 e2 e3]; e4..e6 overwrite from index 0:
#   [e4 e5 e6 e3], next = 3; read oldest first: a3 a4 a5 a6
# max_entries=8 (setMaxEntries, no re-linearization); a7, a8 are appended:
#   [e4 e5 e6 e3 e7 e8], next still 3; read: e3 e7 e8 e4 e5 e6
#   = a3 a7 a8 a4 a5 a6: no longer oldest first; that _snapshot() appends
#   its "snapshot" entry S: [e4 e5 e6 e3 e7 e8 S]
# context=None, max_entries=sys.maxsize: kept (no clear in @001074d); a9,
#   without frames, is appended too: read from index 3: e3 e7 e8 S a9 e4 e5 e6
# enabled=None clears: nothing left, and no "snapshot" entry is recorded
cat >"$T/user.py" <<'PY'
import sys, torch
def show(what):
    trace = torch.cuda.memory._snapshot(torch.cuda.current_device())["device_traces"][0]
    print(what + ":", " ".join("a%d%s" % ((e["addr"] - base) // 512 + 1, "" if "frames" in e else "-")
                               for e in trace if e["action"] == "alloc"), len(trace))
torch.cuda.memory._record_memory_history(max_entries=4)
xs = [torch.empty(512, dtype=torch.uint8, device="cuda")]
base = xs[0].data_ptr()
xs += [torch.empty(512, dtype=torch.uint8, device="cuda") for _ in range(5)]
ring = torch._C._device_allocator[0].alloc_buffer
print("before:", [e[0][:5] for e in ring.get()])
torch.cuda.memory._record_memory_history(max_entries=8)
xs += [torch.empty(512, dtype=torch.uint8, device="cuda") for _ in range(2)]
show("raised")
torch.cuda.memory._record_memory_history(context=None, max_entries=sys.maxsize)
xs.append(torch.empty(512, dtype=torch.uint8, device="cuda"))
show("no context")
torch.cuda.memory._record_memory_history(enabled=None)
show("disabled")
PY
pyd user.py >"$T/out" 2>"$T/err" || fail "user.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
before: ['alloc', 'alloc', 'alloc', 'alloc']
raised: a3 a7 a8 a4 a5 a6 6
no context: a3 a7 a8 a9- a4 a5 a6 8
disabled:  0
EOF
diff -u "$T/want" "$T/out" || fail "the program's own history settings"
