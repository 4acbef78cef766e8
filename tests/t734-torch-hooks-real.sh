#!/bin/sh
# t734-torch-hooks-real: the PyTorch hooks (python/memtrace_hooks.py) on
# real PyTorch (Debian's python3-torch, 1.13, built without CUDA; see
# t730): a training loop with a fixed seed (nested modules in a ModuleList,
# an in-place ReLU, Adam) prints the same losses without memtrace, under
# memtrace and with MEMTRACE_TORCH_HOOKS=0, and its trace holds the steps,
# phases and module paths: 1.13 has the global forward hooks but neither
# always_call nor the optimizer step hooks, so each step ends at
# Optimizer._optimizer_step_code (inside opt.step()) and there is no
# "optimizer" phase; no CUDA, so no categories notes.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/hookslib.sh"
PY=${PYTHON3:-/usr/bin/python3}
[ -x "$PY" ] || skip "no $PY"
"$PY" -c 'import torch' >/dev/null 2>&1 ||
	skip "torch cannot be imported by $PY (scripts/install-deps.sh installs python3-torch)"
cd "$T" || exit 1

cat >train.py <<'PY'
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.Linear(8, 8)
        self.act = torch.nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.attn(x)) + x


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x):
        for b in self.layers:
            x = b(x)
        return self.head(x)


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(64, 8)
y = x.sum(1, keepdim=True)
for step in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step %d loss %.8f" % (step, loss.item()))
print("weights %.8f" % sum(p.sum().item() for p in model.parameters()))
PY
"$PY" train.py >plain.out 2>plain.err || fail "train.py: $(cat plain.err)"
expect_eq "$(wc -l <plain.out)" 4 "train.py's lines"
for mode in on off; do
	if [ $mode = on ]; then h=1; else h=0; fi
	MEMTRACE_TORCH_HOOKS=$h "$MEMTRACE" run --no-summary -o $mode.bin -- "$PY" train.py >$mode.out 2>$mode.err ||
		fail "$mode: $(cat $mode.err)"
	cmp -s plain.out $mode.out || fail "hooks $mode: the output changed: $(diff plain.out $mode.out)"
	grep -v '^memtrace: ' $mode.err | cmp -s plain.err - || fail "hooks $mode: stderr changed: $(cat $mode.err)"
	"$MEMTRACE" dump $mode.bin >$mode.dump || fail "dump $mode.bin"
done

for n in 1 2 3; do
	echo "start torch torch step $n id=$n"
	echo "push torch torch forward"
	echo "push torch torch.module Net"
	for l in 0 1; do
		cat <<EOS
push torch torch.module Net.layers.$l
push torch torch.module Net.layers.$l.attn
pop torch torch.module
push torch torch.module Net.layers.$l.act
pop torch torch.module
pop torch torch.module
EOS
	done
	cat <<EOS
push torch torch.module Net.head
pop torch torch.module
pop torch torch.module
pop torch torch
push torch torch backward
pop torch torch
end torch - id=$n
EOS
done >want.ranges
ranges on.dump >got.ranges
diff -u want.ranges got.ranges || fail "the range records"
expect_eq "$(count '^range ' off.dump)" 0 "hooks off: range records"
"$MEMTRACE" report --no-db on.bin >on.txt || fail "report"
grep -qxF "  steps: 3 instances of 'torch:step N'" on.txt || fail "the report's steps: $(sed -n '/^ranges/,/^$/p' on.txt)"
exit 0
