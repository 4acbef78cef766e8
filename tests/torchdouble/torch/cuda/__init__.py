# torch/cuda/__init__.py - TEST DOUBLE: torch.cuda of the stand-in torch
# (see torch/__init__.py). Lazy initialization is PyTorch's own
# (torch/cuda/__init__.py): calls handed to _lazy_call() before CUDA is
# initialized wait in _queued_calls (which starts, as in PyTorch, with
# _check_capability and _check_cubins) and run inside _lazy_init(), at the
# first allocation, set_device(), current_device(), synchronize() or init();
# while they run is_initialized() is still False, and an exception from one
# becomes DeferredCudaCallError.
import threading
import traceback

import torch
from torch import _C

from .memory import *  # noqa: F401,F403
from . import memory  # noqa: F401

_initialized = False
_tls = threading.local()
_initialization_lock = threading.Lock()
_queued_calls = []  # don't invoke these until initialization occurs

OutOfMemoryError = _C.OutOfMemoryError


class DeferredCudaCallError(Exception):
    pass


def _is_compiled():
    return True


def is_available():
    return _C._cuda_getDeviceCount() > 0


def device_count():
    return _C._cuda_getDeviceCount() if is_available() else 0


def _is_in_bad_fork():
    return _C._cuda_isInBadFork()


def is_initialized():
    r"""Return whether PyTorch's CUDA state has been initialized."""
    return _initialized and not _is_in_bad_fork()


def _lazy_call(callable, **kwargs):
    if is_initialized():
        callable()
    else:
        # (PyTorch keeps seed calls apart in a _LazySeedTracker; the double
        # queues them with the others)
        _queued_calls.append((callable, traceback.format_stack()))


def _check_capability():
    pass


def _check_cubins():
    pass


_lazy_call(_check_capability)
_lazy_call(_check_cubins)


def init():
    _lazy_init()


def _lazy_init():
    global _initialized, _queued_calls
    if is_initialized() or hasattr(_tls, "is_initializing"):
        return
    with _initialization_lock:
        if is_initialized():
            return
        if _is_in_bad_fork():
            raise RuntimeError(
                "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                "multiprocessing, you must use the 'spawn' start method")
        _C._cuda_init()
        _tls.is_initializing = True
        try:
            for queued_call, orig_traceback in _queued_calls:
                try:
                    queued_call()
                except Exception as e:
                    msg = ("CUDA call failed lazily at initialization with error: %s\n\n"
                           "CUDA call was originally invoked at:\n\n%s"
                           % (e, "".join(orig_traceback)))
                    raise DeferredCudaCallError(msg) from e
        finally:
            delattr(_tls, "is_initializing")
        _initialized = True


def _get_device_index(device, optional=False):
    """An int for an int, "cuda", "cuda:N" or torch.device; the current
    device for None (optional) or a "cuda" without index."""
    if isinstance(device, torch.device):
        device = str(device)
    if isinstance(device, str):
        if device == "cuda":
            device = None
            optional = True
        elif device.startswith("cuda:"):
            device = int(device[5:])
        else:
            raise ValueError("Expected a cuda device, but got: %s" % device)
    if device is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             "but got:None")
        return current_device()
    return int(device)


def current_device():
    _lazy_init()
    return _C._cuda_getDevice()


def set_device(device):
    device = _get_device_index(device)
    if device >= 0:
        _C._cuda_setDevice(device)


class device:
    r"""Context-manager that changes the selected device."""

    def __init__(self, device):
        self.idx = -1 if device is None else _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                _C._cuda_setDevice(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._cuda_setDevice(self.prev_idx)
        return False


def synchronize(device=None):
    _lazy_init()
    with torch.cuda.device(device):
        return _C._cuda_synchronize()


# --- streams: enough of torch.cuda.Stream for record_stream ------------------
# A stream is a real cudaStream_t of the (simulated) runtime; cuda_stream is
# its handle as an int, the value PyTorch's trace entries and snapshot carry
# as "stream". The default stream is 0. The current stream is per thread
# and device, as c10::cuda::getCurrentCUDAStream.

class Stream:
    def __init__(self, device=None, priority=0, **kwargs):
        _lazy_init()
        self.device_index = _get_device_index(device, optional=True)
        self.priority = priority
        if kwargs.get("_handle") is not None:
            self.cuda_stream = kwargs["_handle"]
            return
        import ctypes
        from torch import _allocator
        h = ctypes.c_void_p()
        with torch.cuda.device(self.device_index):
            _allocator.cuda_check(_allocator.runtime().cudaStreamCreate(ctypes.byref(h)),
                                  "cudaStreamCreate")
        self.cuda_stream = h.value or 0

    @property
    def device(self):
        return torch.device("cuda", self.device_index)

    def synchronize(self):
        import ctypes
        from torch import _allocator
        _allocator.cuda_check(_allocator.runtime().cudaStreamSynchronize(
            ctypes.c_void_p(self.cuda_stream)), "cudaStreamSynchronize")

    def wait_stream(self, stream):
        pass

    def query(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == \
            (other.cuda_stream, other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return "<torch.cuda.Stream device=cuda:%d cuda_stream=%#x>" % (self.device_index,
                                                                      self.cuda_stream)


_stream_tls = threading.local()


def default_stream(device=None):
    return Stream(device, _handle=0)


def current_stream(device=None):
    idx = _get_device_index(device, optional=True)
    cur = getattr(_stream_tls, "current", {})
    return cur.get(idx) or Stream(idx, _handle=0)


def set_stream(stream):
    if stream is None:
        return
    if not hasattr(_stream_tls, "current"):
        _stream_tls.current = {}
    _stream_tls.current[stream.device_index] = stream


class StreamContext:
    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is not None:
            self.prev = current_stream(self.stream.device_index)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.prev)
        return False


def stream(stream):
    return StreamContext(stream)
