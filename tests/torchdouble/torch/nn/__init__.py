# torch.nn of the test double (tests/torchdouble/torch/__init__.py): only
# Module, which memtrace_hooks.py's module hooks need.
from .modules.module import Module  # noqa: F401
from . import modules  # noqa: F401
