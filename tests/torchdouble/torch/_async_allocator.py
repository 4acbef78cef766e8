# torch/_async_allocator.py - TEST DOUBLE: PyTorch's other CUDA allocator
# backend, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, in Python over
# the CUDA runtime of LD_LIBRARY_PATH (the simulated one in the tests),
# called through ctypes as torch/_allocator.py calls it: every tensor is one
# cudaMallocAsync of exactly its size on the current stream, and its free
# one cudaFreeAsync, which memtrace records at the CUDA level.
#
# Follows c10/cuda/CUDAMallocAsyncAllocator.cpp @0345947 (pytorch/pytorch
# 03459473c0ec8fea0afc2b32d0d5f45346c2a072, the stored copy read; a later
# copy's mallocAsync reads the same), with its names:
#   lazy_init_device  at a device's first mallocAsync (or setMemoryFraction):
#                     the device's default pool gets cudaMemPoolAttrRelease-
#                     Threshold UINT64_MAX (freed memory stays reserved until
#                     emptyCache) and the three reuse attributes 1; a
#                     "dummy unifying free stream"; used bytes 0, limit
#                     UINT64_MAX
#   mallocAsync       CUDAGuard(device), cudaGetLastError checked; over the
#                     memory fraction's limit cudaErrorMemoryAllocation
#                     without a call, else cudaMallocAsync(size, stream);
#                     cudaErrorMemoryAllocation: cudaGetLastError (cleared),
#                     cudaMemGetInfo, OutOfMemoryError "Allocation on device
#                     N would exceed allowed memory. (out of memory)" with its
#                     figures; no retry, no trim, no observer, no counter
#   freeAsync         cudaFreeAsync on the creation stream; a pointer
#                     record_stream'ed on other streams is freed on the
#                     unifying stream after sync_raw (an event recorded on
#                     each usage stream, waited for by the unifying one)
#   recordStream      adds the stream; the creation stream itself warns
#                     ("Called record_stream on tensor whose original
#                     creation stream matches ...") and is not added
#   setMemoryFraction limit = fraction * cudaMemGetInfo's total
#   emptyCache        for each initialized device: cudaDeviceSynchronize,
#                     cudaMemPoolTrimTo(default pool, 0)
#   getDeviceStats    zeros before the device's first use; after it, from
#                     the default pool's attributes: allocated_bytes and
#                     active_bytes (aggregate) current = UsedMemCurrent, peak
#                     = UsedMemHigh; reserved_bytes current =
#                     ReservedMemCurrent, peak = ReservedMemHigh. Every other
#                     statistic stays 0 (requested_bytes, allocation,
#                     segment, num_*, the per-pool rows, allocated/freed
#                     counts) and max_split_size 0 (DeviceStats' default)
#   resetPeakStats    writes 0 to ReservedMemHigh and UsedMemHigh (the driver
#                     resets each to its current value)
#   recordHistory, attachOutOfMemoryObserver, snapshot
#                     RuntimeError (TORCH_CHECK(false, ...)) with their texts
# The pool's figures are the driver's: on the simulated GPU blocks are
# 512 B multiples and the pool grows in chunks (tests/simcuda/driver/pool.c),
# so allocated_bytes is the rounded size, not the sum of the requests.
#
# Left out: CUDA graph capture (capture_underway and the deferred frees),
# IPC, peer access, cacheInfo's trial allocations, raw_alloc. The unifying
# stream is one stream of its own (PyTorch takes one from its stream pool:
# getStreamFromPool creates the pool's 32 streams at its first use).
# cudaStreamWaitEvent is called only where the runtime has it: the
# simulated runtime has not, and has no work in flight to wait for.
#
# Threading: one lock for every device (general_mutex), re-entrant here
# because a tensor may die, and free itself, in a garbage collection that
# runs while this thread holds it.
import ctypes
import threading
import warnings

from . import _allocator
from ._allocator import OutOfMemoryError, cuda_check, format_size, runtime

cudaSuccess = 0
cudaErrorMemoryAllocation = 2
cudaStreamNonBlocking = 0x01
cudaEventDisableTiming = 0x02
UINT64_MAX = (1 << 64) - 1

# enum cudaMemPoolAttr (driver_types.h)
cudaMemPoolReuseFollowEventDependencies = 0x1
cudaMemPoolReuseAllowOpportunistic = 0x2
cudaMemPoolReuseAllowInternalDependencies = 0x3
cudaMemPoolAttrReleaseThreshold = 0x4
cudaMemPoolAttrReservedMemCurrent = 0x5
cudaMemPoolAttrReservedMemHigh = 0x6
cudaMemPoolAttrUsedMemCurrent = 0x7
cudaMemPoolAttrUsedMemHigh = 0x8

_rt_ready = False


def rt():
    """The runtime of torch/_allocator.py, with the stream-ordered entry
    points' argument types set once."""
    global _rt_ready
    r = runtime()
    if r is not None and not _rt_ready:
        vp, sz, ip, uip = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint
        r.cudaMallocAsync.argtypes = [ctypes.POINTER(vp), sz, vp]
        r.cudaFreeAsync.argtypes = [vp, vp]
        r.cudaDeviceGetDefaultMemPool.argtypes = [ctypes.POINTER(vp), ip]
        r.cudaMemPoolSetAttribute.argtypes = [vp, ip, vp]
        r.cudaMemPoolGetAttribute.argtypes = [vp, ip, vp]
        r.cudaMemPoolTrimTo.argtypes = [vp, sz]
        r.cudaStreamCreateWithPriority.argtypes = [ctypes.POINTER(vp), uip, ip]
        r.cudaEventCreateWithFlags.argtypes = [ctypes.POINTER(vp), uip]
        r.cudaEventRecord.argtypes = [vp, vp]
        r.cudaEventDestroy.argtypes = [vp]
        r.cudaDriverGetVersion.argtypes = [ctypes.POINTER(ip)]
        if hasattr(r, "cudaStreamWaitEvent"):
            r.cudaStreamWaitEvent.argtypes = [vp, vp, uip]
        _rt_ready = True
    return r


def driver_version():
    v = ctypes.c_int(0)
    cuda_check(rt().cudaDriverGetVersion(ctypes.byref(v)), "cudaDriverGetVersion")
    return v.value


class _Guard:
    """CUDAGuard: the current device set for the block, restored after."""

    def __init__(self, device):
        self.device = device
        self.prev = None

    def __enter__(self):
        self.prev = _allocator.get_device()
        if self.prev != self.device:
            _allocator.set_device(self.device)

    def __exit__(self, *exc):
        if self.prev != self.device:
            _allocator.set_device(self.prev)
        return False


class UsageStream:
    __slots__ = ("stream", "device")

    def __init__(self, stream, device):
        self.stream = stream
        self.device = device

    def key(self):
        return (self.stream, self.device)


class PtrUsage:
    """ptr_info's value, and what a tensor of this backend holds (ptr and
    device as the native Block has them)."""
    __slots__ = ("ptr", "size", "captured", "creation_stream", "recorded_streams")

    def __init__(self, ptr, size, captured):
        self.ptr = ptr
        self.size = size
        self.captured = captured
        self.creation_stream = None
        self.recorded_streams = {}   # (stream, device) -> UsageStream

    @property
    def device(self):
        return self.creation_stream.device

    @property
    def stream(self):
        return self.creation_stream.stream


class CUDACachingAllocator:
    """Stands for the C++ namespace c10::cuda::CUDACachingAllocator, as in
    torch/_allocator.py: this backend lives in its CudaMallocAsync
    namespace (libc10_cuda.so in PyTorch either way)."""

    class CudaMallocAsync:
        device_count = 0
        devs_initialized_flags = []
        dummy_unifying_free_streams = []
        general_mutex = threading.RLock()
        ptr_info = {}
        pytorch_used_bytes = []
        pytorch_memory_limits = []

        @classmethod
        def default_pool(cls, device):
            pool = ctypes.c_void_p()
            cuda_check(rt().cudaDeviceGetDefaultMemPool(ctypes.byref(pool), device),
                       "cudaDeviceGetDefaultMemPool")
            return pool

        @classmethod
        def lazy_init_device(cls, device):
            """Assumes the caller holds general_mutex."""
            if cls.devs_initialized_flags[device]:
                return
            r = rt()
            with _Guard(device):
                pool = cls.default_pool(device)
                threshold = ctypes.c_uint64(UINT64_MAX)
                cuda_check(r.cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                                     ctypes.byref(threshold)),
                           "cudaMemPoolSetAttribute")
                enable = ctypes.c_int(1)
                for attr in (cudaMemPoolReuseFollowEventDependencies,
                             cudaMemPoolReuseAllowOpportunistic,
                             cudaMemPoolReuseAllowInternalDependencies):
                    cuda_check(r.cudaMemPoolSetAttribute(pool, attr, ctypes.byref(enable)),
                               "cudaMemPoolSetAttribute")
                s = ctypes.c_void_p()
                cuda_check(r.cudaStreamCreateWithPriority(ctypes.byref(s), cudaStreamNonBlocking, 0),
                           "cudaStreamCreateWithPriority")
                cls.dummy_unifying_free_streams[device] = UsageStream(s.value or 0, device)
            cls.pytorch_used_bytes[device] = 0
            cls.pytorch_memory_limits[device] = UINT64_MAX
            cls.devs_initialized_flags[device] = True

        @staticmethod
        def sync_raw(dependency, dependent):
            r = rt()
            event = ctypes.c_void_p()
            cuda_check(r.cudaEventCreateWithFlags(ctypes.byref(event), cudaEventDisableTiming),
                       "cudaEventCreateWithFlags")
            cuda_check(r.cudaEventRecord(event, ctypes.c_void_p(dependency)), "cudaEventRecord")
            if hasattr(r, "cudaStreamWaitEvent"):
                cuda_check(r.cudaStreamWaitEvent(ctypes.c_void_p(dependent), event, 0),
                           "cudaStreamWaitEvent")
            cuda_check(r.cudaEventDestroy(event), "cudaEventDestroy")

        @classmethod
        def free_impl(cls, usage):
            """Assumes the caller holds general_mutex."""
            r = rt()
            creation = usage.creation_stream
            with _Guard(creation.device):
                if not usage.recorded_streams:
                    cuda_check(r.cudaFreeAsync(ctypes.c_void_p(usage.ptr),
                                               ctypes.c_void_p(creation.stream)), "cudaFreeAsync")
                else:
                    dufs = cls.dummy_unifying_free_streams[creation.device]
                    assert dufs.device == creation.device
                    cls.sync_raw(creation.stream, dufs.stream)
                    for recorded in usage.recorded_streams.values():
                        with _Guard(recorded.device):
                            cls.sync_raw(recorded.stream, dufs.stream)
                    cuda_check(r.cudaFreeAsync(ctypes.c_void_p(usage.ptr),
                                               ctypes.c_void_p(dufs.stream)), "cudaFreeAsync")
            cls.pytorch_used_bytes[creation.device] -= usage.size
            del cls.ptr_info[usage.ptr]

        @classmethod
        def freeAsync(cls, usage):
            with cls.general_mutex:
                r = rt()
                cuda_check(r.cudaGetLastError(), "cudaGetLastError")
                if cls.ptr_info.get(usage.ptr) is not usage:
                    raise RuntimeError("ptr not found in ptr_info")
                cls.free_impl(usage)

        @classmethod
        def mallocAsync(cls, device, size, stream):
            if not 0 <= device < cls.device_count:
                raise RuntimeError("Invalid device index %d: did you call init?" % device)
            r = rt()
            with _Guard(device), cls.general_mutex:
                cls.lazy_init_device(device)
                cuda_check(r.cudaGetLastError(), "cudaGetLastError")
                ptr = ctypes.c_void_p()
                if cls.pytorch_used_bytes[device] + size > cls.pytorch_memory_limits[device]:
                    err = cudaErrorMemoryAllocation
                else:
                    err = r.cudaMallocAsync(ctypes.byref(ptr), size, ctypes.c_void_p(stream))
                if err == cudaErrorMemoryAllocation:
                    r.cudaGetLastError()  # clear CUDA error
                    device_free, device_total = _allocator.mem_get_info()
                    raise OutOfMemoryError(
                        "Allocation on device %d would exceed allowed memory. (out of memory)"
                        "\nCurrently allocated     : %s"
                        "\nRequested               : %s"
                        "\nDevice limit            : %s"
                        "\nFree (according to CUDA): %s"
                        "\nPyTorch limit (set by user-supplied memory fraction)"
                        "\n                        : %s"
                        % (device, format_size(cls.pytorch_used_bytes[device]), format_size(size),
                           format_size(device_total), format_size(device_free),
                           format_size(cls.pytorch_memory_limits[device])))
                cuda_check(err, "cudaMallocAsync")
                if ptr.value in cls.ptr_info:
                    raise RuntimeError("address returned by cudaMallocAsync already exists "
                                       "in ptr_info")
                usage = PtrUsage(ptr.value, size, False)
                usage.creation_stream = UsageStream(stream, device)
                cls.ptr_info[ptr.value] = usage
                cls.pytorch_used_bytes[device] += size
                return usage

        class CudaMallocAsyncAllocator:
            """The CUDAAllocator of this backend, seen from one device (the
            double's _C keeps one allocator object per device)."""

            def __init__(self, device):
                self.device = device
                self.record_history = False   # _cuda_isHistoryEnabled
                ns = CUDACachingAllocator.CudaMallocAsync
                with ns.general_mutex:
                    # init(dev_count): once, for every device
                    if not ns.devs_initialized_flags:
                        n = _allocator.device_count()
                        ns.device_count = n
                        ns.devs_initialized_flags = [False] * n
                        ns.dummy_unifying_free_streams = [None] * n
                        ns.pytorch_used_bytes = [0] * n
                        ns.pytorch_memory_limits = [0] * n

            @staticmethod
            def name():
                return "cudaMallocAsync"

            def malloc(self, size, stream=0):
                # allocate(): more than 1 EB is refused before any call
                if size >= 1152921504606846976:
                    raise OutOfMemoryError("CUDA out of memory. Tried to allocate more than "
                                           "1EB memory.")
                return CUDACachingAllocator.CudaMallocAsync.mallocAsync(self.device, size, stream)

            def free(self, usage):
                CUDACachingAllocator.CudaMallocAsync.freeAsync(usage)

            def record_stream(self, usage, stream):
                ns = CUDACachingAllocator.CudaMallocAsync
                with ns.general_mutex:
                    if ns.ptr_info.get(usage.ptr) is not usage:
                        raise RuntimeError("ptr not found in ptr_info")
                    to_record = UsageStream(stream, self.device)
                    if to_record.key() == usage.creation_stream.key():
                        warnings.warn("Called record_stream on tensor whose original creation "
                                      "stream matches the recorded stream. This is unnecessary "
                                      "and has no effect.")
                    else:
                        usage.recorded_streams[to_record.key()] = to_record

            def set_memory_fraction(self, fraction):
                ns = CUDACachingAllocator.CudaMallocAsync
                with ns.general_mutex:
                    with _Guard(self.device):
                        ns.lazy_init_device(self.device)
                        _, device_total = _allocator.mem_get_info()
                    ns.pytorch_memory_limits[self.device] = int(fraction * device_total)

            def empty_cache(self):
                """emptyCache() is one call for every device: the double's
                _C calls it once per device object, each trimming its own."""
                ns = CUDACachingAllocator.CudaMallocAsync
                with ns.general_mutex:
                    if ns.devs_initialized_flags[self.device]:
                        r = rt()
                        with _Guard(self.device):
                            pool = ns.default_pool(self.device)
                            r.cudaDeviceSynchronize()
                            r.cudaMemPoolTrimTo(pool, 0)

            def _attr(self, pool, attr):
                v = ctypes.c_uint64(0)
                cuda_check(rt().cudaMemPoolGetAttribute(pool, attr, ctypes.byref(v)),
                           "cudaMemPoolGetAttribute")
                return v.value

            def get_device_stats(self):
                """getDeviceStats, as the nested dict of _cuda_memoryStats."""
                ns = CUDACachingAllocator.CudaMallocAsync
                reserved_cur = reserved_peak = used_cur = used_peak = 0
                with ns.general_mutex:
                    if ns.devs_initialized_flags[self.device]:
                        with _Guard(self.device):
                            pool = ns.default_pool(self.device)
                            reserved_cur = self._attr(pool, cudaMemPoolAttrReservedMemCurrent)
                            reserved_peak = self._attr(pool, cudaMemPoolAttrReservedMemHigh)
                            used_cur = self._attr(pool, cudaMemPoolAttrUsedMemCurrent)
                            used_peak = self._attr(pool, cudaMemPoolAttrUsedMemHigh)
                zero = lambda: dict(current=0, peak=0, allocated=0, freed=0)  # noqa: E731
                d = {"num_alloc_retries": 0, "num_ooms": 0, "num_sync_all_streams": 0,
                     "num_device_alloc": 0, "num_device_free": 0, "max_split_size": 0,
                     "oversize_allocations": zero(), "oversize_segments": zero()}
                for name in _allocator.STAT_NAMES:
                    d[name] = {p: zero() for p in _allocator.POOLS}
                for name, cur, peak in (("allocated_bytes", used_cur, used_peak),
                                        ("active_bytes", used_cur, used_peak),
                                        ("reserved_bytes", reserved_cur, reserved_peak)):
                    d[name]["all"]["current"] = cur
                    d[name]["all"]["peak"] = peak
                return d

            def reset_peak_stats(self):
                with _Guard(self.device):
                    pool = CUDACachingAllocator.CudaMallocAsync.default_pool(self.device)
                    zero = ctypes.c_uint64(0)
                    for attr in (cudaMemPoolAttrReservedMemHigh, cudaMemPoolAttrUsedMemHigh):
                        cuda_check(rt().cudaMemPoolSetAttribute(pool, attr, ctypes.byref(zero)),
                                   "cudaMemPoolSetAttribute")

            @staticmethod
            def record_history_set(*args):
                raise RuntimeError("cudaMallocAsync does not yet support recordHistory. "
                                   "If you need it, please file an issue describing your use case.")

            @staticmethod
            def attach_out_of_memory_observer(observer):
                raise RuntimeError("cudaMallocAsync does not yet support "
                                   "attachOutOfMemoryObserver. If you need it, please file an "
                                   "issue describing your use case.")

            @staticmethod
            def snapshot():
                raise RuntimeError("Calling snapshot with backend:cudaMallocAsync is not "
                                   "meaningful. (For backend:native, snapshot returns a detailed "
                                   "summary of all blocks tracked by the allocator, but the "
                                   "cudaMallocAsync backend does not track individual blocks.)")


CudaMallocAsyncAllocator = CUDACachingAllocator.CudaMallocAsync.CudaMallocAsyncAllocator
