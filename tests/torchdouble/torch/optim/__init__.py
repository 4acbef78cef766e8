# torch.optim of the test double: only optimizer (memtrace_hooks.py).
from . import optimizer  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
