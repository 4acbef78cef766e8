#!/bin/sh
# t645: each PyTorch tensor's step, phase and module, and the split of
# allocated by category (parameters, gradients, optimizer state,
# activations, temporaries; cache), at the peak of allocated, at each
# step's peak, at each OOM and at each module's peak, on dl-torch's
# two-step run recorded as the PyTorch hooks' contract says (figures
# worked out by hand in tests/clients/dl-torch.c): the gradients and the
# optimizer state are named only by the note at step 1's end, yet count
# as such from their alloc on (step 1's peak came before the note).
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/dl-torch" run 2>/dev/null || fail "dl-torch run failed"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/report" || fail "report failed"
grep -q "^  peak 48.0 MiB allocated in step 2, phase forward, module GPT.layers.1: parameters 8.00 MiB, gradients 8.00 MiB, optimizer state 16.0 MiB, activations 16.0 MiB, temporaries 0 B; cache 16.0 MiB at " "$T/report" ||
	fail "the peak of allocated: $(grep 'allocated in' "$T/report")"
grep -q "^  out of memory (pid [0-9]*, device 0) asking 100 MiB in step 2, phase forward, module GPT.layers.0: parameters 8.00 MiB, gradients 8.00 MiB, optimizer state 16.0 MiB, activations 6.00 MiB, temporaries 0 B; cache 26.0 MiB at " "$T/report" ||
	fail "the OOM: $(grep 'out of memory' "$T/report")"
grep -q "^      at its allocated peak: parameters 8.00 MiB, gradients 8.00 MiB, optimizer state 16.0 MiB, activations 0 B, temporaries 2.00 MiB; cache 30.0 MiB$" "$T/report" ||
	fail "step 1's split: $(grep -A1 '^    step 1' "$T/report")"
grep -q "^    GPT.layers.0  *38.0 MiB  step 2  held by its tensors 6.00 MiB: " "$T/report" ||
	fail "module GPT.layers.0: $(grep -A3 '^  modules' "$T/report")"
"$MEMTRACE" report --json --no-db "$T/trace.bin" >"$T/json" || fail "report --json failed"
python3 - "$T/json" <<'PY' || fail "JSON figures"
import json, sys
M = 1 << 20
d = json.load(open(sys.argv[1]))["ranges"]
def check(what, got, want):
    if got != want:
        print("FAIL: %s: got %r, expected %r" % (what, got, want)); sys.exit(1)
def split(c):
    return tuple(c[k] // M for k in ("parameters", "gradients", "optimizer_state", "activations",
                                      "temporaries", "allocated", "reserved", "cache"))
check("instances", d["instances"], 14)
pk = d["framework_peaks"]
check("one framework peak", len(pk), 1)
pk = pk[0]
check("peak", (pk["allocated_bytes"] // M, pk["step"], pk["phase"], pk["module"], pk["range"], pk["name"]),
      (48, 2, "forward", "GPT.layers.1", "torch.module:GPT.layers.N", "GPT.layers.1"))
check("peak split", split(pk["categories"]), (8, 8, 16, 16, 0, 48, 64, 16))
o = d["ooms"]
check("one OOM", len(o), 1)
o = o[0]
check("OOM", (o["requested_bytes"] // M, o["device"], o["step"], o["phase"], o["module"]),
      (100, 0, 2, "forward", "GPT.layers.0"))
check("OOM split", split(o["categories"]), (8, 8, 16, 6, 0, 38, 64, 26))
st = {s["step"]: s for s in d["steps"]}
check("steps", sorted(st), [1, 2])
check("step 1", (st[1]["framework_allocated_at_start"] // M, st[1]["framework_peak_allocated"] // M,
                 st[1]["framework_allocated_at_end"] // M), (8, 34, 32))
check("step 1 split", split(st[1]["categories"]), (8, 8, 16, 0, 2, 34, 64, 30))
check("step 2 split", split(st[2]["categories"]), (8, 8, 16, 16, 0, 48, 64, 16))
mods = {x["module"]: (x["peak_allocated"] // M, x["peak_step"], x["own_bytes"] // M) for x in d["modules"]}
check("modules", mods, {"GPT": (48, 2, 16), "GPT.layers.0": (38, 2, 6), "GPT.layers.1": (48, 2, 10)})
check("notes", d["categories_notes"], {"notes": 1, "entries": 6, "unmatched": 0, "unreadable": 0, "cut": 0})
r = {x["range"]: (x["instances"], x.get("framework_peak_allocated", 0) // M) for x in d["ranges"]}
check("ranges", r, {"torch:step N": (2, 48), "torch:forward": (2, 48), "torch.module:GPT": (2, 48),
                    "torch.module:GPT.layers.N": (4, 48), "torch:backward": (2, 48),
                    "torch:optimizer": (2, 34)})
PY
