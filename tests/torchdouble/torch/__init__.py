# torch - A TEST DOUBLE OF PYTORCH, for memtrace's tests only: never install
# it, never put it on a path outside tests/. The tests put tests/torchdouble
# first on PYTHONPATH so that "import torch" finds it on machines without
# PyTorch or a GPU; it runs on the simulated CUDA (tests/simcuda) through
# ctypes (libcudart.so.13 from LD_LIBRARY_PATH), so the segments of its
# caching allocator are real cudaMalloc/cudaFree calls that memtrace traces.
#
# It implements only what memtrace's PyTorch hook (python/memtrace_torch.py)
# and the tests use. It is no one PyTorch release: each part follows the
# revision named below (the Python API about 2.11, the allocator and its
# configuration about 2.3/2.4, the snapshot dict the 2.3/2.4 Module.cpp);
# TORCHDOUBLE_VERSION=2.1 makes it answer as 2.1 where that differs
# (torch.__version__ "2.1.0"; trace entries without time_us, as
# THCPModule_memorySnapshot before PR #112266; no allocator_settings or
# external_annotations; _record_memory_history with its four options only;
# no pinned_* allocator options). requested_bytes is kept in 2.1 mode: it
# came with PR #88575 (reviewed 2022-12, so in 2.0 [inferred from dates]).
# What it has:
#   torch.empty(size..., dtype=torch.uint8, device="cuda"), torch.Tensor
#   (freed when the object dies), torch.device, torch.uint8 and a few
#   dtypes; torch.cuda: is_available, is_initialized, init, _lazy_init,
#   _lazy_call, _queued_calls, set_device, current_device, device,
#   synchronize, empty_cache, memory_stats, memory_allocated,
#   max_memory_allocated, memory_reserved, max_memory_reserved,
#   OutOfMemoryError, Stream, current_stream, default_stream, stream,
#   set_stream, set_per_process_memory_fraction; Tensor.record_stream,
#   .grad, .untyped_storage() and .backward(); torch.autograd.backward,
#   torch.nn.Module and Parameter, torch.optim.Optimizer (the surface of
#   memtrace_hooks.py, see their files);
#   reset_peak_memory_stats; torch.cuda.memory: get_allocator_backend
#   ("native", or "cudaMallocAsync" with that backend), _record_memory_history,
#   _snapshot, _dump_snapshot,
#   _set_allocator_settings; torch._C:
#   _cuda_attach_out_of_memory_observer and the _cuda_* entry points behind
#   the above.
# Two defaults differ from PyTorch, as memtrace's interface for the tests
# fixes them: torch.empty's dtype is uint8 (PyTorch: float32) and its device
# "cuda" (PyTorch: "cpu"). The tests' programs pass both explicitly.
#
# Sources mirrored (pytorch/pytorch, the revisions read):
#   torch/cuda/memory.py @00b65a0 - memory_stats (flattened, sorted, {}
#     before init), _record_memory_history (bool -> legacy, else _impl with
#     context/stacks/max_entries/clear_history/skip_actions), _snapshot
#     (returns _C._cuda_memorySnapshot(None), all devices), _dump_snapshot
#   torch/cuda/__init__.py @17e3b6a - _lazy_init, _lazy_call, _queued_calls,
#     is_initialized, DeferredCudaCallError
#   torch/csrc/cuda/memory_snapshot.cpp @127b7ad - the snapshot dict:
#     segments {device, address, total_size, allocated_size, active_size,
#     requested_size, stream, segment_type, segment_pool_id, is_expandable,
#     frames, blocks [{address, size, requested_size, state, frames}]} with
#     blocks tiling the segment (address += size); device_traces, one list
#     per device, entries {action, addr | device_free (oom), size, stream,
#     time_us, frames (only when the entry has a context)};
#     allocator_settings; the options checks of _record_memory_history
#   torch/csrc/cuda/Module.cpp @87a08c1 - _cuda_memoryStats (the nested
#     dict), _cuda_attach_out_of_memory_observer (observer(device,
#     alloc_size, device_total, device_free), called before the raise)
#   torch/csrc/cuda/Module.cpp of the 2.3/2.4 line - the snapshot dict's
#     allocator_settings {PYTORCH_CUDA_ALLOC_CONF (the last settings
#     string), max_split_size (int64, -1 unset), garbage_collection_threshold,
#     expandable_segments, pinned_num_register_threads,
#     release_lock_on_cudamalloc, pinned_use_cuda_host_register,
#     roundup_power2_divisions {"1": n, "2": n, ... "32768": n}} and the
#     block state "active_pending_free" (memory.py documents
#     "active_awaiting_free"; Module.cpp writes the former)
#   c10/cuda/CUDACachingAllocator.cpp @001074d (about 2.3/2.4) - the
#     allocator, see torch/_allocator.py: round_size with
#     roundup_power2_divisions; requests <= 1 MiB from the small pool (2 MiB
#     segments), < 10 MiB from 20 MiB segments, larger ones from a segment
#     rounded up to 2 MiB; best fit (stream, size, address) with
#     max_split_size's oversize rules; split when the remainder is >= 512 B
#     (small pool, or expandable segments) / > 1 MiB and the request <
#     max_split_size (large); a freed block merges with free neighbours;
#     expandable segments (segment_map/segment_unmap at 2/20 MiB pages,
#     through the driver's VMM calls); record_stream's events; garbage
#     collection under a memory fraction; when cudaMalloc fails, oversize
#     blocks then every unsplit cached segment are freed, one retry counted
#     in num_alloc_retries, then "oom" (device_free from cudaMemGetInfo,
#     size the rounded request), num_ooms, the observers, OutOfMemoryError.
#     Trace entries: alloc and free_* carry the requested size, segment_*
#     the segment's (or the range mapped); every _snapshot() adds a
#     "snapshot" entry (addr 0, size = active bytes) seen by the next one.
#   c10/cuda/CUDAAllocatorConfig.cpp of the same line - PYTORCH_CUDA_ALLOC_CONF
#     (PYTORCH_ALLOC_CONF where that is unset, as 2.9+ reads it) and
#     _set_allocator_settings: max_split_size_mb (> 20),
#     garbage_collection_threshold, roundup_power2_divisions (one value or
#     the [MiB:n,...,>:n] list), expandable_segments, backend (checked
#     against the one chosen at load time; cudaMallocAsync with another
#     option warns that it ignores them),
#     release_lock_on_cudamalloc, pinned_use_cuda_host_register,
#     pinned_num_register_threads
#   c10/cuda/CUDAMallocAsyncAllocator.cpp @0345947 - the cudaMallocAsync
#     backend (backend:cudaMallocAsync, chosen when torch is imported, as
#     CUDACachingAllocator.cpp's BackendStaticInitializer does), see
#     torch/_async_allocator.py: each tensor one cudaMallocAsync of exactly
#     its size on the current stream, its free one cudaFreeAsync (after
#     record_stream, on a stream of its own that waits for the others);
#     memory_stats() only allocated_bytes/active_bytes (the default pool's
#     UsedMemCurrent/UsedMemHigh) and reserved_bytes (ReservedMemCurrent/
#     ReservedMemHigh) of "all", every other figure 0, requested_bytes too;
#     empty_cache() = cudaDeviceSynchronize + cudaMemPoolTrimTo(pool, 0);
#     _record_memory_history, _snapshot and the OOM observer raise
#     RuntimeError, as that backend does
#   RingBuffer<TraceEntry> (same file): appends until max_entries, then
#     overwrites the oldest; read oldest first; max_entries is 1 unless
#     enabled="all"; disabling (enabled=None) or clear_history empties it.
# Frames are Python frames only, innermost first, without the double's own
# (in PyTorch torch.empty and the deallocation of a tensor are C++), also
# for stacks="all". time_us: each entry keeps its CLOCK_REALTIME stamp, and
# each _snapshot() converts it with its own fit, as PyTorch re-derives it
# from the TSC at every snapshot: an offset of a few us that changes from
# one snapshot to the next (TORCHDOUBLE_REFIT_US, _JUMP_US, _JUMP_AT; see
# torch/_C.py). Each entry costs _snapshot() TORCHDOUBLE_SNAPSHOT_US (7 us
# by default, PR #172672's figure) with the GIL held.
#
# Not done: CUDA graphs and private pools (and graph capture with
# cudaMallocAsync),
# max_non_split_rounding_mb and the other options that came after @001074d,
# the user_metadata, pool_id and compile_context fields of newer entries,
# C++ frames, 2.1's clearing of the history when only the context changed
# (before PR #120436).
import math

from . import _C
from . import _allocator
from ._allocator import OutOfMemoryError  # noqa: F401

# The Python API follows torch/cuda/memory.py @00b65a0 (the 2.11 line), so the
# double calls itself 2.11; TORCHDOUBLE_VERSION=2.1 makes it 2.1.0 (see
# above). Its allocator follows @001074d (about 2.3/2.4) in both modes.
__version__ = "2.1.0" if _allocator.TORCH21 else "2.11.0+testdouble"


class dtype:
    def __init__(self, name, itemsize):
        self.name = name
        self.itemsize = itemsize

    def __repr__(self):
        return "torch." + self.name


uint8 = dtype("uint8", 1)
int8 = dtype("int8", 1)
float16 = half = dtype("float16", 2)
bfloat16 = dtype("bfloat16", 2)
int32 = dtype("int32", 4)
float32 = float = dtype("float32", 4)
int64 = long = dtype("int64", 8)
float64 = double = dtype("float64", 8)


class device:
    def __init__(self, type, index=None):
        if index is None and ":" in type:
            type, index = type.split(":", 1)
            index = int(index)
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    def __repr__(self):
        return "device(type='%s'%s)" % (self.type, "" if self.index is None else
                                        ", index=%d" % self.index)

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class Tensor:
    """A tensor that owns its memory and nothing else: its block goes back
    to the caching allocator (free_requested, free_completed) when the
    object dies. .grad is an attribute (None until a program sets it: the
    double has no autograd)."""

    grad = None

    def __init__(self, shape, dt, dev, block):
        self.shape = shape
        self.dtype = dt
        self.device = dev
        self._block = block

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def data_ptr(self):
        return self._block.ptr if self._block is not None else 0

    def untyped_storage(self):
        """Tensor.untyped_storage() (torch/_tensor.py @v2.4.0): the storage
        the tensor views; the double's tensors are their whole storage."""
        return _Storage(self.data_ptr(), self.nbytes)

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def record_stream(self, stream):
        """Tensor.record_stream: the block is not reused before the work
        queued on `stream` so far completes; PyTorch's recordStream, so its
        free waits for an event (free_completed at the next malloc)."""
        if self._block is not None:
            _C._cuda_recordStream(self._block, stream.cuda_stream)

    def __repr__(self):
        return "tensor(<%d bytes at 0x%x>, device='%s')" % (self.nbytes, self.data_ptr(),
                                                            self.device)

    def __del__(self):
        block, self._block = self._block, None
        if block is None:
            return
        try:
            _C._allocator_for(block.device).free(block)
        except Exception:
            # at interpreter exit the allocator may be gone: nothing to do
            pass


class _Storage(object):
    """torch.UntypedStorage's data_ptr() and nbytes() (torch/storage.py
    @v2.4.0)."""

    def __init__(self, ptr, nbytes):
        self.ptr, self.n = ptr, nbytes

    def data_ptr(self):
        return self.ptr

    def nbytes(self):
        return self.n


def empty(*size, dtype=None, device="cuda"):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(int(s) for s in size)
    dt = dtype if dtype is not None else uint8
    dev = globals()["device"](str(device)) if not isinstance(device, int) else \
        globals()["device"]("cuda", device)
    nbytes = math.prod(shape) * dt.itemsize
    if dev.type == "cpu":
        return Tensor(shape, dt, dev, None)
    if dev.type != "cuda":
        raise RuntimeError("the test double of torch knows only cpu and cuda devices")
    cuda._lazy_init()
    index = dev.index if dev.index is not None else cuda.current_device()
    dev = globals()["device"]("cuda", index)
    if nbytes == 0:
        return Tensor(shape, dt, dev, None)
    with cuda.device(index):
        block = _C._allocator_for(index).malloc(nbytes, cuda.current_stream(index).cuda_stream)
    return Tensor(shape, dt, dev, block)


from . import cuda  # noqa: E402
from . import autograd, nn, optim  # noqa: E402,F401
