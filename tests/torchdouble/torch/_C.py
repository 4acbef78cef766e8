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
from . import _async_allocator
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
        if _backend == "cudaMallocAsync":
            # the configuration is parsed (and checked) at first use either way
            _allocator.config()
            _device_allocator.extend(_async_allocator.CudaMallocAsyncAllocator(d)
                                     for d in range(n))
        else:
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


# The backend is chosen once, when the library loads (import torch):
# CUDACachingAllocator.cpp's BackendStaticInitializer reads the "backend"
# option of the allocator settings (see _allocator.backend_at_load_time).
_backend = _allocator.backend_at_load_time()


def _cuda_getAllocatorBackend():
    """CUDACachingAllocator::get()->name(): "native" or "cudaMallocAsync"."""
    return _backend


def _cuda_emptyCache():
    for da in _device_allocator:
        da.empty_cache()


def _cuda_memoryStats(device):
    da = _allocator_for(device)
    if _backend == "cudaMallocAsync":
        return da.get_device_stats()
    return da.stats.as_nested_dict()


def _cuda_resetPeakMemoryStats(device):
    """CUDACachingAllocator::resetPeakStats(device)."""
    _allocator_for(device).reset_peak_stats()


def _cuda_attach_out_of_memory_observer(observer):
    _lazy_init_device()
    if _backend == "cudaMallocAsync":
        _device_allocator[0].attach_out_of_memory_observer(observer)
    for da in _device_allocator:
        da.oom_observers.append(observer)


def _check_option(option, valid, error):
    if option not in valid:
        raise RuntimeError(error)


def _cuda_record_memory_history(enabled, context, stacks, max_entries, *rest, **kw):
    """memory_snapshot.cpp _record_memory_history(optional<string> enabled,
    optional<string> context, string stacks, size_t max_entries, ...): 2.1
    takes those four only."""
    if _allocator.TORCH21 and (rest or kw):
        raise TypeError("_cuda_record_memory_history(): incompatible function arguments")
    return _record_history(enabled, context, stacks, max_entries, *rest, **kw)


def _record_history(enabled, context, stacks, max_entries, clear_history=False,
                    compile_context=False, global_record_annotations=False,
                    skip_actions=(), record_pinned_host_memory=False, record_cuda=True):
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
            # cudaMallocAsync: RuntimeError ("does not yet support recordHistory")
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


def _cuda_setMemoryFraction(fraction, device):
    """NativeCachingAllocator::setMemoryFraction."""
    if not 0 <= fraction <= 1:
        raise RuntimeError("invalid fraction:%s. Please set within (0, 1)." % fraction)
    da = _allocator_for(device)
    _allocator.set_device(device)
    da.set_memory_fraction(fraction)


def _cuda_cudaCachingAllocator_set_allocator_settings(env):
    """CUDACachingAllocator::setAllocatorSettings: parseArgs(env) again."""
    _allocator.set_allocator_settings(env)


def _cuda_recordStream(block, stream):
    """NativeCachingAllocator::recordStream (Tensor.record_stream)."""
    if block is None:
        return
    _allocator_for(block.device).record_stream(block, stream)


def _allocator_settings():
    """The allocator_settings dict of THCPModule_memorySnapshot
    (torch/csrc/cuda/Module.cpp of the 2.3/2.4 line, the one with
    external_annotations and before graph_capture_record_stream_reuse), from
    NativeCachingAllocator::snapshot()'s config_metadata: the last settings
    string parsed ("" if none), max_split_size as int64 (-1 unset), and
    roundup_power2_divisions keyed "1", "2", "4", ... "32768", one per
    power-of-two interval from 1 MiB."""
    c = _allocator.config()
    mss = c.max_split_size
    if mss >= 1 << 63:
        mss -= 1 << 64
    return {"PYTORCH_CUDA_ALLOC_CONF": c.last_allocator_settings,
            "max_split_size": mss,
            "garbage_collection_threshold": c.garbage_collection_threshold,
            "expandable_segments": c.expandable_segments,
            "pinned_num_register_threads": c.pinned_num_register_threads,
            "release_lock_on_cudamalloc": c.release_lock_on_cudamalloc,
            "pinned_use_cuda_host_register": c.pinned_use_cuda_host_register,
            "roundup_power2_divisions": {str(1 << i): v for i, v in enumerate(c.roundup)}}


# The time fit of each snapshot. PyTorch stamps entries with the TSC and
# converts at every snapshot with a fit made then (makeConverter() in
# NativeCachingAllocator::snapshot, c10/util/ApproximateClock), so the same
# entry's time_us moves a little from one _snapshot() to the next. The
# double keeps the raw CLOCK_REALTIME stamp and adds, per snapshot, a
# deterministic pseudo-random offset in [-A, +A] us, A = TORCHDOUBLE_REFIT_US
# (default 5; 0: no refit), plus TORCHDOUBLE_REFIT_JUMP_US from the
# TORCHDOUBLE_REFIT_JUMP_AT-th snapshot on (default 2: the second).
_snapshots_taken = 0


def _refit_ns(n):
    amp = _allocator._env_number("TORCHDOUBLE_REFIT_US", 5.0)
    x = (n * 2654435761 + 12345) % 4294967296  # Knuth's multiplicative hash
    off = ((x / 4294967295.0) * 2.0 - 1.0) * amp
    if n >= _allocator._env_number("TORCHDOUBLE_REFIT_JUMP_AT", 2, int):
        off += _allocator._env_number("TORCHDOUBLE_REFIT_JUMP_US", 0.0)
    return int(round(off * 1000.0))


def _cuda_memorySnapshot(mempool_id=None):
    """The dict of THCPModule_memorySnapshot: as NativeCachingAllocator::
    snapshot(), each device's trace is read before its segments, so this
    call's "snapshot" entry shows in the next. Each trace entry costs
    TORCHDOUBLE_SNAPSHOT_US microseconds (default 7, PR #172672's 726.8 ms
    for 100,000 entries; 0: free), spent holding the device lock and the
    GIL. 2.1 has neither allocator_settings nor external_annotations."""
    global _snapshots_taken
    if _backend == "cudaMallocAsync":
        # CUDACachingAllocator::snapshot(): this backend refuses (RuntimeError)
        _lazy_init_device()
        _device_allocator[0].snapshot()
    _snapshots_taken += 1
    refit = _refit_ns(_snapshots_taken)
    cost = _allocator._env_number("TORCHDOUBLE_SNAPSHOT_US", 7.0)
    segments, traces = [], []
    for da in _device_allocator:
        traces.append(da.trace(refit, cost))
        segments.extend(da.snapshot())
    if _allocator.TORCH21:
        return {"segments": segments, "device_traces": traces}
    return {"segments": segments, "device_traces": traces,
            "allocator_settings": _allocator_settings(), "external_annotations": []}


del sys
