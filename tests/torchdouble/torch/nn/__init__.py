# torch.nn of the test double (tests/torchdouble/torch/__init__.py): only
# Module and Parameter, which memtrace_hooks.py needs.
from .parameter import Parameter  # noqa: F401
from .modules.module import Module  # noqa: F401
from . import modules  # noqa: F401
