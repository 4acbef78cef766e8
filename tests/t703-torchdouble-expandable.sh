#!/bin/sh
# t703-torchdouble-expandable: expandable_segments:True on the double,
# against PyTorch @001074d's rules worked out by hand: one virtual
# reservation per stream and pool (cuMemAddressReserve), pages of 20 MiB
# (large pool) and 2 MiB (small pool) mapped as needed (segment_map), a
# block spanning two maps, splitting at a remainder >= 512 B, inactive split
# left out for expandable blocks, snapshot segments with is_expandable, and
# empty_cache unmapping the free pages (segment_unmap) and giving the
# reservation back; the driver calls themselves in the simulator's log.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
MiB=1048576
pyd() { (cd "$T" && PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"); }

# SIMCUDA_MEM default (80 GiB): each reservation is 80 GiB * 9/8 = 90 GiB,
# in whole pages.
#   a 5 MiB   large pool: a new large reservation at B; map page 0
#             (segment_map B 20 MiB); split (15 MiB left >= 512)
#   b 4 B     small pool: a new small reservation at B + 90 GiB; map one
#             2 MiB page; split (2 MiB - 512 left)
#   c 30 MiB  the free 15 MiB block is too small; find_expandable_block
#             starts from it (free, just before the unmapped rest): map
#             page 1 (segment_map B+20 MiB 20 MiB), merged into one 35 MiB
#             block at B+5 MiB; c takes 30 MiB of it, spanning both pages,
#             split (5 MiB left)
#   snapshot: large segment B, 40 MiB: 5 MiB allocated, 30 MiB allocated,
#             5 MiB inactive; small segment B+90 GiB, 2 MiB: 512 allocated,
#             2096640 inactive; both is_expandable
#   del a, c: one free 40 MiB block; inactive split stays 0 (expandable)
#   empty_cache: the 40 MiB are whole pages: segment_unmap B 40 MiB, the
#             reservation is all unmapped and freed (cuMemAddressFree); the
#             small page holds b: nothing unmapped there
#   reserved peak 20 + 2 + 20 = 42 MiB = 44040192; then 2 MiB
#   allocated peak 5 MiB + 512 + 30 MiB = 36700672
#   requested peak 5 MiB + 4 + 30 MiB = 36700164
#   segment count 0 (map_block counts reserved bytes, not segments)
cat >"$T/exp.py" <<'PY'
import torch
MiB = 1 << 20
torch.cuda.memory._record_memory_history(max_entries=1000)
a = torch.empty(5 * MiB, dtype=torch.uint8, device="cuda")
b = torch.empty(4, dtype=torch.uint8, device="cuda")
c = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda")
B = a.data_ptr()
print("c at B+%d MiB" % ((c.data_ptr() - B) // MiB))
for s in torch.cuda.memory._snapshot()["segments"]:
    print("segment B+%d MiB %d %s expandable=%s:" % ((s["address"] - B) // MiB, s["total_size"],
          s["segment_type"], s["is_expandable"]),
          " ".join("%d/%s" % (x["size"], x["state"]) for x in s["blocks"]))
del a, c
s = torch.cuda.memory_stats()
print("inactive split", s["inactive_split_bytes.all.current"], s["inactive_split.all.current"])
torch.cuda.empty_cache()
s = torch.cuda.memory_stats()
for k in ("allocated_bytes.all.peak", "requested_bytes.all.peak", "reserved_bytes.all.peak",
          "reserved_bytes.all.current", "segment.all.current", "num_device_alloc", "num_device_free"):
    print(k, s[k])
for e in torch.cuda.memory._snapshot()["device_traces"][0]:
    if e["action"].startswith("segment"):
        print(e["action"], "B+%d MiB" % ((e["addr"] - B) // MiB), e["size"])
PY
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True pyd exp.py >"$T/out" 2>"$T/err" ||
	fail "exp.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
c at B+5 MiB
segment B+0 MiB 41943040 large expandable=True: 5242880/active_allocated 31457280/active_allocated 5242880/inactive
segment B+92160 MiB 2097152 small expandable=True: 512/active_allocated 2096640/inactive
inactive split 0 0
allocated_bytes.all.peak 36700672
requested_bytes.all.peak 36700164
reserved_bytes.all.peak 44040192
reserved_bytes.all.current 2097152
segment.all.current 0
num_device_alloc 3
num_device_free 1
segment_map B+0 MiB 20971520
segment_map B+92160 MiB 2097152
segment_map B+20 MiB 20971520
segment_unmap B+0 MiB 41943040
EOF
diff -u "$T/want" "$T/out" || fail "expandable segments"

# The driver calls: two reservations of 90 GiB, three pages created and
# mapped (20, 2, 20 MiB), two unmapped and released, one reservation freed;
# no cudaMalloc at all.
L=$T/calls.log
expect_eq "$(awk '$1 == "alloc" && / kind=vmm_reserve / { sub(/.* size=/, "size="); sub(/ .*/, ""); print }' "$L" | tr '\n' ' ')" \
	"size=96636764160 size=96636764160 " "reservations"
expect_eq "$(awk '$1 == "alloc" && / kind=vmm_phys / { sub(/.* size=/, "size="); sub(/ .*/, ""); print }' "$L" | tr '\n' ' ')" \
	"size=20971520 size=2097152 size=20971520 " "cuMemCreate pages"
expect_eq "$(grep -c 'fn=cuMemMap ' "$L")" 3 "cuMemMap calls"
expect_eq "$(grep -c 'fn=cuMemUnmap ' "$L")" 2 "cuMemUnmap calls"
expect_eq "$(grep -c 'fn=cuMemAddressFree ' "$L")" 1 "cuMemAddressFree calls"
expect_eq "$(grep -c ' kind=device ' "$L")" 0 "cudaMalloc/cudaFree calls"

# At an OOM the free pages are unmapped (release_cached_blocks), and the
# retry maps at the lowest address that fits. 300M + 60M leaves 60 MiB:
#   x 20 MiB  page 0 (segment_map B 20 MiB), no remainder to split
#   y 20 MiB  page 1 (segment_map B+20 MiB)
#   del x     a free, mapped 20 MiB block at B
#   z 40 MiB  no free block fits; the lowest unmapped range with room is
#             B+40 MiB (the free block at B is followed by y); mapping pages
#             2 and 3 fails at page 3 (cuMemCreate out of memory, page 2
#             released again); no max_split_size; release_cached_blocks
#             unmaps the free page 0 (segment_unmap B 20 MiB); the retry
#             (num_alloc_retries 1): B's 20 MiB unmapped range is followed by
#             y, too small, so pages 2-3 again, mapped now in one call:
#             segment_map B+40 MiB 40 MiB
#   reserved 20 (y) + 40 (z) = 60 MiB = 62914560
cat >"$T/oom.py" <<'PY'
import torch
MiB = 1 << 20
torch.cuda.memory._record_memory_history(max_entries=1000)
x = torch.empty(20 * MiB, dtype=torch.uint8, device="cuda")
B = x.data_ptr()
y = torch.empty(20 * MiB, dtype=torch.uint8, device="cuda")
del x
z = torch.empty(40 * MiB, dtype=torch.uint8, device="cuda")
s = torch.cuda.memory_stats()
print("z at B+%d MiB retries=%d reserved=%d" % ((z.data_ptr() - B) // MiB, s["num_alloc_retries"],
      s["reserved_bytes.all.current"]))
for e in torch.cuda.memory._snapshot()["device_traces"][0]:
    if e["action"].startswith("segment"):
        print(e["action"], "B+%d MiB" % ((e["addr"] - B) // MiB), e["size"])
PY
SIMCUDA_MEM=360M PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True pyd oom.py >"$T/out" 2>"$T/err" ||
	fail "oom.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
z at B+40 MiB retries=1 reserved=62914560
segment_map B+0 MiB 20971520
segment_map B+20 MiB 20971520
segment_unmap B+0 MiB 20971520
segment_map B+40 MiB 41943040
EOF
diff -u "$T/want" "$T/out" || fail "expandable segments at an OOM retry"
