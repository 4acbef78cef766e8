# torch.nn.modules.module of the test double: Module with its children,
# named_modules() and the global forward hooks, as
# pytorch/pytorch torch/nn/modules/module.py @v2.4.0 has them:
# register_module_forward_pre_hook(hook(module, input) -> None or input),
# register_module_forward_hook(hook(module, input, output) -> None or
# output), run by _call_impl around forward (global hooks first). Hooks
# are kept in a dict by handle id; handle.remove() drops one.
import itertools

_ids = itertools.count()
_global_forward_pre_hooks = {}
_global_forward_hooks = {}


class RemovableHandle(object):
    def __init__(self, d):
        self.d, self.id = d, next(_ids)

    def remove(self):
        self.d.pop(self.id, None)


def register_module_forward_pre_hook(hook):
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook):
    h = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[h.id] = hook
    return h


class Module(object):
    def __init__(self):
        object.__setattr__(self, "_modules", {})

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def named_modules(self, prefix=""):
        yield prefix, self
        for n, m in self._modules.items():
            yield from m.named_modules(prefix + "." + n if prefix else n)

    def __call__(self, *args):
        for hook in list(_global_forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        out = self.forward(*args)
        for hook in list(_global_forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out
