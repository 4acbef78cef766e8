# torch/_allocator.py - TEST DOUBLE: the caching allocator of the stand-in
# torch (see torch/__init__.py), a Python copy of PyTorch's
# DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp @001074d, about
# 2.3/2.4) over the CUDA runtime and driver found on LD_LIBRARY_PATH
# (libcudart.so.13 and libcuda.so.1, the simulated ones in the tests), called
# through ctypes so that every segment is a real cudaMalloc/cudaFree, and
# every expandable-segment page a real cuMemCreate/cuMemMap, that the tracer
# sees.
#
# What is kept from PyTorch @001074d, with the same names so the two read
# side by side: round_size and roundup_power2_next_division, get_pool,
# get_allocation_size, get_free_block (best fit on (stream, size, address),
# the oversize rules of max_split_size, the expandable "best fit by the size
# it can grow to"), alloc_block (memory fraction, expandable segments,
# cudaMalloc), release_available_cached_blocks, release_cached_blocks,
# release_blocks, release_block, garbage_collect_cached_blocks,
# find_expandable_block, map_block, try_allocate_expandable_block,
# unmap_block, release_expandable_segment, should_split, alloc_found_block,
# free, free_block, try_merge_blocks, recordStream, insert_events,
# process_events, synchronize_and_free_events, record_trace, snapshot, trace,
# the TraceEntryRingBuffer and every statistic that memory_stats() returns
# (oversize_allocations/oversize_segments and max_split_size included).
# The configuration (PYTORCH_CUDA_ALLOC_CONF, torch.cuda.memory.
# _set_allocator_settings) is CUDAAllocatorConfig's of the same era (see
# AllocatorConfig below).
#
# Left out: private pools (CUDA graphs and their captures), the free-memory
# callbacks registry (empty in PyTorch unless a library registers one), IPC,
# peer access, release_lock_on_cudamalloc (parsed and reported, but the
# lock is never dropped: the double's cudaMalloc is instant),
# max_non_split_rounding_mb (came after @001074d). The cudaMallocAsync
# backend is torch/_async_allocator.py; which backend runs is decided at
# import (backend_at_load_time below).
# Events: a block used on another stream (record_stream) gets one event per
# such stream at free(); the simulated GPU has no work in flight, so every
# event counts as complete at the next process_events (the next malloc) or
# synchronize_and_free_events (an OOM retry, empty_cache), as a real event
# would once the stream's work is done.
#
# Threading: one re-entrant lock per device, as PyTorch; contexts (Python
# frames) are gathered before taking it.
import bisect
import ctypes
import os
import threading
import time

kMinBlockSize = 512
kSmallSize = 1 << 20
kSmallBuffer = 2 << 20
kLargeBuffer = 20 << 20
kMinLargeAlloc = 10 << 20
kRoundLarge = 2 << 20
kRoundUpPowerOfTwoIntervals = 16
SIZE_MAX = (1 << 64) - 1
# max_split_size as PyTorch reports it when unset: SIZE_MAX cast to int64
MAX_SPLIT_SIZE = -1

cudaSuccess = 0
cudaErrorMemoryAllocation = 2
CUDA_ERROR_OUT_OF_MEMORY = 2

# RecordContext of CUDACachingAllocator.h
NEVER, STATE, ALLOC, ALL = 0, 1, 2, 3

STAT_NAMES = ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
              "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")
POOLS = ("all", "small_pool", "large_pool")

# TORCHDOUBLE_VERSION=2.1 makes the double answer as PyTorch 2.1 would
# where the versions differ (see torch/__init__.py); anything else, or
# unset, is the default (allocator @001074d, Python API @00b65a0).
TORCH21 = os.environ.get("TORCHDOUBLE_VERSION", "") == "2.1"


def _env_number(name, default, kind=float):
    v = os.environ.get(name, "")
    try:
        return kind(v) if v != "" else default
    except ValueError:
        return default


class OutOfMemoryError(RuntimeError):
    """torch._C.OutOfMemoryError (a RuntimeError, as in PyTorch)."""


def is_power_of_2(v):
    return v > 0 and (v & (v - 1)) == 0


def log2_floor(v):
    """63 - llvm::countLeadingZeros(v), for v > 0."""
    return v.bit_length() - 1


# --- the configuration (CUDAAllocatorConfig) ----------------------------------

class AllocatorConfig:
    """c10/cuda/CUDAAllocatorConfig.cpp of the 2.3/2.4 line (the revision
    whose CUDAAllocatorConfig has pinned_num_register_threads but not yet
    max_non_split_rounding_mb, as @001074d's allocator reads it; stored copy
    read: the parseArgs(const char*) version with m_last_allocator_settings).
    With TORCHDOUBLE_VERSION=2.1, the 2.1 one: no pinned_* options.
    parseArgs resets max_split_size, roundup_power2_divisions and
    garbage_collection_threshold to their defaults first (so
    _set_allocator_settings("") clears them) but keeps expandable_segments
    and the others; errors are RuntimeErrors (TORCH_CHECK)."""

    def __init__(self):
        self.max_split_size = SIZE_MAX
        self.garbage_collection_threshold = 0.0
        self.expandable_segments = False
        self.release_lock_on_cudamalloc = False
        self.pinned_use_cuda_host_register = False
        self.pinned_num_register_threads = 1
        self.roundup = [0] * kRoundUpPowerOfTwoIntervals
        self.last_allocator_settings = ""

    def roundup_power2_divisions(self, size):
        # intervals start at 1 MiB and end at 64 GiB, one per power of two
        index = log2_floor(size) - 20
        index = max(0, min(index, kRoundUpPowerOfTwoIntervals - 1))
        return self.roundup[index]

    @staticmethod
    def lex_args(env):
        config, buf = [], []
        for ch in env:
            if ch in ",:[]":
                if buf:
                    config.append("".join(buf))
                    buf = []
                config.append(ch)
            elif ch != " ":
                buf.append(ch)
        if buf:
            config.append("".join(buf))
        return config

    @staticmethod
    def consume_token(config, i, c):
        if not (i < len(config) and config[i] == c):
            raise RuntimeError("Error parsing CachingAllocator settings, expected %s" % c)

    @staticmethod
    def _int(tok):
        try:
            return int(tok)
        except ValueError:
            raise RuntimeError("stoi: no conversion of %r" % tok)

    def parse_bool(self, config, i, name):
        self.consume_token(config, i + 1, ":")
        i += 2
        if not (i < len(config) and config[i] in ("True", "False")):
            raise RuntimeError("Expected a single True/False argument for %s" % name)
        return i, config[i] == "True"

    def parse_roundup(self, config, i):
        self.consume_token(config, i + 1, ":")
        i += 2
        if i >= len(config):
            raise RuntimeError("Error, expecting roundup_power2_divisions value")
        if config[i] == "[":
            # The list form, keys in MiB: [256:1,512:2,>:4]. As in PyTorch,
            # the first key's value also fills every interval below it, and
            # ">" fills from the LAST key's interval on, that one included
            # (std::fill from last_index): [256:1,512:2,>:4] leaves 4, not 2,
            # for sizes of 512 MiB to 1 GiB.
            first_value = True
            last_index = 0
            i += 1
            while i < len(config) and config[i] != "]":
                val1 = config[i]
                self.consume_token(config, i + 1, ":")
                i += 2
                if i >= len(config):
                    raise RuntimeError("Error parsing roundup_power2_divisions value")
                val2 = self._int(config[i])
                if not (val2 == 0 or is_power_of_2(val2)) or (TORCH21 and val2 == 0):
                    raise RuntimeError("For roundups, the divisions has to be power of 2 "
                                       "or 0 to disable roundup ")
                if val1 == ">":
                    for k in range(last_index, kRoundUpPowerOfTwoIntervals):
                        self.roundup[k] = val2
                else:
                    v = self._int(val1)
                    if not is_power_of_2(v):
                        raise RuntimeError("For roundups, the intervals have to be power of 2 ")
                    index = min(max(0, log2_floor(v)), kRoundUpPowerOfTwoIntervals - 1)
                    if first_value:
                        for k in range(index):
                            self.roundup[k] = val2
                        first_value = False
                    self.roundup[index] = val2
                    last_index = index
                if i + 1 < len(config) and config[i + 1] != "]":
                    self.consume_token(config, i + 1, ",")
                    i += 1
                i += 1
        else:  # a single value, for every interval
            v = self._int(config[i])
            if not is_power_of_2(v):
                raise RuntimeError("For roundups, the divisions has to be power of 2 ")
            self.roundup = [v] * kRoundUpPowerOfTwoIntervals
        return i

    def parse_args(self, env):
        self.max_split_size = SIZE_MAX
        self.roundup = [0] * kRoundUpPowerOfTwoIntervals
        self.garbage_collection_threshold = 0.0
        if env is None:
            return
        self.last_allocator_settings = env
        config = self.lex_args(env)
        used_cudaMallocAsync = False
        used_native_specific_option = False
        i = 0
        while i < len(config):
            key = config[i]
            if key != "backend":
                used_native_specific_option = True
            if key == "max_split_size_mb":
                self.consume_token(config, i + 1, ":")
                i += 2
                if i >= len(config):
                    raise RuntimeError("Error, expecting max_split_size_mb value")
                v = self._int(config[i])
                if not v > kLargeBuffer // (1 << 20):
                    raise RuntimeError("CachingAllocator option max_split_size_mb too small, "
                                       "must be > %d" % (kLargeBuffer // (1 << 20)))
                self.max_split_size = min(v, SIZE_MAX // (1 << 20)) * (1 << 20)
            elif key == "garbage_collection_threshold":
                self.consume_token(config, i + 1, ":")
                i += 2
                if i >= len(config):
                    raise RuntimeError("Error, expecting garbage_collection_threshold value")
                try:
                    v = float(config[i])
                except ValueError:
                    raise RuntimeError("stod: no conversion of %r" % config[i])
                if not v > 0:
                    raise RuntimeError("garbage_collect_threshold too small, set it 0.0~1.0")
                if not v < 1.0:
                    raise RuntimeError("garbage_collect_threshold too big, set it 0.0~1.0")
                self.garbage_collection_threshold = v
            elif key == "roundup_power2_divisions":
                i = self.parse_roundup(config, i)
            elif key == "backend":
                self.consume_token(config, i + 1, ":")
                i += 2
                if i >= len(config):
                    raise RuntimeError("Error parsing backend value")
                if config[i] not in ("native", "cudaMallocAsync"):
                    raise RuntimeError("Unknown allocator backend, options are native and "
                                       "cudaMallocAsync")
                used_cudaMallocAsync = config[i] == "cudaMallocAsync"
                if used_cudaMallocAsync:
                    from . import _async_allocator
                    version = _async_allocator.driver_version()
                    if version < 11040:
                        raise RuntimeError("backend:cudaMallocAsync requires CUDA runtime 11.4 "
                                           "or newer, but cudaDriverGetVersion returned %d"
                                           % version)
                # the backend was chosen when the library loaded
                # (backend_at_load_time); this only double-checks it
                from . import _C
                if config[i] != _C._cuda_getAllocatorBackend():
                    raise RuntimeError("Allocator backend parsed at runtime != allocator "
                                       "backend parsed at load time")
            elif key == "expandable_segments":
                i, self.expandable_segments = self.parse_bool(config, i, key)
            elif key == "release_lock_on_cudamalloc":
                i, self.release_lock_on_cudamalloc = self.parse_bool(config, i, key)
            elif key == "pinned_use_cuda_host_register" and not TORCH21:
                i, self.pinned_use_cuda_host_register = self.parse_bool(config, i, key)
            elif key == "pinned_num_register_threads" and not TORCH21:
                self.consume_token(config, i + 1, ":")
                i += 2
                if i >= len(config):
                    raise RuntimeError("Error, expecting pinned_num_register_threads value")
                v = self._int(config[i])
                if not is_power_of_2(v):
                    raise RuntimeError("Number of register threads has to be power of 2 ")
                if v > 128:
                    raise RuntimeError("Number of register threads should be less than or "
                                       "equal to 128")
                self.pinned_num_register_threads = v
            else:
                raise RuntimeError("Unrecognized CachingAllocator option: %s" % key)
            if i + 1 < len(config):
                self.consume_token(config, i + 1, ",")
                i += 1
            i += 1
        if used_cudaMallocAsync and used_native_specific_option:
            # TORCH_WARN, a UserWarning from Python
            import warnings
            warnings.warn("backend:cudaMallocAsync ignores max_split_size_mb,"
                          "roundup_power2_divisions, and garbage_collect_threshold.")


def _alloc_conf_env():
    """The settings string of the environment, as config() reads it."""
    env = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
    if env is None and not TORCH21:
        env = os.environ.get("PYTORCH_ALLOC_CONF")
    return env


def backend_at_load_time():
    """BackendStaticInitializer::parseEnvForBackend of
    c10/cuda/CUDACachingAllocator.cpp (the 2.3/2.4 line, as @001074d): at
    load time, the settings split on blanks and commas, each option on
    colons; the first "backend" whose value is cudaMallocAsync or native
    decides, anything else is left to the configuration's checks, and
    native is the default. (It reads PYTORCH_CUDA_ALLOC_CONF; the double
    also reads PYTORCH_ALLOC_CONF where that is unset, as config() does.)"""
    import re
    env = _alloc_conf_env()
    if env is not None:
        for option in re.split(r"[\s,]+", env):
            kv = re.split(r"[:]+", option)
            if len(kv) >= 2 and kv[0] == "backend":
                if kv[1] == "cudaMallocAsync":
                    return "cudaMallocAsync"
                if kv[1] == "native":
                    return "native"
    return "native"


_config = None
_config_lock = threading.Lock()


def config():
    """CUDAAllocatorConfig::instance(): parsed once, at first use, from
    PYTORCH_CUDA_ALLOC_CONF; where that is unset, from PYTORCH_ALLOC_CONF,
    as the newer releases read it (c10/cuda/CUDAAllocatorConfig.h of the
    2.9+ line: PYTORCH_CUDA_ALLOC_CONF first, then PYTORCH_ALLOC_CONF);
    2.1 reads PYTORCH_CUDA_ALLOC_CONF only."""
    global _config
    with _config_lock:
        if _config is None:
            c = AllocatorConfig()
            c.parse_args(_alloc_conf_env())
            _config = c
        return _config


def set_allocator_settings(env):
    """CUDACachingAllocator::setAllocatorSettings(env): parseArgs again."""
    config().parse_args(env)


# --- the CUDA runtime --------------------------------------------------------

_rt = None
_rt_lock = threading.Lock()


def runtime():
    """libcudart.so.13 through ctypes, loaded once; None if it cannot be."""
    global _rt
    with _rt_lock:
        if _rt is None:
            try:
                rt = ctypes.CDLL("libcudart.so.13")
            except OSError:
                return None
            vp, sz, ip = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
            rt.cudaMalloc.argtypes = [ctypes.POINTER(vp), sz]
            rt.cudaFree.argtypes = [vp]
            rt.cudaMemGetInfo.argtypes = [ctypes.POINTER(sz), ctypes.POINTER(sz)]
            rt.cudaSetDevice.argtypes = [ip]
            rt.cudaGetDevice.argtypes = [ctypes.POINTER(ip)]
            rt.cudaGetDeviceCount.argtypes = [ctypes.POINTER(ip)]
            rt.cudaDeviceSynchronize.argtypes = []
            rt.cudaGetLastError.argtypes = []
            rt.cudaStreamCreate.argtypes = [ctypes.POINTER(vp)]
            rt.cudaStreamSynchronize.argtypes = [vp]
            _rt = rt
        return _rt


_drv = None


class CUmemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CUmemAllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", CUmemLocation), ("win32HandleMetaData", ctypes.c_void_p),
                ("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class CUmemAccessDesc(ctypes.Structure):
    _fields_ = [("location", CUmemLocation), ("flags", ctypes.c_int)]


def driver():
    """libcuda.so.1 through ctypes, for the virtual memory calls of
    expandable segments (PyTorch calls them through its DriverAPI table:
    cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap,
    cuMemRelease, cuMemAddressFree), so that memtrace sees them as the
    driver calls they are."""
    global _drv
    with _rt_lock:
        if _drv is None:
            d = ctypes.CDLL("libcuda.so.1")
            u64, sz = ctypes.c_uint64, ctypes.c_size_t
            d.cuMemAddressReserve.argtypes = [ctypes.POINTER(u64), sz, sz, u64, ctypes.c_ulonglong]
            d.cuMemAddressFree.argtypes = [u64, sz]
            d.cuMemCreate.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), sz,
                                      ctypes.POINTER(CUmemAllocationProp), ctypes.c_ulonglong]
            d.cuMemRelease.argtypes = [ctypes.c_ulonglong]
            d.cuMemMap.argtypes = [u64, sz, sz, ctypes.c_ulonglong, ctypes.c_ulonglong]
            d.cuMemUnmap.argtypes = [u64, sz]
            d.cuMemSetAccess.argtypes = [u64, sz, ctypes.POINTER(CUmemAccessDesc), sz]
            _drv = d
        return _drv


def driver_check(err, what):
    if err != 0:
        raise RuntimeError("CUDA driver error: %s failed with error %d" % (what, err))


def cuda_check(err, what):
    if err != cudaSuccess:
        raise RuntimeError("CUDA error: %s failed with error %d" % (what, err))


def device_count():
    rt = runtime()
    if rt is None:
        return 0
    n = ctypes.c_int(0)
    if rt.cudaGetDeviceCount(ctypes.byref(n)) != cudaSuccess:
        rt.cudaGetLastError()
        return 0
    return n.value


def get_device():
    n = ctypes.c_int(0)
    cuda_check(runtime().cudaGetDevice(ctypes.byref(n)), "cudaGetDevice")
    return n.value


def set_device(d):
    cuda_check(runtime().cudaSetDevice(d), "cudaSetDevice")


def mem_get_info():
    free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
    cuda_check(runtime().cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)), "cudaMemGetInfo")
    return free.value, total.value


def format_size(size):
    """c10's format_size, for the OutOfMemoryError message."""
    if size <= 1024:
        return "%d bytes" % size
    if size <= 1048576:
        return "%.2f KiB" % (size / 1024.0)
    if size <= 1073741824:
        return "%.2f MiB" % (size / 1048576.0)
    return "%.2f GiB" % (size / 1073741824.0)


# --- contexts: the Python frames PyTorch's gather() would capture -------------

_own_dir = __file__.rsplit("/", 1)[0] + "/"


def gather():
    """The caller's Python frames, innermost first, as the snapshot's
    {"filename", "line", "name"} dicts, without the double's own frames
    (in PyTorch torch.empty and Tensor deallocation are C++ code)."""
    import sys
    frames = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_own_dir):
            frames.append({"filename": code.co_filename, "line": f.f_lineno, "name": code.co_name})
        f = f.f_back
    return frames


def copy_frames(context):
    return [dict(f) for f in context] if context else []


# --- the ring buffer (TraceEntryRingBuffer of CUDACachingAllocator.cpp @001074d) --
# set_max_entries does not re-linearize: on a wrapped ring whose max is then
# raised, new entries are appended after the array's end while reading still
# starts at `next`, so the order read is no longer oldest first.

class RingBuffer:
    def __init__(self):
        self.max_entries = 1
        self.next = 0
        self.entries = []

    def set_max_entries(self, n):
        self.max_entries = max(1, n)

    def insert(self, entry):
        if len(self.entries) < self.max_entries:
            self.entries.append(entry)
        elif self.next >= len(self.entries):
            # max entries lowered below the size of a wrapped ring: PyTorch
            # writes past the vector's end here (undefined); the double wraps
            self.entries[0] = entry
            self.next = 1 % self.max_entries
        else:
            self.entries[self.next] = entry
            self.next += 1
            if self.next == self.max_entries:
                self.next = 0

    def get(self):
        """Oldest first."""
        return self.entries[self.next:] + self.entries[:self.next]

    def clear(self):
        self.next = 0
        self.entries = []


# --- blocks and pools --------------------------------------------------------

class Block:
    __slots__ = ("device", "stream", "size", "requested_size", "pool", "ptr", "allocated",
                 "mapped", "prev", "next", "context", "segment_context", "stream_uses",
                 "event_count", "gc_count_base", "expandable_segment")

    def __init__(self, device, stream, size, pool, ptr):
        self.device = device
        self.stream = stream
        self.size = size
        self.requested_size = 0
        self.pool = pool
        self.ptr = ptr
        self.allocated = False
        # backed by physical pages; always true outside expandable segments
        self.mapped = True
        self.prev = None
        self.next = None
        self.context = None          # context_when_allocated
        self.segment_context = None  # context_when_segment_allocated
        self.stream_uses = set()     # streams the block was used on (record_stream)
        self.event_count = 0         # outstanding events
        self.gc_count_base = 0       # get_free_blocks_call_count when inserted
        self.expandable_segment = None

    def is_split(self):
        return self.prev is not None or self.next is not None

    def gc_count(self):
        return self.pool.get_free_blocks_call_count - self.gc_count_base

    def splice(self, before, after):
        if before is not None:
            before.next = self
        self.prev = before
        if after is not None:
            after.prev = self
        self.next = after

    def key(self):
        # BlockComparatorSize: stream, then size, then address
        return (self.stream, self.size, self.ptr)

    def address_key(self):
        # BlockComparatorAddress: stream, then address
        return (self.stream, self.ptr)


class BlockPool:
    def __init__(self, small):
        self.is_small = small
        self.blocks = set()     # free, mapped blocks
        self.unmapped = set()   # unmapped ranges of expandable segments
        self.get_free_blocks_call_count = 0

    def insert_into_blocks(self, block):
        block.gc_count_base = self.get_free_blocks_call_count
        self.blocks.add(block)

    def sorted(self):
        return sorted(self.blocks, key=Block.key)


class AllocParams:
    __slots__ = ("size", "stream", "pool", "alloc_size", "block", "err")

    def __init__(self, size, stream, pool, alloc_size):
        self.size = size
        self.stream = stream
        self.pool = pool
        self.alloc_size = alloc_size
        self.block = None
        self.err = cudaSuccess


class ExpandableSegment:
    """ExpandableSegment of CUDACachingAllocator.cpp @001074d: one virtual
    address reservation of 1 1/8 the device's memory, in pages of
    segment_size (2 MiB for the small pool, 20 MiB for the large one), each
    page one cuMemCreate mapped with cuMemMap, through the simulated driver
    (libcuda.so.1): memtrace sees the reservation, the physical pages and
    the mappings as the driver calls they are."""

    def __init__(self, device, stream, segment_size):
        self.device = device
        self.stream = stream
        self.segment_size = segment_size
        _, total = mem_get_info()
        self.max_handles = self.num_segments(total + total // 8)
        self.handles = []
        ptr = ctypes.c_uint64(0)
        driver_check(driver().cuMemAddressReserve(ctypes.byref(ptr),
                                                  self.segment_size * self.max_handles, 0, 0, 0),
                     "cuMemAddressReserve")
        self.ptr = ptr.value

    def size(self):
        return self.max_handles * self.segment_size

    def num_segments(self, size):
        return (size + self.segment_size - 1) // self.segment_size

    def segment_left(self, p):
        return (p - self.ptr) // self.segment_size

    def segment_right(self, p):
        return self.num_segments(p - self.ptr)

    def range_from_handles(self, begin, end):
        return self.ptr + self.segment_size * begin, self.segment_size * (end - begin)

    def map(self, ptr, size):
        """(ptr, size) actually mapped, size 0 when out of memory."""
        begin, end = self.segment_left(ptr), self.segment_right(ptr + size)
        if begin == end:
            return self.range_from_handles(begin, end)
        while end > len(self.handles):
            self.handles.append(None)
        d = driver()
        for i in range(begin, end):
            prop = CUmemAllocationProp()
            prop.type = 1                  # CU_MEM_ALLOCATION_TYPE_PINNED
            prop.requestedHandleTypes = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            prop.location.type = 1         # CU_MEM_LOCATION_TYPE_DEVICE
            prop.location.id = self.device
            h = ctypes.c_ulonglong(0)
            status = d.cuMemCreate(ctypes.byref(h), self.segment_size, ctypes.byref(prop), 0)
            if status == CUDA_ERROR_OUT_OF_MEMORY:
                for j in range(begin, i):
                    hj, self.handles[j] = self.handles[j], None
                    driver_check(d.cuMemRelease(hj), "cuMemRelease")
                self.trim_handles()
                return self.range_from_handles(begin, begin)
            driver_check(status, "cuMemCreate")
            self.handles[i] = h.value
        for i in range(begin, end):
            driver_check(d.cuMemMap(self.ptr + i * self.segment_size, self.segment_size, 0,
                                    self.handles[i], 0), "cuMemMap")
        desc = CUmemAccessDesc()
        desc.location.type = 1
        desc.location.id = self.device
        desc.flags = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        driver_check(d.cuMemSetAccess(self.ptr + begin * self.segment_size,
                                      (end - begin) * self.segment_size, ctypes.byref(desc), 1),
                     "cuMemSetAccess")
        return self.range_from_handles(begin, end)

    def unmap(self, ptr, size):
        """Unmaps the whole pages inside [ptr, ptr + size)."""
        begin, end = self.segment_right(ptr), self.segment_left(ptr + size)
        if begin >= end:
            return ptr, 0
        self.unmap_handles(begin, end)
        return self.range_from_handles(begin, end)

    def unmap_handles(self, begin, end):
        rt = runtime()
        if self.stream is not None:
            cuda_check(rt.cudaStreamSynchronize(ctypes.c_void_p(self.stream)), "cudaStreamSynchronize")
        else:
            cuda_check(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
        d = driver()
        for i in range(begin, end):
            h, self.handles[i] = self.handles[i], None
            driver_check(d.cuMemUnmap(self.ptr + self.segment_size * i, self.segment_size),
                         "cuMemUnmap")
            driver_check(d.cuMemRelease(h), "cuMemRelease")
        self.trim_handles()

    def trim_handles(self):
        while self.handles and self.handles[-1] is None:
            self.handles.pop()

    def destroy(self):
        start = None
        for i, h in enumerate(self.handles + [None]):
            if h is not None and start is None:
                start = i
            elif h is None and start is not None:
                self.unmap_handles(start, i)
                start = None
        driver_check(driver().cuMemAddressFree(self.ptr, self.segment_size * self.max_handles),
                     "cuMemAddressFree")


class Stats:
    def __init__(self):
        self.arrays = {name: {p: dict(current=0, peak=0, allocated=0, freed=0) for p in POOLS}
                       for name in STAT_NAMES}
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0
        self.oversize_allocations = dict(current=0, peak=0, allocated=0, freed=0)
        self.oversize_segments = dict(current=0, peak=0, allocated=0, freed=0)
        # DeviceCachingAllocator(): stats.max_split_size, set once
        self.max_split_size = config().max_split_size
        if self.max_split_size >= 1 << 63:
            self.max_split_size -= 1 << 64

    def increase(self, name, pool, amount):
        for p in ("all", pool):
            s = self.arrays[name][p]
            s["current"] += amount
            s["peak"] = max(s["peak"], s["current"])
            s["allocated"] += amount

    def decrease(self, name, pool, amount):
        for p in ("all", pool):
            s = self.arrays[name][p]
            s["current"] -= amount
            s["freed"] += amount

    @staticmethod
    def increase_one(s, amount):
        s["current"] += amount
        s["peak"] = max(s["peak"], s["current"])
        s["allocated"] += amount

    @staticmethod
    def decrease_one(s, amount):
        s["current"] -= amount
        s["freed"] += amount

    def as_nested_dict(self):
        """torch._C._cuda_memoryStats (torch/csrc/cuda/Module.cpp)."""
        d = {"num_alloc_retries": self.num_alloc_retries, "num_ooms": self.num_ooms,
             "num_sync_all_streams": self.num_sync_all_streams,
             "num_device_alloc": self.num_device_alloc, "num_device_free": self.num_device_free,
             "max_split_size": self.max_split_size,
             "oversize_allocations": dict(self.oversize_allocations),
             "oversize_segments": dict(self.oversize_segments)}
        for name in STAT_NAMES:
            d[name] = {p: dict(v) for p, v in self.arrays[name].items()}
        return d


def pool_name(pool):
    return "small_pool" if pool.is_small else "large_pool"


_libc_gil = None


def _busy_wait_us(us):
    """Spends `us` microseconds without letting another Python thread run,
    as PyTorch's _snapshot() is one C++ call that holds the GIL from start
    to end: libc's usleep called through ctypes.PyDLL, which keeps the GIL
    (a Python spin loop would hand it over at the next switch request).
    It waits rather than spins: the stall is the same, the CPU is not."""
    global _libc_gil
    if us <= 0:
        return
    if _libc_gil is None:
        _libc_gil = ctypes.PyDLL(None)
        _libc_gil.usleep.argtypes = [ctypes.c_uint]
    end = time.perf_counter_ns() + int(us * 1000)
    while True:
        left = (end - time.perf_counter_ns()) // 1000
        if left <= 0:
            break
        _libc_gil.usleep(min(left, 900000))


# --- one device --------------------------------------------------------------

class CUDACachingAllocator:
    """Stands for the C++ namespace c10::cuda::CUDACachingAllocator, so that
    the double's frames carry the name by which memtrace recognizes
    PyTorch's allocator (its segments are the cache, not buffers).
    Python 3.11+ frames show the qualified name."""

    class DeviceCachingAllocator:
        def __init__(self, device):
            self.device = device
            self.lock = threading.RLock()
            self.stats = Stats()
            self.large_blocks = BlockPool(False)
            self.small_blocks = BlockPool(True)
            self.active_blocks = set()
            self.cuda_events = {}         # stream -> [block, ...], oldest first
            self.total_allocated_memory = 0
            self.allowed_memory_maximum = 0
            self.set_fraction = False
            self.expandable_segments = []
            self.record_history = False
            self.record_context = NEVER
            self.skip_actions = frozenset()
            self.alloc_buffer = RingBuffer()
            self.oom_observers = []

        def record_history_set(self, enabled, max_entries, when, clear_history, skip_actions):
            # recordHistory @001074d: max entries set without re-linearizing
            # a wrapped ring (RingBuffer.set_max_entries); cleared on disable
            with self.lock:
                self.record_history = enabled
                self.alloc_buffer.set_max_entries(max_entries)
                self.record_context = when if enabled else NEVER
                self.skip_actions = frozenset(skip_actions or ())
                if not enabled or clear_history:
                    self.alloc_buffer.clear()

        def maybe_gather_context(self, level):
            if self.record_context < level:
                return None
            return gather()

        def record_trace(self, action, addr, size, stream, device, context):
            if not self.record_history or action in self.skip_actions:
                return
            # the raw stamp (PyTorch: getApproximateTime(), the TSC); trace()
            # converts it with the snapshot's fit
            self.alloc_buffer.insert((action, addr, size, stream, time.time_ns(),
                                      context if self.record_context >= ALLOC else None))

        # --- sizes ---

        @staticmethod
        def roundup_power2_next_division(size, divisions):
            if is_power_of_2(size):
                return size
            if divisions < 2:
                raise RuntimeError("Only 2 or more divisions are supported")
            power2_floor = 1 << log2_floor(size)
            power2_division = power2_floor >> log2_floor(divisions)
            if power2_division == 0:
                return power2_floor << 1
            round_size_floor = size & ~(power2_division - 1)
            return size if round_size_floor == size else round_size_floor + power2_division

        @classmethod
        def round_size(cls, size):
            if size < kMinBlockSize:
                return kMinBlockSize
            divisions = config().roundup_power2_divisions(size)
            if divisions > 1 and size > kMinBlockSize * divisions:
                return cls.roundup_power2_next_division(size, divisions)
            return kMinBlockSize * ((size + kMinBlockSize - 1) // kMinBlockSize)

        @staticmethod
        def get_allocation_size(size):
            if size <= kSmallSize:
                return kSmallBuffer
            if size < kMinLargeAlloc:
                return kLargeBuffer
            return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)

        def get_pool(self, size):
            return self.small_blocks if size <= kSmallSize else self.large_blocks

        def should_split(self, block, size):
            remaining = block.size - size
            if block.pool.is_small or config().expandable_segments:
                return remaining >= kMinBlockSize
            return size < config().max_split_size and remaining > kSmallSize

        # --- malloc ---

        def get_free_block(self, p):
            pool = p.pool
            cfg = config()
            if self.set_fraction and cfg.garbage_collection_threshold > 0.0:
                pool.get_free_blocks_call_count += 1
            blocks = pool.sorted()
            i = bisect.bisect_left([b.key() for b in blocks], (p.stream, p.size, 0))
            n = len(blocks)
            if i == n or blocks[i].stream != p.stream:
                return False
            if blocks[i].expandable_segment is not None:
                if cfg.expandable_segments:
                    # best fit by the size a block can grow to
                    def expandable_size(b):
                        return b.size + (b.next.size if b.next is not None and not b.next.mapped
                                         else 0)
                    nxt = i + 1
                    while (blocks[i].expandable_segment is not None and nxt < n and
                           blocks[nxt].stream == p.stream and
                           expandable_size(blocks[nxt]) < expandable_size(blocks[i])):
                        i = nxt
                        nxt += 1
                else:
                    # expandable segments turned off since: non-expandable blocks only
                    i += 1
                    while (i < n and blocks[i].expandable_segment is not None and
                           blocks[i].stream == p.stream):
                        i += 1
                    if i == n or blocks[i].stream != p.stream:
                        return False
            b = blocks[i]
            mss = cfg.max_split_size
            # Do not return an oversized block for a large request
            if p.size < mss and b.size >= mss:
                return False
            # Allow oversized block size to be rounded up but within a limit
            if p.size >= mss and b.size >= p.size + kLargeBuffer:
                return False
            p.block = b
            pool.blocks.discard(b)
            return True

        def garbage_collect_cached_blocks(self, context):
            gc_threshold = int(config().garbage_collection_threshold *
                               float(self.allowed_memory_maximum))
            if self.total_allocated_memory <= gc_threshold:
                return
            target_size = self.total_allocated_memory - gc_threshold
            gc_reclaimed = 0
            total_age = 0
            freeable_block_count = 0
            for b in self.large_blocks.sorted():
                if not b.is_split():
                    total_age += b.gc_count()
                    freeable_block_count += 1
            if freeable_block_count == 0:
                return
            block_freed = True
            while gc_reclaimed < target_size and block_freed and freeable_block_count > 0:
                age_threshold = float(total_age) / freeable_block_count
                block_freed = False
                for block in self.large_blocks.sorted():
                    if not block.is_split() and float(block.gc_count()) >= age_threshold:
                        block_freed = True
                        gc_reclaimed += block.size
                        total_age -= block.gc_count()
                        freeable_block_count -= 1
                        self.release_block(block, context)

        def alloc_block(self, p, is_retry, context):
            """A new segment (cudaMalloc), or new pages of an expandable one."""
            size = p.alloc_size
            if is_retry:
                self.stats.num_alloc_retries += 1
            if self.set_fraction and self.total_allocated_memory + size > self.allowed_memory_maximum:
                p.err = cudaErrorMemoryAllocation
                return False
            if config().expandable_segments:
                p.block = self.try_allocate_expandable_block(p.stream, p.pool, p.size, context)
                p.err = cudaSuccess if p.block is not None else cudaErrorMemoryAllocation
                return p.block is not None
            rt = runtime()
            ptr = ctypes.c_void_p()
            err = rt.cudaMalloc(ctypes.byref(ptr), size)
            if err != cudaSuccess:
                rt.cudaGetLastError()
                if err != cudaErrorMemoryAllocation:
                    cuda_check(err, "cudaMalloc")
                p.err = err
                return False
            self.total_allocated_memory += size
            p.block = Block(self.device, p.stream, size, p.pool, ptr.value)
            pn = pool_name(p.pool)
            self.stats.increase("segment", pn, 1)
            self.stats.increase("reserved_bytes", pn, size)
            if size >= config().max_split_size:
                Stats.increase_one(self.stats.oversize_segments, 1)
            self.stats.num_device_alloc += 1
            self.record_trace("segment_alloc", p.block.ptr, p.block.size, p.stream, self.device,
                              context)
            p.block.segment_context = context
            return True

        def release_available_cached_blocks(self, p, context):
            """Frees oversize blocks, only enough for the request; only with
            max_split_size set."""
            mss = config().max_split_size
            if mss == SIZE_MAX:
                return False
            pool = p.pool
            key_size = mss if p.size < mss else p.size
            blocks = pool.sorted()
            it = bisect.bisect_left([b.key() for b in blocks], (p.stream, key_size, 0))
            if it == len(blocks) or blocks[it].stream != p.stream:
                # no single block is large enough: free oversize ones, largest first
                if it == 0:
                    return False
                total_released = 0
                it -= 1
                while (total_released < key_size and blocks[it].size >= mss and
                       blocks[it].stream == p.stream):
                    cur = blocks[it]
                    total_released += cur.size
                    if it != 0:
                        it -= 1
                        self.release_block(cur, context)
                    else:
                        self.release_block(cur, context)
                        break
                if total_released < key_size:
                    return False
            else:
                self.release_block(blocks[it], context)
            return True

        def release_cached_blocks(self, context):
            self.synchronize_and_free_events(context)
            self.release_blocks(self.large_blocks, context)
            self.release_blocks(self.small_blocks, context)
            return True

        def release_block(self, block, context):
            assert block.expandable_segment is None
            self.stats.num_device_free += 1
            self.record_trace("segment_free", block.ptr, block.size, block.stream, self.device,
                              context if context is not None else block.segment_context)
            cuda_check(runtime().cudaFree(ctypes.c_void_p(block.ptr)), "cudaFree")
            self.total_allocated_memory -= block.size
            pn = pool_name(block.pool)
            self.stats.decrease("segment", pn, 1)
            self.stats.decrease("reserved_bytes", pn, block.size)
            if block.size >= config().max_split_size:
                Stats.decrease_one(self.stats.oversize_segments, 1)
            block.pool.blocks.discard(block)

        def release_blocks(self, pool, context):
            to_unmap = []
            for block in pool.sorted():
                if block.expandable_segment is not None:
                    to_unmap.append(block)
                elif block.prev is None and block.next is None:
                    self.release_block(block, context)
            for block in to_unmap:
                self.unmap_block(block, context)
                if block.prev is None and block.next is None:
                    self.release_expandable_segment(block)

        def release_expandable_segment(self, block):
            assert block.size == block.expandable_segment.size(), "block disagrees with segment"
            assert not block.mapped
            self.expandable_segments.remove(block.expandable_segment)
            block.pool.unmapped.discard(block)
            block.expandable_segment.destroy()

        # --- expandable segments ---

        def find_expandable_block(self, stream, pool, size):
            def allocatable(b):
                return (b is not None and not b.allocated and b.event_count == 0 and
                        not b.stream_uses)

            def has_available_address_space(b):
                nbytes = 0
                while nbytes < size and allocatable(b):
                    nbytes += b.size
                    b = b.next
                return nbytes >= size

            for c in sorted(pool.unmapped, key=Block.address_key):
                if c.stream < stream:
                    continue
                if c.stream != stream:
                    break
                # the lowest unmapped address, maybe with a free block before it
                if allocatable(c.prev):
                    c = c.prev
                if has_available_address_space(c):
                    return c
            segment_size = kSmallBuffer if pool.is_small else kLargeBuffer
            es = ExpandableSegment(self.device, stream, segment_size)
            self.expandable_segments.append(es)
            candidate = Block(self.device, stream, es.size(), pool, es.ptr)
            candidate.mapped = False
            candidate.expandable_segment = es
            pool.unmapped.add(candidate)
            return candidate

        def map_block(self, to_map, size, ctx):
            assert not to_map.mapped and size <= to_map.size
            assert to_map.context is None
            mptr, msize = to_map.expandable_segment.map(to_map.ptr, size)
            if msize == 0:
                return False
            assert mptr == to_map.ptr and msize >= size
            pool = to_map.pool
            pool.unmapped.discard(to_map)
            to_map.mapped = True
            if msize < to_map.size:
                remaining = Block(to_map.device, to_map.stream, to_map.size - msize, pool,
                                  to_map.ptr + msize)
                remaining.mapped = False
                remaining.expandable_segment = to_map.expandable_segment
                remaining.splice(to_map, to_map.next)
                pool.unmapped.add(remaining)
                to_map.size = msize
            self.try_merge_blocks(to_map, to_map.prev, pool)
            self.try_merge_blocks(to_map, to_map.next, pool)
            pool.insert_into_blocks(to_map)
            self.total_allocated_memory += msize
            self.stats.increase("reserved_bytes", pool_name(pool), msize)
            self.stats.num_device_alloc += 1
            self.record_trace("segment_map", mptr, msize, to_map.stream, to_map.device, ctx)
            if to_map.prev is None and to_map.segment_context is None:
                to_map.segment_context = ctx
            return True

        def try_allocate_expandable_block(self, stream, pool, size, ctx):
            candidate = self.find_expandable_block(stream, pool, size)
            if not candidate.mapped and not self.map_block(candidate, min(candidate.size, size), ctx):
                return None
            assert candidate.mapped
            while candidate.size < size:
                remaining = size - candidate.size
                new_candidate = candidate.next
                if not self.map_block(new_candidate, min(remaining, candidate.next.size), ctx):
                    return None
                candidate = new_candidate
            pool.blocks.discard(candidate)
            return candidate

        def unmap_block(self, block, context):
            es = block.expandable_segment
            uptr, usize = es.unmap(block.ptr, block.size)
            if usize == 0:
                return
            pool = block.pool
            pool.blocks.discard(block)
            before_size = uptr - block.ptr
            if before_size > 0:
                before_free = Block(block.device, block.stream, before_size, pool, block.ptr)
                before_free.expandable_segment = es
                before_free.splice(block.prev, block)
                pool.insert_into_blocks(before_free)
            after_size = block.size - (before_size + usize)
            if after_size > 0:
                after_free = Block(block.device, block.stream, after_size, pool, uptr + usize)
                after_free.expandable_segment = es
                after_free.splice(block, block.next)
                pool.insert_into_blocks(after_free)
            block.ptr = uptr
            block.size = usize
            block.mapped = False
            self.try_merge_blocks(block, block.prev, pool)
            self.try_merge_blocks(block, block.next, pool)
            pool.unmapped.add(block)
            self.total_allocated_memory -= usize
            self.stats.decrease("reserved_bytes", pool_name(pool), usize)
            self.stats.num_device_free += 1
            self.record_trace("segment_unmap", uptr, usize, block.stream, block.device,
                              context if context is not None else block.segment_context)

        # --- the entry points ---

        def malloc(self, orig_size, stream=0):
            context = self.maybe_gather_context(STATE)
            with self.lock:
                self.process_events(context)
                size = self.round_size(orig_size)
                pool = self.get_pool(size)
                alloc_size = self.get_allocation_size(size)
                p = AllocParams(size, stream, pool, alloc_size)
                # (trigger_free_memory_callbacks: no callback is registered)
                found = self.get_free_block(p)
                if not found:
                    if self.set_fraction and config().garbage_collection_threshold > 0.0:
                        self.garbage_collect_cached_blocks(context)
                    found = (self.alloc_block(p, False, context) or
                             (self.release_available_cached_blocks(p, context) and
                              self.alloc_block(p, False, context)) or
                             (self.release_cached_blocks(context) and
                              self.alloc_block(p, True, context)))
                if found:
                    return self.alloc_found_block(p, orig_size, context,
                                                  self.should_split(p.block, p.size))
                device_free, device_total = mem_get_info()
                self.record_trace("oom", device_free, size, stream, self.device, context)
                self.stats.num_ooms += 1
                allocated = self.stats.arrays["allocated_bytes"]["all"]["current"]
                reserved = self.stats.arrays["reserved_bytes"]["all"]["current"]
                observers = list(self.oom_observers)
                allowed_info = ""
                if self.set_fraction:
                    allowed_info = format_size(self.allowed_memory_maximum) + " allowed; "
                limit = self.allowed_memory_maximum if self.set_fraction else device_total
            # the observers run without the allocator's lock, as in PyTorch
            for obs in observers:
                obs(self.device, alloc_size, limit, device_free)
            raise OutOfMemoryError(
                "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of "
                "which %s is free. %sOf the allocated memory %s is allocated by PyTorch, and %s is "
                "reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
                "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
                "fragmentation.  See documentation for Memory Management  "
                "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
                % (format_size(alloc_size), self.device, format_size(device_total),
                   format_size(device_free), allowed_info, format_size(allocated),
                   format_size(reserved - allocated)))

        def alloc_found_block(self, p, orig_size, context, split_remainder):
            size = p.size
            pool = p.pool
            pn = pool_name(pool)
            block = p.block
            already_split = block.is_split()
            if split_remainder:
                remaining = block
                block = Block(self.device, p.stream, size, pool, remaining.ptr)
                block.expandable_segment = remaining.expandable_segment
                block.prev = remaining.prev
                if block.prev is not None:
                    block.prev.next = block
                block.next = remaining
                remaining.prev = block
                remaining.ptr += size
                remaining.size -= size
                # as in PyTorch, context_when_segment_allocated stays with the
                # remainder, so a split segment's head reports no frames
                pool.insert_into_blocks(remaining)
                if already_split and block.expandable_segment is None:
                    self.stats.decrease("inactive_split_bytes", pn, block.size)
                elif block.expandable_segment is None:
                    self.stats.increase("inactive_split_bytes", pn, remaining.size)
                    self.stats.increase("inactive_split", pn, 1)
            elif already_split and block.expandable_segment is None:
                self.stats.decrease("inactive_split_bytes", pn, block.size)
                self.stats.decrease("inactive_split", pn, 1)

            block.allocated = True
            block.requested_size = orig_size
            block.context = context
            self.record_trace("alloc", block.ptr, orig_size, block.stream, self.device, context)
            self.active_blocks.add(block)
            self.stats.increase("allocation", pn, 1)
            self.stats.increase("allocated_bytes", pn, block.size)
            self.stats.increase("active", pn, 1)
            self.stats.increase("active_bytes", pn, block.size)
            self.stats.increase("requested_bytes", pn, block.requested_size)
            if block.size >= config().max_split_size:
                Stats.increase_one(self.stats.oversize_allocations, 1)
            return block

        def record_stream(self, block, stream):
            with self.lock:
                # uses on the allocation stream need no synchronization
                if stream == block.stream:
                    return
                block.stream_uses.add(stream)

        def free(self, block):
            context = self.maybe_gather_context(ALL)
            with self.lock:
                block.allocated = False
                pn = pool_name(block.pool)
                self.stats.decrease("allocation", pn, 1)
                self.stats.decrease("allocated_bytes", pn, block.size)
                self.record_trace("free_requested", block.ptr, block.requested_size, block.stream,
                                  self.device, context if context is not None else block.context)
                if block.size >= config().max_split_size:
                    Stats.decrease_one(self.stats.oversize_allocations, 1)
                if block.stream_uses:
                    self.insert_events(block)
                else:
                    self.free_block(block, context)

        def insert_events(self, block):
            streams, block.stream_uses = block.stream_uses, set()
            for s in sorted(streams):
                block.event_count += 1
                self.cuda_events.setdefault(s, []).append(block)

        def process_events(self, context):
            # every event is complete by now on the simulated GPU (no work in
            # flight): cudaEventQuery would answer cudaSuccess for each
            for s in list(self.cuda_events):
                for block in self.cuda_events.pop(s):
                    block.event_count -= 1
                    if block.event_count == 0:
                        self.free_block(block, context)

        def synchronize_and_free_events(self, context):
            self.stats.num_sync_all_streams += 1
            self.process_events(context)

        def try_merge_blocks(self, dst, src, pool):
            if (src is None or src.allocated or src.event_count > 0 or src.stream_uses or
                    dst.mapped != src.mapped):
                return 0
            if dst.prev is src:  # [src dst]
                dst.ptr = src.ptr
                dst.prev = src.prev
                if dst.prev is not None:
                    dst.prev.next = dst
                dst.segment_context = src.segment_context
            else:  # [dst src]
                dst.next = src.next
                if dst.next is not None:
                    dst.next.prev = dst
            dst.size += src.size
            if src.mapped:
                pool.blocks.discard(src)
            else:
                pool.unmapped.discard(src)
            return src.size

        def free_block(self, block, context):
            assert not block.allocated and block.event_count == 0 and not block.stream_uses
            self.record_trace("free_completed", block.ptr, block.requested_size, block.stream,
                              self.device, context if context is not None else block.context)
            block.context = None
            original_size = block.size
            requested_size = block.requested_size
            pool = block.pool
            pn = pool_name(pool)
            net_blocks = 0
            net_size = 0
            for candidate in (block.prev, block.next):
                subsumed = self.try_merge_blocks(block, candidate, pool)
                if subsumed > 0:
                    net_blocks -= 1
                    net_size -= subsumed
            self.active_blocks.discard(block)
            pool.insert_into_blocks(block)
            if block.is_split():
                net_blocks += 1
                net_size += block.size
            # inactive_split leaves expandable segments out, as PyTorch does
            if block.expandable_segment is None:
                if net_blocks > 0:
                    self.stats.increase("inactive_split", pn, net_blocks)
                elif net_blocks < 0:
                    self.stats.decrease("inactive_split", pn, -net_blocks)
                if net_size > 0:
                    self.stats.increase("inactive_split_bytes", pn, net_size)
                elif net_size < 0:
                    self.stats.decrease("inactive_split_bytes", pn, -net_size)
            self.stats.decrease("active", pn, 1)
            self.stats.decrease("active_bytes", pn, original_size)
            self.stats.decrease("requested_bytes", pn, requested_size)

        def empty_cache(self):
            context = self.maybe_gather_context(ALL)
            with self.lock:
                self.release_cached_blocks(context)

        def reset_peak_stats(self):
            """resetPeakStats: every statistic's peak set to its current
            value (reset_peak), the oversize ones too."""
            with self.lock:
                for name in STAT_NAMES:
                    for s in self.stats.arrays[name].values():
                        s["peak"] = s["current"]
                for s in (self.stats.oversize_allocations, self.stats.oversize_segments):
                    s["peak"] = s["current"]

        def set_memory_fraction(self, fraction):
            _, device_total = mem_get_info()
            self.allowed_memory_maximum = int(fraction * float(device_total))
            self.set_fraction = True

        def cache_info(self):
            """cacheInfo: the largest free cached block (0 if none)."""
            with self.lock:
                return max([b.size for b in self.large_blocks.blocks] +
                           [b.size for b in self.small_blocks.blocks] + [0])

        # --- snapshot ---

        def snapshot(self):
            """SegmentInfo list, sorted by address; one per contiguous mapped
            range of an expandable segment; records a "snapshot" entry."""
            with self.lock:
                all_blocks = (list(self.small_blocks.blocks) + list(self.large_blocks.blocks) +
                              list(self.active_blocks))
                total_active = 0
                result = []
                for head in all_blocks:
                    if head.prev is not None and head.prev.mapped:
                        continue
                    seg = {"device": self.device, "address": head.ptr, "total_size": 0,
                           "allocated_size": 0, "active_size": 0, "requested_size": 0,
                           "stream": head.stream,
                           "segment_type": "small" if head.pool.is_small else "large",
                           "segment_pool_id": (0, 0),
                           "is_expandable": head.expandable_segment is not None,
                           "frames": copy_frames(head.segment_context), "blocks": []}
                    address = head.ptr
                    b = head
                    while b is not None and b.mapped:
                        active = b.allocated or b.event_count > 0 or bool(b.stream_uses)
                        # Module.cpp names the pending state "active_pending_free"
                        state = ("active_allocated" if b.allocated else
                                 "active_pending_free" if active else "inactive")
                        seg["blocks"].append({"address": address, "size": b.size,
                                              "requested_size": b.requested_size, "state": state,
                                              "frames": copy_frames(b.context)})
                        seg["total_size"] += b.size
                        if b.allocated:
                            seg["allocated_size"] += b.size
                        if active:
                            seg["active_size"] += b.size
                            seg["requested_size"] += b.requested_size
                        address += b.size
                        b = b.next
                    total_active += seg["active_size"]
                    result.append(seg)
                result.sort(key=lambda s: s["address"])
                self.record_trace("snapshot", 0, total_active, 0, 0, None)
                return result

        def trace(self, refit_ns=0, cost_us=0.0):
            """The ring buffer as the snapshot's entries, oldest first, each
            raw stamp converted with this snapshot's fit (refit_ns: its
            offset, see _C._cuda_memorySnapshot); 2.1 entries have no
            time_us (PR #112266 added it, 2.2). cost_us per entry is spent
            here, holding the lock and the GIL (see _busy_wait_us)."""
            with self.lock:
                out = []
                for action, addr, size, stream, t_ns, context in self.alloc_buffer.get():
                    e = {"action": action, ("device_free" if action == "oom" else "addr"): addr,
                         "size": size, "stream": stream}
                    if not TORCH21:
                        e["time_us"] = (t_ns + refit_ns) // 1000
                    if context is not None:
                        e["frames"] = copy_frames(context)
                    out.append(e)
                _busy_wait_us(cost_us * len(out))
                return out


DeviceCachingAllocator = CUDACachingAllocator.DeviceCachingAllocator
