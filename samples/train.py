#!/usr/bin/env python3
"""train.py - a small PyTorch training run on synthetic data (nothing is
downloaded), with the memory techniques users read about as flags, to watch
under memtrace:

    memtrace run -o train.bin -- python3 samples/train.py --checkpoint
    memtrace report train.bin

  --checkpoint           recompute activations in the backward pass
                         (torch.utils.checkpoint) instead of keeping them
  --amp                  autocast to bfloat16 (float16 with a GradScaler
                         where bfloat16 is not supported)
  --empty-cache          torch.cuda.empty_cache() after every epoch
  --expandable-segments  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  --async-allocator      PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
                         (every tensor is then a cudaMallocAsync memtrace sees)
  --workers N            a DataLoader with N worker processes
  --sharing-strategy S   how workers hand batches over: file_descriptor or
                         file_system (/dev/shm/torch_* files)

Evaluation after each epoch runs under torch.no_grad(). At the end the
script prints torch.cuda.max_memory_allocated() and max_memory_reserved()
of its device, one line each ("train.py: max_memory_reserved=N bytes ..."),
to compare with memtrace's peak.

Under torchrun (WORLD_SIZE > 1) each process trains on the GPU of its
LOCAL_RANK, wrapped in DistributedDataParallel (NCCL).

Without PyTorch, or without a CUDA GPU PyTorch can use, it exits with
status 1 and says which is missing.
"""
import argparse
import os
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="train.py",
        description="A small PyTorch training run on synthetic data, for memtrace.")
    p.add_argument("--checkpoint", action="store_true",
                   help="recompute activations in backward (torch.utils.checkpoint)")
    p.add_argument("--amp", action="store_true", help="automatic mixed precision")
    p.add_argument("--empty-cache", action="store_true",
                   help="torch.cuda.empty_cache() after every epoch")
    p.add_argument("--expandable-segments", action="store_true",
                   help="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    p.add_argument("--async-allocator", action="store_true",
                   help="PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync")
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="DataLoader worker processes (default 0: load in this process)")
    p.add_argument("--sharing-strategy", choices=["file_descriptor", "file_system"],
                   help="torch.multiprocessing sharing strategy for the workers' batches")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=20, help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--hidden", type=int, default=1024, help="width of every layer")
    p.add_argument("--layers", type=int, default=8, help="hidden layers")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--no-pin-memory", action="store_true",
                   help="do not pin the DataLoader's batches in host memory")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.expandable_segments and a.async_allocator:
        p.error("--expandable-segments and --async-allocator exclude each other "
                "(expandable segments belong to the native allocator)")
    if a.workers < 0 or a.epochs < 1 or a.steps < 1 or a.batch_size < 1 \
            or a.hidden < 1 or a.layers < 1 or a.classes < 2:
        p.error("sizes and counts must be positive (and --classes at least 2)")
    return a


def set_alloc_conf(args):
    """PyTorch reads PYTORCH_CUDA_ALLOC_CONF once, when CUDA initializes, so
    it is set here, before torch is even imported. A value the user set
    already is kept, with the flag's option appended. From PyTorch 2.9 the
    name PYTORCH_ALLOC_CONF wins over the old one when both are set, so
    both get the same value."""
    opt = None
    if args.expandable_segments:
        opt = "expandable_segments:True"
    elif args.async_allocator:
        opt = "backend:cudaMallocAsync"
    if opt:
        old = os.environ.get("PYTORCH_ALLOC_CONF", os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
        for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
            os.environ[name] = old + "," + opt if old else opt


class Batches:
    """Synthetic batches, the same for a given seed and index: a whole batch
    per item, so a worker hands over one batch per step. A map-style dataset
    at module level, so workers can unpickle it whatever the start method."""

    def __init__(self, n, seed, batch_size, hidden, classes):
        self.n, self.seed = n, seed
        self.batch_size, self.hidden, self.classes = batch_size, hidden, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch
        if i < 0 or i >= self.n:
            raise IndexError(i)
        g = torch.Generator().manual_seed(self.seed * 1000003 + i)
        x = torch.randn(self.batch_size, self.hidden, generator=g)
        y = torch.randint(0, self.classes, (self.batch_size,), generator=g)
        return x, y


def die(msg):
    print("train.py: " + msg, file=sys.stderr)
    sys.exit(1)


def main(argv):
    args = parse_args(argv)
    set_alloc_conf(args)
    try:
        import torch
        import torch.nn as nn
        import torch.utils.checkpoint
        from torch.utils.data import DataLoader
    except ImportError as e:
        die("PyTorch is not installed (%s); install it with 'pip install torch'" % e)
    if not torch.cuda.is_available():
        die("PyTorch %s sees no CUDA GPU (torch.cuda.is_available() is False)"
            % torch.__version__)
    if args.sharing_strategy:
        import torch.multiprocessing
        torch.multiprocessing.set_sharing_strategy(args.sharing_strategy)

    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if local_rank >= torch.cuda.device_count():
        die("LOCAL_RANK %d but only %d GPU(s)" % (local_rank, torch.cuda.device_count()))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    ddp = world > 1
    if ddp:
        import torch.distributed as dist
        dist.init_process_group("nccl")
    torch.manual_seed(args.seed)

    def loader(n, seed):
        kw = {}
        if args.workers > 0:
            kw["persistent_workers"] = False
        return DataLoader(Batches(n, seed, args.batch_size, args.hidden, args.classes), batch_size=None, shuffle=False,
                          num_workers=args.workers, pin_memory=not args.no_pin_memory, **kw)

    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.lin = nn.Linear(width, width)
            self.norm = nn.LayerNorm(width)

        def forward(self, x):
            return x + torch.nn.functional.gelu(self.lin(self.norm(x)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(Block(args.hidden) for _ in range(args.layers))
            self.head = nn.Linear(args.hidden, args.classes)

        def forward(self, x):
            for b in self.blocks:
                if args.checkpoint and self.training:
                    # Keeps only each block's input; recomputes the rest in backward.
                    x = torch.utils.checkpoint.checkpoint(b, x, use_reentrant=False)
                else:
                    x = b(x)
            return self.head(x)

    model = Net().to(device)
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    amp_dtype = None
    scaler = None
    if args.amp:
        amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if amp_dtype == torch.float16:
            try:
                scaler = torch.amp.GradScaler("cuda")
            except (AttributeError, TypeError):  # PyTorch < 2.3
                scaler = torch.cuda.amp.GradScaler()

    def autocast():
        if amp_dtype is None:
            return torch.autocast("cuda", enabled=False)
        return torch.autocast("cuda", dtype=amp_dtype)

    try:
        backend = torch.cuda.get_allocator_backend()
    except AttributeError:
        backend = "native"
    print("train.py: PyTorch %s, GPU %d (%s), allocator %s, PYTORCH_ALLOC_CONF=%s"
          % (torch.__version__, local_rank, torch.cuda.get_device_name(device), backend,
             os.environ.get("PYTORCH_ALLOC_CONF", "")), flush=True)

    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for x, y in loader(args.steps, args.seed + epoch):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss = loss_fn(model(x), y)
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            total += loss.item()  # .item(): keeping `loss` itself would keep its graph

        model.eval()
        correct = 0
        with torch.no_grad(), autocast():
            for x, y in loader(4, 10000 + epoch):
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(1) == y).sum().item()
        print("train.py: epoch %d: mean loss %.4f, eval accuracy %.3f"
              % (epoch + 1, total / args.steps, correct / (4.0 * args.batch_size)), flush=True)
        if args.empty_cache:
            torch.cuda.empty_cache()

    torch.cuda.synchronize(device)
    alloc = torch.cuda.max_memory_allocated(device)
    reserved = torch.cuda.max_memory_reserved(device)
    print("train.py: done in %.3f s" % (time.time() - t0))
    print("train.py: max_memory_allocated=%d bytes (%.1f MiB)" % (alloc, alloc / 2.0 ** 20))
    print("train.py: max_memory_reserved=%d bytes (%.1f MiB)" % (reserved, reserved / 2.0 ** 20))
    if ddp:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
