# torch.optim.optimizer of the test double: Optimizer(params, defaults)
# with param_groups, state (a defaultdict(dict) keyed by parameter) and
# zero_grad(set_to_none=True), and the global step hooks of
# pytorch/pytorch torch/optim/optimizer.py @v2.4.0,
# register_optimizer_step_pre_hook(hook(optimizer, args, kwargs)) and
# register_optimizer_step_post_hook(hook(optimizer, args, kwargs)), run by
# the wrapper every Optimizer subclass's step gets (profile_hook_step):
# pre hooks, step, _optimizer_step_code(), post hooks.
# TORCHDOUBLE_VERSION=1.13 answers as 1.13: no global hooks, only the no-op
# _optimizer_step_code after each step (_hook_for_profile in 1.13).
# zero_grad(set_to_none=False) keeps the gradients (the double's tensors
# hold no values to zero).
import collections
import functools
import os

_OLD = os.environ.get("TORCHDOUBLE_VERSION", "") == "1.13"
_global_optimizer_pre_hooks = []
_global_optimizer_post_hooks = []


if not _OLD:
    def register_optimizer_step_pre_hook(hook):
        _global_optimizer_pre_hooks.append(hook)

    def register_optimizer_step_post_hook(hook):
        _global_optimizer_post_hooks.append(hook)


class Optimizer(object):
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = collections.defaultdict(dict)
        self.param_groups = [dict(defaults, params=list(params))]

    def zero_grad(self, set_to_none=True):
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        step = cls.step

        @functools.wraps(step)
        def wrapper(self, *args, **kwargs):
            for h in list(_global_optimizer_pre_hooks):
                h(self, args, kwargs)
            out = step(self, *args, **kwargs)
            self._optimizer_step_code()
            for h in list(_global_optimizer_post_hooks):
                h(self, args, kwargs)
            return out
        cls.step = wrapper

    def _optimizer_step_code(self):
        pass
