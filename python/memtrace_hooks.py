# memtrace_hooks.py - PyTorch's steps, phases, modules and memory
# categories as memtrace records (docs/torch.md, "Steps, phases, modules
# and categories"), with no change to the program: memtrace_torch.py calls
# install(torch, info) right after the program's own `import torch`, when
# memtrace's library is in the process (MEMTRACE_TORCH_HOOKS=0: nothing is
# installed). Ranges go through memtrace.py's entry point (origin
# "torch"), category notes through memtrace_fw_info.
#
#   modules    the global hooks of torch.nn.modules.module,
#              register_module_forward_pre_hook(hook(module, input)) and
#              register_module_forward_hook(hook(module, input, output))
#              (pytorch/pytorch torch/nn/modules/module.py @v2.4.0; 1.13
#              has both), the latter with always_call=True where it exists
#              (2.1 and later: it also runs when forward raises; before,
#              a forward that raised is closed at the thread's next
#              backward or optimizer step, or next call of its root): a
#              PUSH/POP of domain "torch.module" around each forward,
#              named by the module's path from the root module called
#              ("GPT.layers.3.attn": the root's class name, then its
#              named_modules() name); the outermost one on a thread is
#              also the phase "forward" of domain "torch". Both hooks
#              return None, so input and output are the program's own.
#              Global full backward hooks are NOT registered: _call_impl
#              then runs each module's inputs and outputs through
#              BackwardHookFunction (torch/utils/hooks.py, BackwardHook),
#              which changes the autograd graph the program builds (new
#              nodes, outputs that are views: an in-place op on them
#              raises, pytorch#61519).
#   backward   torch.autograd.backward, which Tensor.backward calls
#              through the module attribute (torch/_tensor.py), wrapped:
#              the phase "backward" pushed before and popped after.
#   optimizer  torch.optim.optimizer.register_optimizer_step_pre_hook and
#              register_optimizer_step_post_hook (hook(optimizer, args,
#              kwargs); torch/optim/optimizer.py @v2.4.0, 2.0 and later):
#              the phase "optimizer". Without them (1.13) the post hook is
#              Optimizer._optimizer_step_code, the no-op every step's
#              wrapper calls after the step (_hook_for_profile), wrapped:
#              steps end there, and there is no "optimizer" phase.
#   steps      "step N" (N from 1), START/END of domain "torch": a step
#              ends at an optimizer step's post hook, the next starts at
#              the next phase that begins.
#   categories at an optimizer step's post hook, once CUDA is initialized:
#              the CUDA storages (data_ptr, nbytes) of the parameters of
#              the root modules seen and of the optimizer, of their .grad,
#              and of the optimizer's state, as one fw_info note
#              (categories=STEP, parameters=, gradients=, optimizer_state=)
#              when they changed since the last note: another address or
#              size, or a tensor of the last note that died (zero_grad's
#              set_to_none frees gradients that backward allocates again,
#              often at the same addresses: new blocks the model must see
#              named during their lives).
#
# Every hook catches everything (nothing raises into the program) and
# keeps no tensor and no module alive: the roots and the last note's
# tensors are held by weakref, module paths by id() beside their root.
import os
import sys
import threading
import weakref

import memtrace

_D_TORCH, _D_MODULE = b"torch", b"torch.module"
_Z = None           # c_uint64(0), made by install()
_PUSH, _POP, _ORIGIN = memtrace._PUSH, memtrace._POP, memtrace.ORIGIN_TORCH


def _record(op, domain, name=None, rid=0):
    return memtrace._record(op, memtrace.ORIGIN_TORCH, domain, name, rid)[1]


def _raw_entry():
    """memtrace_range_record without argtypes, for the pushes and pops of
    every module call: half the cost of memtrace.py's checked binding
    (0.75 against 1.6 us a push and pop). Every argument is then passed as
    its C type: op and origin ints, bytes or None (NULL), the id a
    c_uint64 (see _Z), out None (NULL: the recorder then writes none)."""
    import ctypes
    f = ctypes.CDLL(None).memtrace_range_record
    f.restype = ctypes.c_int
    return f


class _Hooks(object):
    def __init__(self, torch, info):
        self.torch = torch
        self.info = info            # memtrace_torch's _Lib.info, lines -> note
        self.tls = threading.local()
        self.lock = threading.Lock()
        self.exact = True           # forward hooks run when forward raises
        self.step = 0
        self.rid = 0                # the open step's range id (0: none)
        self.roots = {}             # id(root) -> (weakref(root), {id(m): path bytes})
        self.fn = _raw_entry()      # memtrace_range_record for push and pop
        self.noted = None           # the last categories note's lists
        self.noted_refs = ()        # weakrefs to the tensors it named

    def stack(self):
        s = getattr(self.tls, "s", None)
        if s is None:
            s = self.tls.s = []
        return s

    def settle(self, again=None):
        """Before always_call (2.1), a forward that raised never runs its
        forward hook: its ranges are closed here, at this thread's next
        backward or optimizer step, or when the root it began with is
        called again (again: the module being called)."""
        s = self.stack()
        if self.exact or not s:
            return
        if again is not None:
            root = s[0][0]()
            if root is not None and root is not again:
                return      # a call inside the forward under way
        while len(s) > 1:
            s.pop()
            _record(memtrace._POP, _D_MODULE)
        s.pop()
        _record(memtrace._POP, _D_TORCH)

    def phase_begins(self, name):
        if name != b"forward":
            self.settle()
        with self.lock:
            if not self.rid:
                self.step += 1
                self.rid = _record(memtrace._START, _D_TORCH, "step %d" % self.step)
        _record(memtrace._PUSH, _D_TORCH, name)

    def step_ends(self, opt):
        self.settle()
        with self.lock:
            rid, self.rid = self.rid, 0
            step = self.step
        try:
            self.note_categories(opt, step)
        except Exception:
            pass
        if rid:
            _record(memtrace._END, None, None, rid)

    def root(self, module):
        """The entry of a root module: (weakref, {id(m): path bytes})."""
        ent = self.roots.get(id(module))
        if ent is None or ent[0]() is not module:
            ent = self.roots[id(module)] = (weakref.ref(module), {})
            self.name_all(ent)
        return ent

    @staticmethod
    def name_all(ent):
        """(Re)names the root's modules; a root whose named_modules()
        fails leaves its modules to their class names."""
        root = ent[0]()
        try:
            base = type(root).__name__
            ent[1].update((id(sub), memtrace._b(base + "." + n if n else base))
                          for n, sub in root.named_modules())
        except Exception:
            pass

    def name(self, ent, m):
        """m's path from the root: a module added since is named again,
        once; else its class name."""
        self.name_all(ent)
        return ent[1].setdefault(id(m), memtrace._b(type(m).__name__))

    def pre(self, module, inputs):
        try:
            if not self.exact:
                self.settle(module)
            s = getattr(self.tls, "s", None) or self.stack()
            if not s:
                s.append(self.root(module))
                self.phase_begins(b"forward")
            s.append(None)
            name = s[0][1].get(id(module))
            self.fn(_PUSH, _ORIGIN, _D_MODULE,
                    name if name is not None else self.name(s[0], module), _Z, None)
        except Exception:
            pass

    def post(self, module, inputs, output):
        try:
            s = getattr(self.tls, "s", ())
            if len(s) < 2:
                return
            s.pop()
            self.fn(_POP, _ORIGIN, _D_MODULE, None, _Z, None)
            if len(s) == 1:
                s.pop()
                self.fn(_POP, _ORIGIN, _D_TORCH, None, _Z, None)
        except Exception:
            pass

    def opt_pre(self, opt, args, kwargs):
        try:
            self.phase_begins(b"optimizer")
        except Exception:
            pass

    def opt_post(self, opt, args, kwargs):
        try:
            _record(memtrace._POP, _D_TORCH)
            self.step_ends(opt)
        except Exception:
            pass

    def note_categories(self, opt, step):
        cuda = getattr(self.torch, "cuda", None)
        if self.info is None or cuda is None or not cuda.is_initialized():
            return
        tensor = self.torch.Tensor
        lists = ({}, {}, {})        # parameters, gradients, optimizer_state
        refs = []

        def add(d, t):
            if not isinstance(t, tensor) or not t.is_cuda:
                return
            try:
                st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
                addr, n = st.data_ptr(), st.nbytes()
            except Exception:
                return      # sparse, meta, a subclass without one storage
            if addr and n:
                d.setdefault((t.get_device(), addr), n)
                refs.append(weakref.ref(t))

        params = []
        for key, (ref, _) in list(self.roots.items()):
            root = ref()
            if root is None:
                self.roots.pop(key, None)
            else:
                params.extend(root.parameters())
        for g in opt.param_groups:
            params.extend(g["params"])
        for p in params:
            add(lists[0], p)
            add(lists[1], p.grad)
        for st in opt.state.values():
            for v in st.values():
                add(lists[2], v)
        del params
        text = tuple(",".join("%d:0x%x:%d" % (d, a, n) for (d, a), n in l.items()) for l in lists)
        if self.noted is None:
            self.noted = ("", "", "")   # never a note of nothing
        if text == self.noted and all(r() is not None for r in self.noted_refs):
            return
        self.noted, self.noted_refs = text, tuple(refs)
        self.info([("categories", step), ("parameters", text[0]), ("gradients", text[1]),
                   ("optimizer_state", text[2])])


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
                _record(memtrace._POP, _D_TORCH)
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
            h.step_ends(self)
        except Exception:
            pass
        return orig(self)

    optimizer_cls._optimizer_step_code = _optimizer_step_code


def install(torch, info):
    """Registers the hooks on torch; info(lines) writes one fw_info note
    (None: no category notes)."""
    if os.environ.get("MEMTRACE_TORCH_HOOKS", "1") == "0" or memtrace._entry() is None:
        return
    global _Z
    import ctypes
    _Z = ctypes.c_uint64(0)
    h = _Hooks(torch, info)
    mm = torch.nn.modules.module
    mm.register_module_forward_pre_hook(h.pre)
    try:
        mm.register_module_forward_hook(h.post, always_call=True)
    except TypeError:
        mm.register_module_forward_hook(h.post)     # before 2.1
        h.exact = False
    _wrap_backward(torch.autograd, h)
    # (1.13's torch.optim does not export its optimizer submodule as an
    # attribute; torch imported it, so it is in sys.modules)
    om = sys.modules["torch.optim.optimizer"]
    if hasattr(om, "register_optimizer_step_post_hook"):
        om.register_optimizer_step_pre_hook(h.opt_pre)
        om.register_optimizer_step_post_hook(h.opt_post)
    elif hasattr(om.Optimizer, "_optimizer_step_code"):
        _wrap_step_code(om.Optimizer, h)
