# torch/_C.py - TEST DOUBLE: the part of PyTorch's C extension (torch._C)
# that the stand-in torch uses, in Python, over torch/_allocator.py. Names
# and arguments follow torch/csrc/cuda/Module.cpp and
# torch/csrc/cuda/memory_snapshot.cpp (revisions in torch/__init__.py).
#
# Two levels of initialization, as in PyTorch: this module's allocators
# exist once the "C++" side is initialized (_cuda_init, or any entry point
# that calls lazyInitDevice: _cuda_record_memory_history,
# _cuda_attach_out_of_memory_observer), while torch.cuda.is_initialized()
# turns true only when torch.cuda._lazy_init() has run its queued calls.
import os
import sys
import threading

from . import _allocator
from ._allocator import OutOfMemoryError  # noqa: F401 (torch._C.OutOfMemoryError)

_device_allocator = []
_init_lock = threading.Lock()
_in_bad_fork = False


def _forked_child():
    # Module.cpp forked_child(): a child forked after CUDA was initialized
    global _in_bad_fork
    if _device_allocator:
        _in_bad_fork = True


os.register_at_fork(after_in_child=_forked_child)


def _lazy_init_device():
    """at::globalContext().lazyInitDevice(CUDA): one allocator per device."""
    with _init_lock:
        if _device_allocator:
            return
        n = _allocator.device_count()
        if n == 0:
            raise RuntimeError("No CUDA GPUs are available")
        _device_allocator.extend(_allocator.DeviceCachingAllocator(d) for d in range(n))


def _allocator_for(device):
    _lazy_init_device()
    if not 0 <= device < len(_device_allocator):
        raise RuntimeError("Invalid device argument %d: did you call init?" % device)
    return _device_allocator[device]


def _cuda_init():
    if _in_bad_fork:
        raise RuntimeError("Cannot re-initialize CUDA in forked subprocess")
    _lazy_init_device()


def _cuda_isInBadFork():
    return _in_bad_fork


def _cuda_getDeviceCount():
    return _allocator.device_count()


def _cuda_getDevice():
    _cuda_lazy_init()
    return _allocator.get_device()


def _cuda_setDevice(device):
    _cuda_lazy_init()
    _allocator.set_device(device)


def _cuda_synchronize():
    _allocator.cuda_check(_allocator.runtime().cudaDeviceSynchronize(), "cudaDeviceSynchronize")


def _cuda_lazy_init():
    # torch::utils::device_lazy_init: runs torch.cuda._lazy_init() (Python)
    import torch.cuda
    torch.cuda._lazy_init()


def _cuda_getAllocatorBackend():
    return "native"


def _cuda_emptyCache():
    for da in _device_allocator:
        da.empty_cache()


def _cuda_memoryStats(device):
    return _allocator_for(device).stats.as_nested_dict()


def _cuda_attach_out_of_memory_observer(observer):
    _lazy_init_device()
    for da in _device_allocator:
        da.oom_observers.append(observer)


def _check_option(option, valid, error):
    if option not in valid:
        raise RuntimeError(error)


def _cuda_record_memory_history(enabled, context, stacks, max_entries, clear_history=False,
                                compile_context=False, global_record_annotations=False,
                                skip_actions=(), record_pinned_host_memory=False,
                                record_cuda=True):
    """memory_snapshot.cpp _record_memory_history(optional<string> enabled, ...)."""
    if enabled is not None:
        _check_option(enabled, ("state", "all"), "expected state to be 'state', 'all', or None")
    if context is not None:
        _check_option(context, ("state", "alloc", "all"),
                      "expected context to be 'state', 'alloc', 'all', or None")
    _check_option(stacks, ("python", "all"), "expected stacks to be 'python', or 'all'")
    max_entries = max_entries if enabled == "all" else 1
    when = {None: _allocator.NEVER, "state": _allocator.STATE, "alloc": _allocator.ALLOC,
            "all": _allocator.ALL}[context]
    _lazy_init_device()
    if record_cuda:
        for da in _device_allocator:
            da.record_history_set(enabled is not None, max_entries, when, clear_history,
                                  skip_actions)


def _cuda_record_memory_history_legacy(enabled, record_context=True, trace_alloc_max_entries=1,
                                       trace_alloc_record_context=False, record_context_cpp=False,
                                       clear_history=False, compile_context=False,
                                       global_record_annotations=False, skip_actions=(),
                                       record_pinned_host_memory=False, record_cuda=True):
    when = _allocator.NEVER
    if trace_alloc_record_context:
        when = _allocator.ALLOC
    elif record_context:
        when = _allocator.STATE
    _lazy_init_device()
    if record_cuda:
        for da in _device_allocator:
            da.record_history_set(bool(enabled), trace_alloc_max_entries, when, clear_history,
                                  skip_actions)


def _cuda_isHistoryEnabled():
    return bool(_device_allocator) and _device_allocator[_allocator.get_device()].record_history


def _allocator_settings():
    # memory_snapshot.cpp: the allocator's configuration; the double knows
    # none of PYTORCH_CUDA_ALLOC_CONF's options, so every value is the default
    return {"PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "max_split_size": _allocator.MAX_SPLIT_SIZE,
            "garbage_collection_threshold": 0.0,
            "expandable_segments": False,
            "pinned_num_register_threads": 1,
            "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False,
            "graph_capture_record_stream_reuse": False,
            "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}}


def _cuda_memorySnapshot(mempool_id=None):
    """The dict of memory_snapshot.cpp _memory_snapshot_pickled(), unpickled:
    as NativeCachingAllocator::snapshot(), each device's trace is read
    before its segments, so this call's "snapshot" entry shows in the next."""
    segments, traces = [], []
    for da in _device_allocator:
        traces.append(da.trace())
        segments.extend(da.snapshot())
    return {"segments": segments, "device_traces": traces,
            "allocator_settings": _allocator_settings(), "external_annotations": []}


del sys
