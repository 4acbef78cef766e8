# torch/cuda/memory.py - TEST DOUBLE: torch.cuda.memory of the stand-in
# torch (see torch/__init__.py), with the signatures of PyTorch's
# torch/cuda/memory.py: memory_stats() flattened and sorted from the
# allocator's nested dict, and {} before CUDA is initialized; the history
# API, whose ring buffer keeps the last max_entries entries.
import collections
import pickle
import sys

import torch
from torch import _C

__all__ = ["empty_cache", "memory_stats", "memory_stats_as_nested_dict", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats",
           "get_allocator_backend", "set_per_process_memory_fraction"]


def empty_cache():
    if torch.cuda.is_initialized():
        _C._cuda_emptyCache()


def memory_stats(device=None):
    result = []

    def _recurse_add_to_result(prefix, obj):
        if isinstance(obj, dict):
            if len(prefix) > 0:
                prefix += "."
            for k, v in obj.items():
                _recurse_add_to_result(prefix + k, v)
        else:
            result.append((prefix, obj))

    stats = memory_stats_as_nested_dict(device=device)
    _recurse_add_to_result("", stats)
    result.sort()
    return collections.OrderedDict(result)


def memory_stats_as_nested_dict(device=None):
    if not torch.cuda.is_initialized():
        return {}
    device = torch.cuda._get_device_index(device, optional=True)
    return _C._cuda_memoryStats(device)


def memory_allocated(device=None):
    return memory_stats(device=device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    return memory_stats(device=device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    return memory_stats(device=device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    return memory_stats(device=device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    """Every peak back to its current value (cudaMallocAsync: the pool's
    ReservedMemHigh and UsedMemHigh reset by the driver)."""
    device = torch.cuda._get_device_index(device, optional=True)
    return _C._cuda_resetPeakMemoryStats(device)


def set_per_process_memory_fraction(fraction, device=None):
    """torch/cuda/memory.py: limits the caching allocator to fraction *
    the device's total memory (alloc_block fails past it; with
    garbage_collection_threshold set, malloc collects cached blocks)."""
    torch.cuda._lazy_init()
    if device is None:
        device = torch.cuda.current_device()
    device = torch.cuda._get_device_index(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._cuda_setMemoryFraction(fraction, device)


def _set_allocator_settings(env: str):
    return _C._cuda_cudaCachingAllocator_set_allocator_settings(env)


def get_allocator_backend():
    return _C._cuda_getAllocatorBackend()


def _record_memory_history_legacy(enabled, record_context=True, trace_alloc_max_entries=1,
                                  trace_alloc_record_context=False, device=None,
                                  record_context_cpp=False, clear_history=False,
                                  compile_context=False, global_record_annotations=False,
                                  skip_actions=None, record_pinned_host_memory=False,
                                  record_cuda=True):
    _C._cuda_record_memory_history_legacy(
        enabled, record_context, trace_alloc_max_entries, trace_alloc_record_context,
        record_context_cpp, clear_history, compile_context, global_record_annotations,
        skip_actions if skip_actions is not None else [], record_pinned_host_memory,
        record_cuda)


def _record_memory_history(enabled="all", *args, **kwargs):
    if isinstance(enabled, bool):
        return _record_memory_history_legacy(enabled, *args, **kwargs)
    return _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_impl(enabled="all", context="all", stacks="all",
                                max_entries=sys.maxsize, device=None, clear_history=False,
                                compile_context=False, global_record_annotations=False,
                                skip_actions=None, record_pinned_host_memory=False,
                                record_cuda=True):
    _C._cuda_record_memory_history(
        enabled, context, stacks, max_entries, clear_history, compile_context,
        global_record_annotations, skip_actions if skip_actions is not None else [],
        record_pinned_host_memory, record_cuda)


def _record_memory_history_impl_21(enabled="all", context="all", stacks="all",
                                   max_entries=sys.maxsize, device=None):
    # torch/cuda/memory.py of 2.1: the four options only
    _C._cuda_record_memory_history(enabled, context, stacks, max_entries)


if torch._allocator.TORCH21:
    _record_memory_history_impl = _record_memory_history_impl_21  # noqa: F811


def _snapshot(device=None, augment_with_fx_traces=False):
    return _C._cuda_memorySnapshot(None)


def _dump_snapshot(filename="dump_snapshot.pickle", augment_with_fx_traces=False):
    s = _snapshot()
    with open(filename, "wb") as f:
        pickle.dump(s, f)
