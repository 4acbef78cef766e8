# memtrace.py - memtrace's marker API for Python: name the program's own
# units of time (phases, steps, tests) so that memtrace's report speaks in
# them ("peak 1.2 GiB in range 'eval' (step 3)"). docs/units.md.
#
#   import memtrace
#   with memtrace.phase("eval"):          a range, nested per thread
#       ...
#   @memtrace.phase("load")               the same, around each call
#   def load(): ...
#   for i in range(n):
#       with memtrace.step():             "step 1", "step 2", ...
#           ...
#   memtrace.mark("epoch 3")              an instant
#   rid = memtrace.start("prefetch"); memtrace.end(rid)   any thread ends it
#
# Every call writes the records of include/memtrace/markers.h (origin
# "python") through the entry point libmemtrace.so exports,
# memtrace_range_record, looked up once with ctypes.CDLL(None). A program
# run without memtrace finds none and every call is a no-op: push and pop
# answer -1, start 0, and nothing raises. The module imports only ctypes
# and threading, and never imports torch.
#
# Under `memtrace run` the module is importable as it is (the bootstrap,
# sitecustomize.py, answers `import memtrace` when nothing else on the path
# does); elsewhere put this one file on the path or copy it into the
# project: it needs nothing else.
import threading

__all__ = ["phase", "step", "mark", "push", "pop", "start", "end", "active"]

# enum mt_range_op and mt_range_origin of include/memtrace/trace-format.h
_PUSH, _POP, _START, _END, _MARK = 1, 2, 3, 4, 5
ORIGIN_PYTHON, ORIGIN_PYTEST, ORIGIN_TORCH = 3, 4, 5

_lock = threading.Lock()
_fn = None          # the entry point, once looked up
_looked = False
_steps = 0          # memtrace.step() without a number: 1, 2, ...


def _entry():
    global _fn, _looked
    if _looked:
        return _fn
    with _lock:
        if not _looked:
            try:
                import ctypes
                f = ctypes.CDLL(None).memtrace_range_record
                f.restype = ctypes.c_int
                f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                              ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)]
                _fn = (f, ctypes)
            except Exception:
                _fn = None
            _looked = True
    return _fn


def _b(s):
    if s is None:
        return None
    if isinstance(s, bytes):
        b = s
    else:
        b = str(s).encode("utf-8", "backslashreplace")
    return b.replace(b"\0", b"\\0")


def _record(op, origin, domain, name, rid=0):
    """The raw call: (answer, id); (-1, 0) without memtrace."""
    e = _entry()
    if e is None:
        return -1, 0
    f, ctypes = e
    out = ctypes.c_uint64(0)
    try:
        r = f(op, origin, _b(domain), _b(name), int(rid) & 0xFFFFFFFFFFFFFFFF, ctypes.byref(out))
    except Exception:
        return -1, 0
    return r, out.value


def active():
    """True when this process records (runs under memtrace)."""
    return _entry() is not None


def push(name, domain=None):
    """Opens a range on this thread; its depth from 0, -1 without memtrace."""
    return _record(_PUSH, ORIGIN_PYTHON, domain, name)[0]


def pop(domain=None):
    """Closes this thread's innermost open range of domain; its depth, or -1."""
    return _record(_POP, ORIGIN_PYTHON, domain, None)[0]


def start(name, domain=None):
    """Starts a range that any thread may end; its id (0 without memtrace)."""
    r, rid = _record(_START, ORIGIN_PYTHON, domain, name)
    return rid if r >= 0 else 0


def end(rid):
    """Ends the range start() returned (0: nothing)."""
    if rid:
        _record(_END, ORIGIN_PYTHON, None, None, rid)


def mark(name, domain=None):
    """An instant: "epoch 3", "checkpoint saved"."""
    _record(_MARK, ORIGIN_PYTHON, domain, name)


class phase(object):
    """A range, as a context manager or a decorator: pushed on entry, popped
    on exit (an exception included). Reentrant: nesting the same object
    nests its ranges."""

    def __init__(self, name, domain=None):
        self.name = name
        self.domain = domain

    def __enter__(self):
        push(self.name, self.domain)
        return self

    def __exit__(self, *exc):
        pop(self.domain)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with phase(self.name, self.domain):
                return fn(*args, **kwargs)
        return wrapped


def step(n=None, domain=None):
    """A step: the range "step N" (the report's steps, docs/units.md), N the
    number given, else the count of step() calls without one (1, 2, ...)."""
    global _steps
    if n is None:
        with _lock:
            _steps += 1
            n = _steps
    return phase("step %d" % int(n), domain)
