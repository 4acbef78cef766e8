# torch/_allocator.py - TEST DOUBLE: the caching allocator of the stand-in
# torch (see torch/__init__.py), a small Python copy of PyTorch's
# DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp) over the CUDA
# runtime found on LD_LIBRARY_PATH (libcudart.so.13, the simulated one in
# the tests), called through ctypes so that every segment is a real
# cudaMalloc/cudaFree the tracer sees.
#
# What is kept from PyTorch, with the same names so the two read side by
# side: round_size, get_allocation_size, get_free_block (best fit on
# (stream, size, address)), alloc_block, should_split, alloc_found_block,
# free, free_block, try_merge_blocks, release_cached_blocks, release_block,
# record_trace, snapshot, trace, the RingBuffer and every statistic that
# memory_stats() returns. Left out: expandable segments, max_split_size,
# roundup_power2_divisions, garbage collection, memory fractions, private
# pools (CUDA graphs), cross-stream uses (record_stream) and therefore
# blocks in the awaiting-free state: here free_requested is always followed
# at once by free_completed.
#
# Threading: one re-entrant lock per device, as PyTorch; contexts (Python
# frames) are gathered before taking it.
import ctypes
import threading
import time

kMinBlockSize = 512
kSmallSize = 1 << 20
kSmallBuffer = 2 << 20
kLargeBuffer = 20 << 20
kMinLargeAlloc = 10 << 20
kRoundLarge = 2 << 20
# max_split_size as PyTorch reports it when unset: SIZE_MAX cast to int64
MAX_SPLIT_SIZE = -1

cudaSuccess = 0
cudaErrorMemoryAllocation = 2

# RecordContext of CUDACachingAllocator.h
NEVER, STATE, ALLOC, ALL = 0, 1, 2, 3

STAT_NAMES = ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
              "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")
POOLS = ("all", "small_pool", "large_pool")


class OutOfMemoryError(RuntimeError):
    """torch._C.OutOfMemoryError (a RuntimeError, as in PyTorch)."""


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
            _rt = rt
        return _rt


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


# --- the ring buffer (RingBuffer<TraceEntry> of CUDACachingAllocator.cpp) ------

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
                 "prev", "next", "context", "segment_context")

    def __init__(self, device, stream, size, pool, ptr):
        self.device = device
        self.stream = stream
        self.size = size
        self.requested_size = 0
        self.pool = pool
        self.ptr = ptr
        self.allocated = False
        self.prev = None
        self.next = None
        self.context = None          # context_when_allocated
        self.segment_context = None  # context_when_segment_allocated

    def is_split(self):
        return self.prev is not None or self.next is not None

    def key(self):
        # BlockComparatorSize: stream, then size, then address
        return (self.stream, self.size, self.ptr)


class BlockPool:
    def __init__(self, small):
        self.is_small = small
        self.blocks = set()

    def sorted(self):
        return sorted(self.blocks, key=Block.key)


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

    def as_nested_dict(self):
        """torch._C._cuda_memoryStats (torch/csrc/cuda/Module.cpp)."""
        d = {"num_alloc_retries": self.num_alloc_retries, "num_ooms": self.num_ooms,
             "num_sync_all_streams": self.num_sync_all_streams,
             "num_device_alloc": self.num_device_alloc, "num_device_free": self.num_device_free,
             "max_split_size": MAX_SPLIT_SIZE,
             "oversize_allocations": dict(self.oversize_allocations),
             "oversize_segments": dict(self.oversize_segments)}
        for name in STAT_NAMES:
            d[name] = {p: dict(v) for p, v in self.arrays[name].items()}
        return d


def pool_name(pool):
    return "small_pool" if pool.is_small else "large_pool"


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
            self.record_history = False
            self.record_context = NEVER
            self.skip_actions = frozenset()
            self.alloc_buffer = RingBuffer()
            self.oom_observers = []

        def record_history_set(self, enabled, max_entries, when, clear_history, skip_actions):
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
            self.alloc_buffer.insert((action, addr, size, stream, time.time_ns(),
                                      context if self.record_context >= ALLOC else None))

        # --- malloc ---

        @staticmethod
        def round_size(size):
            if size < kMinBlockSize:
                return kMinBlockSize
            return kMinBlockSize * ((size + kMinBlockSize - 1) // kMinBlockSize)

        @staticmethod
        def get_allocation_size(size):
            if size <= kSmallSize:
                return kSmallBuffer
            if size < kMinLargeAlloc:
                return kLargeBuffer
            return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)

        def get_free_block(self, pool, size, stream):
            best = None
            for b in pool.blocks:
                if b.stream == stream and b.size >= size and (best is None or b.key() < best.key()):
                    best = b
            if best is not None:
                pool.blocks.discard(best)
            return best

        def alloc_block(self, pool, size, alloc_size, stream, is_retry, context):
            """cudaMalloc of a new segment; (block, err)."""
            if is_retry:
                self.stats.num_alloc_retries += 1
            rt = runtime()
            ptr = ctypes.c_void_p()
            err = rt.cudaMalloc(ctypes.byref(ptr), alloc_size)
            if err != cudaSuccess:
                rt.cudaGetLastError()
                if err != cudaErrorMemoryAllocation:
                    cuda_check(err, "cudaMalloc")
                return None, err
            block = Block(self.device, stream, alloc_size, pool, ptr.value)
            self.stats.increase("segment", pool_name(pool), 1)
            self.stats.increase("reserved_bytes", pool_name(pool), alloc_size)
            self.stats.num_device_alloc += 1
            self.record_trace("segment_alloc", block.ptr, block.size, stream, self.device, context)
            block.segment_context = context
            return block, cudaSuccess

        def release_block(self, block, context):
            self.stats.num_device_free += 1
            self.record_trace("segment_free", block.ptr, block.size, block.stream, self.device,
                              context if context is not None else block.segment_context)
            cuda_check(runtime().cudaFree(ctypes.c_void_p(block.ptr)), "cudaFree")
            self.stats.decrease("segment", pool_name(block.pool), 1)
            self.stats.decrease("reserved_bytes", pool_name(block.pool), block.size)
            block.pool.blocks.discard(block)

        def release_blocks(self, pool, context):
            for block in pool.sorted():
                if not block.is_split():
                    self.release_block(block, context)

        def release_cached_blocks(self, context):
            # synchronize_and_free_events: no cross-stream events in the double
            self.stats.num_sync_all_streams += 1
            self.release_blocks(self.large_blocks, context)
            self.release_blocks(self.small_blocks, context)
            return True

        def should_split(self, block, size):
            remaining = block.size - size
            if block.pool.is_small:
                return remaining >= kMinBlockSize
            return remaining > kSmallSize

        def malloc(self, orig_size, stream=0):
            context = self.maybe_gather_context(STATE)
            with self.lock:
                size = self.round_size(orig_size)
                pool = self.small_blocks if size <= kSmallSize else self.large_blocks
                alloc_size = self.get_allocation_size(size)
                block = self.get_free_block(pool, size, stream)
                if block is None:
                    block, err = self.alloc_block(pool, size, alloc_size, stream, False, context)
                    # release_available_cached_blocks only acts with max_split_size set
                    if block is None and self.release_cached_blocks(context):
                        block, err = self.alloc_block(pool, size, alloc_size, stream, True, context)
                if block is None:
                    device_free, device_total = mem_get_info()
                    self.record_trace("oom", device_free, size, stream, self.device, context)
                    self.stats.num_ooms += 1
                    allocated = self.stats.arrays["allocated_bytes"]["all"]["current"]
                    reserved = self.stats.arrays["reserved_bytes"]["all"]["current"]
                    observers = list(self.oom_observers)
                else:
                    return self.alloc_found_block(block, size, orig_size, context,
                                                  self.should_split(block, size))
            # the observers run without the allocator's lock, as in PyTorch
            for obs in observers:
                obs(self.device, alloc_size, device_total, device_free)
            raise OutOfMemoryError(
                "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of "
                "which %s is free. Of the allocated memory %s is allocated by PyTorch, and %s is "
                "reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
                "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
                "fragmentation.  See documentation for Memory Management  "
                "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
                % (format_size(alloc_size), self.device, format_size(device_total),
                   format_size(device_free), format_size(allocated), format_size(reserved - allocated)))

        def alloc_found_block(self, block, size, orig_size, context, split_remainder):
            pool = block.pool
            pn = pool_name(pool)
            already_split = block.is_split()
            if split_remainder:
                remaining = block
                block = Block(self.device, remaining.stream, size, pool, remaining.ptr)
                block.prev = remaining.prev
                if block.prev is not None:
                    block.prev.next = block
                block.next = remaining
                remaining.prev = block
                remaining.ptr += size
                remaining.size -= size
                # as in PyTorch, context_when_segment_allocated stays with the
                # remainder, so a split segment's head reports no frames
                pool.blocks.add(remaining)
                if already_split:
                    self.stats.decrease("inactive_split_bytes", pn, block.size)
                else:
                    self.stats.increase("inactive_split_bytes", pn, remaining.size)
                    self.stats.increase("inactive_split", pn, 1)
            elif already_split:
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
            return block

        # --- free ---

        def free(self, block):
            context = self.maybe_gather_context(ALL)
            with self.lock:
                block.allocated = False
                pn = pool_name(block.pool)
                self.stats.decrease("allocation", pn, 1)
                self.stats.decrease("allocated_bytes", pn, block.size)
                self.record_trace("free_requested", block.ptr, block.requested_size, block.stream,
                                  self.device, context if context is not None else block.context)
                self.free_block(block, context)

        def try_merge_blocks(self, dst, src, pool):
            if src is None or src.allocated:
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
            pool.blocks.discard(src)
            return src.size

        def free_block(self, block, context):
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
            pool.blocks.add(block)
            if block.is_split():
                net_blocks += 1
                net_size += block.size
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

        # --- snapshot ---

        def snapshot(self):
            """SegmentInfo list, sorted by address; records a "snapshot" entry."""
            with self.lock:
                heads = [b for b in (list(self.small_blocks.blocks) + list(self.large_blocks.blocks)
                                     + list(self.active_blocks)) if b.prev is None]
                total_active = 0
                result = []
                for head in heads:
                    seg = {"device": self.device, "address": head.ptr, "total_size": 0,
                           "allocated_size": 0, "active_size": 0, "requested_size": 0,
                           "stream": head.stream,
                           "segment_type": "small" if head.pool.is_small else "large",
                           "segment_pool_id": (0, 0), "is_expandable": False,
                           "frames": copy_frames(head.segment_context), "blocks": []}
                    address = head.ptr
                    b = head
                    while b is not None:
                        # only allocated blocks are active here: no stream uses
                        state = "active_allocated" if b.allocated else "inactive"
                        seg["blocks"].append({"address": address, "size": b.size,
                                              "requested_size": b.requested_size, "state": state,
                                              "frames": copy_frames(b.context)})
                        seg["total_size"] += b.size
                        if b.allocated:
                            seg["allocated_size"] += b.size
                            seg["active_size"] += b.size
                            seg["requested_size"] += b.requested_size
                        address += b.size
                        b = b.next
                    total_active += seg["active_size"]
                    result.append(seg)
                result.sort(key=lambda s: s["address"])
                self.record_trace("snapshot", 0, total_active, 0, 0, None)
                return result

        def trace(self):
            """The ring buffer as the snapshot's entries, oldest first."""
            with self.lock:
                out = []
                for action, addr, size, stream, t_ns, context in self.alloc_buffer.get():
                    e = {"action": action, ("device_free" if action == "oom" else "addr"): addr,
                         "size": size, "stream": stream, "time_us": t_ns // 1000}
                    if context is not None:
                        e["frames"] = copy_frames(context)
                    out.append(e)
                return out


DeviceCachingAllocator = CUDACachingAllocator.DeviceCachingAllocator
