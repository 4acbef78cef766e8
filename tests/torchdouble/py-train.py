# py-train.py [STEPS [keep]] - a training-like program for memtrace's
# PyTorch hooks (python/memtrace_hooks.py), on the test double of torch
# over the simulated CUDA: a model of nested modules (Net: embed,
# layers.0 and layers.1, each a Block with an attn; Linear's weight is a
# 4096-byte parameter, Net.scale a frozen one of 512 bytes), a loss,
# backward, and an Adam-like optimizer whose state (one 4096-byte exp_avg
# per trained parameter) appears at its first step, STEPS (default 2)
# times. Each Block's forward keeps one 1 MiB activation until backward;
# backward makes each trained parameter's .grad (4096 bytes) when it has
# none; zero_grad() at each step's start drops them (set_to_none), or
# keeps them with "keep". Prints one line per step from the program's own
# figures, which memtrace must not change.
import functools
import sys

import torch

MiB = 1 << 20
F = torch.float32


class Linear(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n, dtype=F, device="cuda"))

    def forward(self, x):
        return x


class Block(torch.nn.Module):
    def __init__(self, acts):
        super().__init__()
        self.attn = Linear(1024)
        self.acts = acts

    def forward(self, x):
        self.acts.append(torch.empty(MiB, dtype=torch.uint8, device="cuda"))
        return self.attn(x)


class Layers(torch.nn.Module):
    def __init__(self, acts):
        super().__init__()
        setattr(self, "0", Block(acts))
        setattr(self, "1", Block(acts))

    def forward(self, x):
        return getattr(self, "1")(getattr(self, "0")(x))


class Net(torch.nn.Module):
    def __init__(self, acts):
        super().__init__()
        self.embed = Linear(1024)
        self.layers = Layers(acts)
        self.scale = torch.nn.Parameter(torch.empty(128, dtype=F, device="cuda"),
                                        requires_grad=False)

    def forward(self, x):
        return self.layers(self.embed(x))


class Adam(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.001})

    def step(self):
        for p in self.param_groups[0]["params"]:
            st = self.state[p]
            if not st:
                st["exp_avg"] = torch.empty(p.numel(), dtype=F, device="cuda")


def grads(acts, params):
    """The loss's backward: the activations go, each parameter's
    gradient comes."""
    acts.clear()
    for p in params:
        if p.grad is None:
            p.grad = torch.empty(p.numel(), dtype=F, device="cuda")


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    keep = sys.argv[2:] == ["keep"]
    acts = []
    net = Net(acts)
    trained = [p for p in net.parameters() if p.requires_grad]
    opt = Adam(trained)
    for i in range(steps):
        opt.zero_grad(set_to_none=not keep)
        x = torch.empty(16, dtype=torch.uint8, device="cuda")
        out = net(x)
        loss = torch.empty(1, dtype=F, device="cuda")
        loss._grad_fn = functools.partial(grads, acts, trained)
        n = len(acts)
        loss.backward()
        opt.step()
        print("step %d: %d activations, %d after backward, %d gradients, %d states, "
              "allocated %d" % (i + 1, n, len(acts), sum(p.grad is not None for p in trained),
                                len(opt.state), torch.cuda.memory_allocated()))
        del x, out, loss


if __name__ == "__main__":
    main()
