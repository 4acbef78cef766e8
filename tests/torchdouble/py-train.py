# py-train.py [STEPS] - a training-like program for memtrace's PyTorch
# hooks (python/memtrace_hooks.py), on the test double of torch over the
# simulated CUDA: a model of nested modules (Net: embed, layers.0 and
# layers.1, each a Block with an attn), a loss, backward, an optimizer
# step, STEPS (default 2) times. Each forward allocates one 1 MiB
# activation per Block; the loss's backward frees them. Prints one line
# per step from the program's own figures (unchanged by memtrace).
import sys

import torch

MiB = 1 << 20


class Attn(torch.nn.Module):
    def forward(self, x):
        return x


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attn()

    def forward(self, x):
        self.acts.append(torch.empty(MiB, dtype=torch.uint8, device="cuda"))
        return self.attn(x)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Attn()
        self.layers = Layers()

    def forward(self, x):
        return self.layers(self.embed(x))


class Layers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        setattr(self, "0", Block())
        setattr(self, "1", Block())

    def forward(self, x):
        return getattr(self, "1")(getattr(self, "0")(x))


class SGD(torch.optim.Optimizer):
    def __init__(self):
        self.steps = 0

    def step(self):
        self.steps += 1


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    acts = []
    net = Net()
    for b in (getattr(net.layers, "0"), getattr(net.layers, "1")):
        b.acts = acts
    opt = SGD()
    for i in range(steps):
        loss = net(torch.empty(16, dtype=torch.uint8, device="cuda"))
        loss._grad_fn = acts.clear
        n = len(acts)
        loss.backward()
        opt.step()
        print("step %d: %d activations, %d after backward, optimizer steps %d"
              % (i + 1, n, len(acts), opt.steps))


if __name__ == "__main__":
    main()
