# bench/torch-hooks.py calls|steps N [PARAMS] - the work whose cost
# memtrace's PyTorch hooks (python/memtrace_hooks.py) add to, on whatever
# torch is first on the path (the test double over the simulated CUDA, or
# real PyTorch on the CPU); bench/torch-hooks.sh runs it with and without
# them. Prints "cpu_s=S count=N", S the process CPU time of the loop only.
#   calls   N forwards of a model of 8 blocks of 2 leaf modules that do
#           nothing (25 module calls a forward: the root, 8 blocks, 16
#           leaves); count = module calls
#   steps   N training steps of a model with PARAMS (default 100)
#           parameters of 4 KiB (one module call, a backward that makes
#           the gradients, an optimizer step), zero_grad(set_to_none) at
#           each step's start, so that on CUDA every step writes a
#           categories note; count = steps
import sys
import time

import torch

what, n = sys.argv[1], int(sys.argv[2])
nparams = int(sys.argv[3]) if len(sys.argv) > 3 else 100
dev = "cuda" if hasattr(torch, "_allocator") else "cpu"     # the double is CUDA only


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = Leaf()

    def forward(self, x):
        return self.b(self.a(x))


class Net(torch.nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        for i, b in enumerate(blocks):
            setattr(self, "b%d" % i, b)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


class Params(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        for i in range(k):
            setattr(self, "w%d" % i, torch.nn.Parameter(torch.empty(1024, dtype=torch.float32,
                                                                     device=dev)))

    def forward(self, x):
        return x


class SGD(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.1})

    def step(self, closure=None):
        return None


x = torch.empty(16, dtype=torch.float32, device=dev)
if what == "calls":
    net = Net([Block() for _ in range(8)])
    t0 = time.process_time()
    for _ in range(n):
        net(x)
    cpu = time.process_time() - t0
    count = 25 * n
else:
    model = Params(nparams)
    params = list(model.parameters())
    opt = SGD(params)
    t0 = time.process_time()
    for _ in range(n):
        opt.zero_grad(set_to_none=True)
        model(x)
        loss = torch.empty(1, dtype=torch.float32, device=dev)
        if dev == "cuda":
            loss._grad_fn = lambda: [setattr(p, "grad", torch.empty(1024, dtype=torch.float32,
                                                                    device=dev)) for p in params]
        else:
            loss.requires_grad_(True)
            for p in params:
                p.grad = torch.empty(1024)
        torch.autograd.backward(loss) if dev == "cuda" else torch.autograd.backward(
            loss, torch.ones(1))
        opt.step()
    cpu = time.process_time() - t0
    count = n
print("cpu_s=%.6f count=%d" % (cpu, count))
