# memtrace_hooks.py - PyTorch's steps, phases and modules as memtrace
# ranges (docs/torch.md, "Steps, phases and modules"), with no change to
# the program: memtrace_torch.py calls install(torch) right after the
# program's own `import torch`, when memtrace's library is in the process
# (MEMTRACE_TORCH_HOOKS=0: nothing is installed).
#
#   modules    the global hooks of torch.nn.modules.module,
#              register_module_forward_pre_hook(hook(module, input)) and
#              register_module_forward_hook(hook(module, input, output))
#              (pytorch/pytorch torch/nn/modules/module.py; 1.13 has both):
#              a PUSH/POP of domain "torch.module" around each forward,
#              named by the module's path from the root module called
#              ("GPT.layers.3.attn": the root's class name, then its
#              named_modules() name); the outermost one on a thread is
#              also the phase "forward" of domain "torch". Both hooks
#              return None, so input and output are the program's own.
#              Global full backward hooks are NOT registered: they wrap
#              each module's inputs and outputs in BackwardHookFunction
#              (module.py, _call_impl), which changes the autograd graph
#              the program builds (new nodes, outputs that are views).
#   backward   torch.autograd.backward, which Tensor.backward calls
#              through the module attribute (torch/_tensor.py), wrapped:
#              the phase "backward" pushed before and popped after.
#   optimizer  torch.optim.optimizer.register_optimizer_step_pre_hook and
#              register_optimizer_step_post_hook (hook(optimizer, args,
#              kwargs); torch/optim/optimizer.py, 2.0 and later): the
#              phase "optimizer". Without them (1.13) the post hook is
#              Optimizer._optimizer_step_code, the no-op every step's
#              wrapper calls after the step (_hook_for_profile), wrapped:
#              steps end there, and there is no "optimizer" phase.
#   steps      "step N" (N from 1), START/END of domain "torch": a step
#              ends at an optimizer step's post hook, the next starts at
#              the next phase that begins.
#
# Every hook catches everything (nothing raises into the program) and
# keeps no tensor: the root's names are cached by id() beside a weakref
# to the root, so a model is never kept alive by memtrace.
import os
import threading
import weakref

_PUSH, _POP, _START, _END = 1, 2, 3, 4
_ORIGIN_TORCH = 5       # MT_ORIGIN_TORCH of include/memtrace/trace-format.h
_D_TORCH, _D_MODULE = b"torch", b"torch.module"


class _Hooks(object):
    def __init__(self, record):
        self.record = record        # memtrace.py's _record-like raw call
        self.tls = threading.local()
        self.lock = threading.Lock()
        self.step = 0
        self.rid = 0
        self.names = {}             # id(root) -> (weakref(root), {id(m): path})

    def stack(self):
        s = getattr(self.tls, "s", None)
        if s is None:
            s = self.tls.s = []
        return s

    def phase_begins(self, name):
        with self.lock:
            if not self.rid:
                self.step += 1
                self.rid = self.record(_START, _D_TORCH, ("step %d" % self.step).encode(), 0)
        self.record(_PUSH, _D_TORCH, name, 0)

    def step_ends(self):
        with self.lock:
            rid, self.rid = self.rid, 0
        if rid:
            self.record(_END, None, None, rid)

    def path(self, root, m):
        ent = self.names.get(id(root))
        if ent is None or ent[0]() is not root:
            paths = {}
            base = type(root).__name__
            for n, sub in root.named_modules():
                paths[id(sub)] = base + "." + n if n else base
            ent = self.names[id(root)] = (weakref.ref(root), paths)
        p = ent[1].get(id(m))
        return p if p is not None else type(m).__name__

    def pre(self, module, inputs):
        try:
            s = self.stack()
            if not s:
                self.phase_begins(b"forward")
                root = module
            else:
                root = s[0]()
            s.append(weakref.ref(module))
            self.record(_PUSH, _D_MODULE, self.path(root, module).encode("utf-8", "backslashreplace"), 0)
        except Exception:
            pass

    def post(self, module, inputs, output):
        try:
            s = self.stack()
            if not s:
                return
            s.pop()
            self.record(_POP, _D_MODULE, None, 0)
            if not s:
                self.record(_POP, _D_TORCH, None, 0)
        except Exception:
            pass

    def opt_pre(self, opt, args, kwargs):
        try:
            self.phase_begins(b"optimizer")
        except Exception:
            pass

    def opt_post(self, opt, args, kwargs):
        try:
            self.record(_POP, _D_TORCH, None, 0)
            self.step_ends()
        except Exception:
            pass


def _wrap_backward(autograd, h):
    orig = autograd.backward

    def backward(*args, **kwargs):
        try:
            h.phase_begins(b"backward")
        except Exception:
            pass
        try:
            return orig(*args, **kwargs)
        finally:
            try:
                h.record(_POP, _D_TORCH, None, 0)
            except Exception:
                pass

    for a in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(backward, a, getattr(orig, a))
        except Exception:
            pass
    backward.__wrapped__ = orig
    autograd.backward = backward


def _wrap_step_code(optimizer_cls, h):
    orig = optimizer_cls._optimizer_step_code

    def _optimizer_step_code(self):
        try:
            h.step_ends()
        except Exception:
            pass
        return orig(self)

    optimizer_cls._optimizer_step_code = _optimizer_step_code


def install(torch, record):
    """Registers the hooks on torch; record(op, domain, name, rid) -> rid
    is the range entry point."""
    if os.environ.get("MEMTRACE_TORCH_HOOKS", "1") == "0":
        return
    h = _Hooks(record)
    mm = torch.nn.modules.module
    mm.register_module_forward_pre_hook(h.pre)
    mm.register_module_forward_hook(h.post)
    _wrap_backward(torch.autograd, h)
    om = torch.optim.optimizer
    if hasattr(om, "register_optimizer_step_post_hook"):
        om.register_optimizer_step_pre_hook(h.opt_pre)
        om.register_optimizer_step_post_hook(h.opt_post)
    elif hasattr(om.Optimizer, "_optimizer_step_code"):
        _wrap_step_code(om.Optimizer, h)
