# torch.nn.modules.module of the test double: Module with its children,
# parameters, named_modules(), parameters() and the global forward hooks,
# as pytorch/pytorch torch/nn/modules/module.py @v2.4.0 has them:
# register_module_forward_pre_hook(hook(module, input) -> None or input),
# register_module_forward_hook(hook(module, input, output) -> None or
# output, *, always_call=False), run by _call_impl around forward (global
# hooks first); a hook registered with always_call=True also runs when
# forward raises (output None), then the exception goes on.
# TORCHDOUBLE_VERSION=1.13 answers as 1.13: no always_call (it came with
# 2.1). Hooks are kept in a dict by handle id; handle.remove() drops one.
# parameters() yields each Parameter once, the module's own before its
# children's, in named_modules() order (Module._named_members).
import itertools
import os

from ..parameter import Parameter

_OLD = os.environ.get("TORCHDOUBLE_VERSION", "") == "1.13"
_ids = itertools.count()
_global_forward_pre_hooks = {}
_global_forward_hooks = {}
_global_forward_hooks_always_called = set()


class RemovableHandle(object):
    def __init__(self, d):
        self.d, self.id = d, next(_ids)

    def remove(self):
        self.d.pop(self.id, None)
        _global_forward_hooks_always_called.discard(self.id)


def register_module_forward_pre_hook(hook):
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook, **kwargs):
    if _OLD and kwargs:
        raise TypeError("register_module_forward_hook() got an unexpected keyword argument '%s'"
                        % next(iter(kwargs)))
    h = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[h.id] = hook
    if kwargs.get("always_call"):
        _global_forward_hooks_always_called.add(h.id)
    return h


class Module(object):
    def __init__(self):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, Parameter):
            self._parameters[name] = value
        object.__setattr__(self, name, value)

    def named_modules(self, prefix=""):
        yield prefix, self
        for n, m in self._modules.items():
            yield from m.named_modules(prefix + "." + n if prefix else n)

    def parameters(self):
        seen = set()
        for _, m in self.named_modules():
            for p in m._parameters.values():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p

    def __call__(self, *args):
        for hook in list(_global_forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        try:
            out = self.forward(*args)
        except Exception:
            for hid, hook in list(_global_forward_hooks.items()):
                if hid in _global_forward_hooks_always_called:
                    hook(self, args, None)
            raise
        for hook in list(_global_forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out
