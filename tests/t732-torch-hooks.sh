#!/bin/sh
# t732-torch-hooks: PyTorch's steps, phases, modules and categories with no
# change to the program (python/memtrace_hooks.py), on the test double's
# training program tests/torchdouble/py-train.py: the exact range records
# (origin torch: "step N" START/END, phases forward/backward/optimizer,
# module paths of domain torch.module nested as the calls), the exact
# categories notes (addresses and sizes from the double's allocator, worked
# out below), the report's steps, the program's output unchanged, and
# nothing at all with MEMTRACE_TORCH_HOOKS=0.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/hookslib.sh"
command -v python3 >/dev/null || skip "no python3"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || skip "python3 older than 3.8"
cd "$T" || exit 1

# --- the output: without memtrace, traced, traced with the hooks off -------
pyd "$TRAIN" 2 >plain.out 2>plain.err || fail "py-train.py: $(cat plain.err)"
cat >want.out <<'OUT'
step 1: 2 activations, 0 after backward, 3 gradients, 3 states, allocated 38400
step 2: 2 activations, 0 after backward, 3 gradients, 3 states, allocated 38400
OUT
diff -u want.out plain.out || fail "py-train.py's own output"
mtd -o a.bin -- python3 "$TRAIN" 2 >a.out 2>a.err || fail "traced: $(cat a.err)"
diff -u plain.out a.out || fail "the output changed under memtrace"
MEMTRACE_TORCH_HOOKS=0 mtd -o off.bin -- python3 "$TRAIN" 2 >off.out 2>off.err ||
	fail "hooks off: $(cat off.err)"
diff -u plain.out off.out || fail "the output changed with the hooks off"
"$MEMTRACE" dump a.bin >a.dump || fail "dump a.bin"
"$MEMTRACE" dump off.bin >off.dump || fail "dump off.bin"

# --- the range records ------------------------------------------------------
# Each step: the step starts at its first phase (forward: the outermost
# module call, Net), the modules nest as Net.forward calls them, backward
# is loss.backward() (torch.autograd.backward), optimizer opt.step() (its
# global pre and post hooks); the step ends at the optimizer's post hook,
# after the categories note (below) taken there.
for n in 1 2; do
	cat <<EOS
start torch torch step $n id=$n
push torch torch forward
push torch torch.module Net
push torch torch.module Net.embed
pop torch torch.module
push torch torch.module Net.layers
push torch torch.module Net.layers.0
push torch torch.module Net.layers.0.attn
pop torch torch.module
pop torch torch.module
push torch torch.module Net.layers.1
push torch torch.module Net.layers.1.attn
pop torch torch.module
pop torch torch.module
pop torch torch.module
pop torch torch.module
pop torch torch
push torch torch backward
pop torch torch
push torch torch optimizer
pop torch torch
note categories=$n
end torch - id=$n
EOS
done >want.ranges
ranges a.dump >got.ranges
diff -u want.ranges got.ranges || fail "the range records"

# --- the categories notes ---------------------------------------------------
# The double's allocator (tests/torchdouble/torch/_allocator.py: requests of
# 1 MiB or less from the small pool's 2 MiB segments, sizes rounded up to
# 512, best fit by size then address, split, freed blocks merged with free
# neighbours); segment A = 0x500000000000, B = 0x500000200000 (simcuda).
# Construction: embed.weight A+0, layers.0.attn.weight A+0x1000,
# layers.1.attn.weight A+0x2000 (4096 each), scale A+0x3000 (512).
# Step 1: x A+0x3200 (16 B -> 512); layers.0's activation A+0x3400 (1 MiB),
# leaving 1035264 B in A, too few for layers.1's: segment B; the loss (512)
# takes the best fit, A's rest at A+0x103400; backward frees both
# activations (A+0x3400 free: 1 MiB; B free: 2 MiB) and the gradients take
# the smallest free block that fits, A's rest after the loss: A+0x103600,
# +0x104600, +0x105600; Adam's first step its state after them: A+0x106600,
# +0x107600, +0x108600.
# Step 2: zero_grad (set_to_none) frees the gradients, which merge with
# the freed x, loss and activation into [A+0x3200, A+0x106600); x takes
# A's rest after the state (the smallest block, A+0x109600); layers.0's
# activation A+0x3200 (leaving 13312 B at A+0x103200), layers.1's B again;
# the loss A+0x103200; backward frees the activations and the gradients
# take the 12800 B left after the loss: A+0x103400, +0x104400, +0x105400.
# New gradients at new addresses: a second note. parameters() lists the
# root's own parameter (scale, frozen, in no optimizer) first.
p="0:0x500000003000:512,0:0x500000000000:4096,0:0x500000001000:4096,0:0x500000002000:4096"
s="0:0x500000106600:4096,0:0x500000107600:4096,0:0x500000108600:4096"
cat >want.cat <<EOS
categories=1 | parameters=$p | gradients=0:0x500000103600:4096,0:0x500000104600:4096,0:0x500000105600:4096 | optimizer_state=$s
categories=2 | parameters=$p | gradients=0:0x500000103400:4096,0:0x500000104400:4096,0:0x500000105400:4096 | optimizer_state=$s
EOS
categories a.dump >got.cat
diff -u want.cat got.cat || fail "the categories notes"

# --- kept gradients: the same storages, the same tensors: one note ----------
# Step 2 and 3 keep the gradients (zero_grad(set_to_none=False)) and the
# state: nothing changed since step 1's note.
mtd -o keep.bin -- python3 "$TRAIN" 3 keep >keep.out 2>keep.err || fail "keep: $(cat keep.err)"
"$MEMTRACE" dump keep.bin >keep.dump || fail "dump keep.bin"
expect_eq "$(categories keep.dump | cut -d' ' -f1 | tr '\n' ' ')" "categories=1 " "keep: the notes"
expect_eq "$(ranges keep.dump | grep '^start' | tr '\n' ' ')" \
	"start torch torch step 1 id=1 start torch torch step 2 id=2 start torch torch step 3 id=3 " "keep: the steps"

# --- the same addresses, new blocks: a note at each step ---------------------
# zero_grad (set_to_none) frees the gradient (A+0x1000, after the
# parameter at A+0); the next one takes the same free block, so the same
# address, but it is another block, which the model must see named
# during its life.
cat >again.py <<'PY'
import torch
p = torch.nn.Parameter(torch.empty(1024, dtype=torch.float32, device="cuda"))


class SGD(torch.optim.Optimizer):
    def step(self):
        pass


opt = SGD([p], {})
for i in range(3):
    opt.zero_grad()
    p.grad = torch.empty(1024, dtype=torch.float32, device="cuda")
    opt.step()
    print("step %d: gradient at +0x%x" % (i + 1, p.grad.data_ptr() - p.data_ptr()))
PY
mtd -o again.bin -- python3 again.py >again.out 2>again.err || fail "again.py: $(cat again.err)"
printf 'step %d: gradient at +0x1000\n' 1 2 3 | diff -u - again.out || fail "again.py's output"
"$MEMTRACE" dump again.bin >again.dump || fail "dump again.bin"
for n in 1 2 3; do
	echo "categories=$n | parameters=0:0x500000000000:4096 | gradients=0:0x500000001000:4096 | optimizer_state="
done >want.again
categories again.dump | diff -u want.again - || fail "again.py: the categories notes"

# --- the report names the steps ---------------------------------------------
"$MEMTRACE" report --no-db a.bin >a.txt || fail "report"
grep -qxF "  steps: 2 instances of 'torch:step N'" a.txt || fail "the report's steps: $(sed -n '/^ranges/,/^$/p' a.txt)"
for r in "torch:forward " "torch:backward " "torch:optimizer " "torch.module:Net.layers.N.attn "; do
	grep -q "^  $r *[0-9]" a.txt || fail "the report has no range '$r': $(sed -n '/^ranges/,/^$/p' a.txt)"
done

# --- MEMTRACE_TORCH_HOOKS=0: no range record, no note ------------------------
expect_eq "$(count '^range ' off.dump)" 0 "hooks off: range records"
expect_eq "$(count 'categories=' off.dump)" 0 "hooks off: categories notes"
exit 0
