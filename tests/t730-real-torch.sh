#!/bin/sh
# t730-real-torch: real PyTorch (Debian's python3-torch, 1.13 built without
# CUDA; scripts/install-deps.sh installs it) under `memtrace run` is left
# as it would be without memtrace: a training loop with a fixed seed prints
# the same losses, a DataLoader with 2 worker processes the same sums, a
# program that fails the same traceback and exit status. The workers are
# traced children, each with its own trace, and the /dev/shm segments
# PyTorch passes batches through (/torch_PID_*) are in their traces and in
# the report's shared-memory section. memtrace's bootstrap says why there
# are no tensor events: one torch=off note with torch's own version, in the
# text report and the JSON's framework_off.
#
# Debian's torch is for Debian's interpreter, so the programs run under
# /usr/bin/python3 (PYTHON3=... overrides), not the python3 first on PATH
# (pyenv's, on this repository's machines), which the other tests use.
. "$(dirname "$0")/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
[ -x "$PY" ] || skip "no $PY"
"$PY" -c 'import torch' >/dev/null 2>&1 ||
	skip "torch cannot be imported by $PY (scripts/install-deps.sh installs python3-torch)"
cd "$T" || exit 1
version=$("$PY" -c 'import torch; print(torch.__version__)')

cat >train.py <<'PY'
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(256, 8)
y = x.sum(1, keepdim=True) + 0.1 * torch.randn(256, 1)
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step %2d loss %.8f" % (step, loss.item()))
PY
cat >loader.py <<'PY'
import torch
from torch.utils.data import DataLoader, Dataset

class Rows(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.full((1024,), float(i))

torch.manual_seed(0)
sums = [b.sum().item() for b in DataLoader(Rows(), batch_size=4, num_workers=2)]
print("loader: %d batches, sums %s" % (len(sums), sums))
PY
cat >fail.py <<'PY'
import torch
t = torch.arange(6.0).reshape(2, 3)
print("fail: sum %.1f" % t.sum().item())
t @ t   # 2x3 @ 2x3: a RuntimeError, exit status 1
PY
cat >status.py <<'PY'
import sys, torch
print("status: mean %.2f" % torch.ones(4).mean().item())
sys.exit(3)
PY

# same NAME WANT-RC: NAME.py plain and under memtrace (trace NAME.bin and,
# for children, NAME.PID.bin): the same stdout, stderr (less memtrace's
# own lines) and exit status, which is WANT-RC.
same() {
	"$PY" "$1.py" >"$1.out" 2>"$1.err"
	rc=$?
	expect_eq "$rc" "$2" "$1.py: exit status without memtrace"
	"$MEMTRACE" run --no-summary -o "$1.bin" -- "$PY" "$1.py" >"$1.mt.out" 2>"$1.mt.err"
	expect_eq "$?" "$rc" "$1.py: exit status under memtrace"
	cmp -s "$1.out" "$1.mt.out" || fail "$1.py: stdout differs under memtrace: $(diff "$1.out" "$1.mt.out" | head -n 10)"
	grep -v '^memtrace: ' "$1.mt.err" >"$1.mt.err2"
	cmp -s "$1.err" "$1.mt.err2" ||
		fail "$1.py: stderr differs under memtrace: $(diff "$1.err" "$1.mt.err2" | head -n 10)"
	[ -f "$1.bin" ] || fail "$1.py: no trace: $(cat "$1.mt.err")"
}
same train 0
same loader 0
same fail 1
same status 3
expect_eq "$(wc -l <train.out)" 20 "train.py: losses printed"
grep -q '^RuntimeError: ' fail.err || fail "fail.py: not the expected error: $(tail -n 3 fail.err)"

# The note, with torch's version: built without CUDA.
reason="torch $version built without CUDA (torch.version.cuda is None)"
"$MEMTRACE" report --no-db train.bin >train.txt || fail "report train.bin"
grep -qxF "note: pid $(sed -n 's/.*(pid \([0-9]*\),.*/\1/p' train.mt.err): PyTorch's tensors were not recorded: $reason" train.txt ||
	fail "the report does not say why there are no tensors: $(grep -i 'note\|torch' train.txt)"
"$MEMTRACE" report --no-db --json train.bin >train.json || fail "report --json train.bin"
expect_eq "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0].get("framework_off"))' train.json)" \
	"$reason" "JSON: framework_off"
expect_eq "$("$MEMTRACE" dump train.bin | grep -c '^fw_event ')" 0 "train.py: framework events"
# the failing program's trace says the same
"$MEMTRACE" report --no-db fail.bin | grep -qF "PyTorch's tensors were not recorded: $reason" ||
	fail "fail.py: no note in the report"

# The DataLoader: the parent and its 2 workers, each with its trace; the
# workers' batches went through /dev/shm segments PyTorch created
# (/torch_PID_*; the default file_descriptor strategy unlinks them at once).
root=$(sed -n 's/^memtrace: wrote loader\.bin (pid \([0-9]*\),.*/\1/p' loader.mt.err)
[ -n "$root" ] || fail "loader.py: no root pid in: $(cat loader.mt.err)"
workers=$(ls loader.*.bin 2>/dev/null | sed 's/^loader\.\([0-9]*\)\.bin$/\1/' | sort -n | tr '\n' ' ')
expect_eq "$(echo $workers | wc -w)" 2 "loader.py: worker traces ($workers)"
"$MEMTRACE" report --no-db loader*.bin >loader.txt || fail "report loader*.bin"
"$MEMTRACE" report --no-db --json loader*.bin >loader.json || fail "report --json loader*.bin"
python3 - loader.json "$root" $workers >procs.txt 2>&1 <<'PY' || fail "loader.py: processes in the JSON: $(cat procs.txt)"
import json, sys
root, workers = int(sys.argv[2]), sorted(int(w) for w in sys.argv[3:])
procs = {p["pid"]: p for p in json.load(open(sys.argv[1]))["processes"]}
assert sorted(procs) == sorted([root] + workers), "pids %s" % sorted(procs)
for w in workers:
    assert procs[w]["ppid"] == root, "worker %d: ppid %s" % (w, procs[w]["ppid"])
    assert procs[w]["ended"] == "_exit" and procs[w]["exit_status"] == 0, "worker %d: %s %s" % (
        w, procs[w]["ended"], procs[w]["exit_status"])
PY
sed -n '/^POSIX shared memory/,/^$/p' loader.txt >shm.txt
grep -q '^  segments created: 4 (0 named, 4 unlinked at once)$' shm.txt || fail "loader.py: shm counts: $(cat shm.txt)"
for w in $workers; do
	grep -q "^    pid $w: 2 created (0 named, 2 unlinked at once), peak [0-9.]* KiB, 0 present at exit (0 B)$" shm.txt ||
		fail "loader.py: worker $w in the shm section: $(cat shm.txt)"
	expect_eq "$("$MEMTRACE" dump "loader.$w.bin" | count "^shm .* op=open .* name=\"/torch_${w}_[0-9]+_[0-9]+\" .* err=0 " -)" 2 \
		"loader.py: worker $w's /torch_${w}_* segments"
done
exit 0
