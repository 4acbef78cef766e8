# memtrace_torch.py - the PyTorch hook of memtrace's Python side: PyTorch's
# own allocator history, drained into the process's memtrace trace through
# the C entry points of include/memtrace/framework.h. docs/torch.md gives
# the mechanism, the PyTorch versions each API exists in and what is lost
# when; in short:
#
#   import       install() (from sitecustomize) puts a finder first on
#                sys.meta_path that waits for the program's own
#                `import torch`; memtrace never imports torch. When torch's
#                module has run, on_torch() checks that libmemtrace.so's
#                entry points are there (ctypes.CDLL(None); without them it
#                does nothing at all) and queues arm() with
#                torch.cuda._lazy_call, so CUDA is not initialized early.
#   lazy init    arm() runs inside torch's CUDA lazy init (the first
#                allocation or torch.cuda.init()): one info note (torch
#                version, backend, allocator settings), then
#                _record_memory_history("all", context="alloc",
#                stacks="python", max_entries=MEMTRACE_TORCH_MAX_ENTRIES),
#                the OOM observer and the drain thread. Another backend
#                (cudaMallocAsync) gets one note and no history.
#   drain        _snapshot()["device_traces"], only the entries after the
#                last one drained (found again by identity: the ring buffer
#                drops its oldest entries), each frames tuple interned once
#                with memtrace_fw_stack, time_us (CLOCK_REALTIME us) moved
#                to CLOCK_MONOTONIC with an offset measured now, packed as
#                struct mt_fw_input and handed over in batches. Allocations
#                memory_stats counted but the history no longer holds are
#                said in a "dropped=N" note.
#   when         every MEMTRACE_TORCH_DRAIN_S seconds from a daemon thread
#                when there is something new and the drain is cheap or the
#                ring is a quarter turned over; at an OOM (the observer
#                drains: PyTorch calls it with the allocator lock released,
#                and the process may not live long after); at SIGTERM (the
#                user's handler chained); at exit (atexit, which Python runs
#                before the C library's exit handlers that close the trace).
#
# Threading: PyTorch records history under its own allocator lock with no
# Python involved; this module only runs in ordinary Python code (the
# program's threads, the drain thread, a signal handler, atexit) and takes
# its own lock around a drain. Nothing here ever raises into the program.
import os
import sys

_ACTIONS = {
    "alloc": 1, "free_requested": 2, "free_completed": 3,
    "segment_alloc": 4, "segment_free": 5, "segment_map": 6,
    "segment_unmap": 7, "oom": 8,
}
_BATCH = 4096           # events per memtrace_fw_events call
_TAIL = 4               # entries that identify the last drained position
_TIME_SLACK_US = 50     # how far PyTorch's TSC fit may move an entry's time

_installed = False
_finder = None
_state = None


def _env_num(name, default, lo, conv=int):
    try:
        v = conv(os.environ.get(name, ""))
        return v if v >= lo else default
    except (TypeError, ValueError):
        return default


def install():
    """Waits for the program's `import torch` (called by sitecustomize)."""
    global _installed, _finder
    if _installed:
        return
    _installed = True
    try:
        if not _traced_here():
            return
        if "torch" in sys.modules:
            _on_torch(sys.modules["torch"])
            return
        _finder = _TorchFinder()
        sys.meta_path.insert(0, _finder)
    except Exception:
        pass


def _traced_here():
    """False when memtrace's library traces only another process."""
    if os.environ.get("MEMTRACE_FOLLOW", "1") != "0":
        return True
    return os.environ.get("MEMTRACE_ROOT_PID", "") == str(os.getpid())


class _TorchFinder(object):
    """A meta path finder for "torch" alone: it lets the other finders find
    the module, and runs _on_torch once the module has been executed. The
    loader is the one they found; its exec_module is wrapped for this one
    call and restored, so torch.__loader__ is as without memtrace."""

    def __init__(self):
        self.busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or self.busy:
            return None
        self.busy = True
        try:
            spec = None
            for f in sys.meta_path:
                fs = getattr(f, "find_spec", None)
                if f is self or fs is None:
                    continue
                spec = fs(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self.busy = False
        if spec is None:
            return None
        try:
            loader = spec.loader
            orig = loader.exec_module
            had = "exec_module" in getattr(loader, "__dict__", {})
        except Exception:
            return spec

        def exec_module(module):
            try:
                orig(module)
            finally:
                try:
                    if had:
                        loader.exec_module = orig
                    else:
                        del loader.exec_module
                except Exception:
                    pass
            _done_waiting()
            _on_torch(module)

        try:
            loader.exec_module = exec_module
        except Exception:
            pass
        return spec


def _done_waiting():
    try:
        sys.meta_path.remove(_finder)
    except Exception:
        pass


class _Lib(object):
    """libmemtrace.so's entry points, from the process's global scope."""

    def __init__(self, ctypes):
        lib = ctypes.CDLL(None)
        self.events = lib.memtrace_fw_events
        self.stack = lib.memtrace_fw_stack
        self.info_fn = lib.memtrace_fw_info
        self.events.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.events.restype = ctypes.c_int
        self.stack.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32]
        self.stack.restype = ctypes.c_uint32
        self.info_fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        self.info_fn.restype = ctypes.c_int

    def info(self, lines):
        text = "".join("%s=%s\n" % (k, str(v).replace("\n", " ")) for k, v in lines)
        b = text.encode("utf-8", "replace")
        return self.info_fn(b, len(b))


def _on_torch(torch):
    """Right after the program's `import torch`: queue arm() for CUDA's
    lazy init, or do nothing at all without memtrace's library.

    A torch that cannot give memtrace tensor events says why in one
    torch=off note, whose reason the report prints as is, with the
    version: a build without CUDA (Debian's python3-torch, the CPU
    wheels) at once, since its CUDA lazy init never runs; a CUDA build
    without the history API (before 2.1: 1.13 has only the bool
    _record_memory_history of segments, 2.0 the bool form with
    trace_alloc_max_entries) when the program first initializes CUDA,
    so a program that never does gets no note and no trace. Neither
    check imports or initializes anything of CUDA's."""
    global _state
    try:
        if _state is not None:
            return
        import ctypes
        try:
            lib = _Lib(ctypes)
        except (OSError, AttributeError):
            return      # plain python: no memtrace here
        cuda = getattr(torch, "cuda", None)
        lazy_call = getattr(cuda, "_lazy_call", None)
        _state = _State(torch, lib, ctypes)
        tv = _state.version()
        # (every real torch has torch.version; the test double has none)
        version = getattr(torch, "version", None)
        if version is not None and getattr(version, "cuda", None) is None:
            hip = getattr(version, "hip", None)
            if hip:
                _state.note_off("torch %s built for ROCm (HIP %s), not CUDA: torch.version.cuda is None"
                                % (tv, hip))
            else:
                _state.note_off("torch %s built without CUDA (torch.version.cuda is None)" % tv)
            return
        if not hasattr(getattr(torch, "_C", None), "_cuda_getDeviceCount"):
            _state.note_off("torch %s built without CUDA (torch._C has no _cuda_getDeviceCount)" % tv)
            return
        if lazy_call is None:
            _state.note_off("torch %s: torch.cuda._lazy_call missing" % tv)
            return
        mem = getattr(cuda, "memory", None)
        missing = [n for n in ("_record_memory_history", "_snapshot") if not hasattr(mem, n)]
        try:
            old = tuple(int(x) for x in tv.split("+")[0].split(".")[:2]) < (2, 1)
        except ValueError:
            old = False     # a version string not like N.N...: let arm() try
        if missing or old:
            if missing:
                why = "torch %s: torch.cuda.memory has no %s" % (tv, " or ".join(missing))
            else:
                why = ("torch %s: its _record_memory_history has no allocation history in "
                       "the form memtrace reads (enabled=\"all\", trace entries in _snapshot(): "
                       "torch 2.1 and later)" % tv)
            why += "; tensors are seen at the CUDA level"

            def too_old():
                try:
                    _state.note_off(why)
                except BaseException:
                    pass
            lazy_call(too_old)
            return
        import atexit
        atexit.register(_at_exit)
        lazy_call(_arm)
    except Exception:
        pass


def _arm():
    # Runs inside torch.cuda's lazy init: an exception here would become
    # the program's DeferredCudaCallError, so none leaves.
    try:
        if _state is not None:
            _state.arm()
    except BaseException:
        pass


def _at_exit():
    try:
        if _state is not None:
            _state.at_exit()
    except BaseException:
        pass


class _Dev(object):
    """What the drains know of one device's history."""

    def __init__(self):
        self.n = 0              # entries in the history at the last drain
        self.tail = []          # identities of its last _TAIL entries
        self.allocs_seen = 0    # alloc entries drained
        self.allocs_base = 0    # allocation.all.allocated when armed (memory_stats
                                # is {} during lazy init, before any allocation)
        self.dropped = 0        # allocs already said lost
        self.last_total = 0     # allocation.all.allocated at the last drain


class _State(object):
    def __init__(self, torch, lib, ctypes):
        import threading
        self.torch = torch
        self.lib = lib
        self.ctypes = ctypes
        self.threading = threading
        self.lock = threading.Lock()
        self.owner = None
        self.pid = os.getpid()
        self.armed = False
        self.off = False
        self.devs = {}
        self.stacks = {}
        self.last_ns = 0
        self.last_drain = 0.0
        self.oom_drain = 0.0
        self.oom_pending = False
        self.drained = 0
        self.allocs_at_drain = 0
        self.drain_s = _env_num("MEMTRACE_TORCH_DRAIN_S", 5.0, 0.001, float)
        self.max_entries = _env_num("MEMTRACE_TORCH_MAX_ENTRIES", 200000, 16)
        self.snapshot_path = None
        if os.environ.get("MEMTRACE_TORCH_SNAPSHOT", "") == "1":
            out = os.environ.get("MEMTRACE_OUTPUT", "trace.bin")
            stem = out[:-4] if out.endswith(".bin") else out
            self.snapshot_path = "%s.%d.torch.pickle" % (stem, self.pid)
        import operator
        self.frame_key = operator.itemgetter("filename", "line", "name")
        self.stop = threading.Event()
        self.prev_term = None
        self.fmt = None

    # -- notes --------------------------------------------------------------
    def version(self):
        return getattr(self.torch, "__version__", "unknown")

    def note_off(self, reason):
        self.off = True
        self.lib.info([("framework", "torch"), ("version", self.version()),
                       ("torch", "off"), ("reason", reason)])

    # -- arming -------------------------------------------------------------
    def arm(self):
        if self.armed or self.off or os.getpid() != self.pid:
            return
        torch = self.torch
        mem = getattr(torch.cuda, "memory", None)
        backend = "native"
        gab = getattr(mem, "get_allocator_backend", None)
        if gab is not None:
            backend = gab()
        if backend != "native":
            # cudaMallocAsync refuses history; every tensor is then a
            # cudaMallocAsync call memtrace records at the CUDA level.
            self.note_off("backend %s has no history; tensors are seen at the CUDA level" % backend)
            return
        rec = getattr(mem, "_record_memory_history", None)
        snap = getattr(mem, "_snapshot", None)
        if rec is None or snap is None:
            self.note_off("torch.cuda.memory._record_memory_history missing")
            return
        try:
            rec(enabled="all", context="alloc", stacks="python",
                max_entries=self.max_entries)
        except Exception as e:
            self.note_off("_record_memory_history failed: %s: %s" % (type(e).__name__, e))
            return
        self.snap = snap
        self.armed = True
        for d, st in self.read_allocs().items():
            self.dev(d).allocs_base = st
            self.allocs_at_drain += st
        settings = []
        try:
            s = snap().get("allocator_settings") or {}
            settings = [("allocator." + str(k), v) for k, v in sorted(s.items())]
        except Exception:
            conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
            if conf is not None:
                settings = [("PYTORCH_CUDA_ALLOC_CONF", conf)]
        self.lib.info([("framework", "torch"), ("version", self.version()),
                       ("backend", backend), ("history", "all"), ("context", "alloc"),
                       ("stacks", "python"), ("max_entries", self.max_entries)] + settings)
        obs = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
        if obs is not None:
            try:
                obs(_on_oom)
            except Exception:
                pass
        if self.threading.current_thread() is self.threading.main_thread():
            self.install_sigterm()
        t = self.threading.Thread(target=self.drain_loop, name="memtrace-torch-drain")
        t.daemon = True
        t.start()

    def install_sigterm(self):
        """Our SIGTERM handler in front of the program's Python one (or the
        default), installed when arming in the main thread (Python lets no
        other thread do it; processes that never use CUDA keep theirs
        untouched). SIG_IGN and a handler set outside Python are left
        alone; a handler the program installs later replaces ours (its
        exit still drains through atexit)."""
        if self.prev_term is not None:
            return
        try:
            import signal
            if self.threading.current_thread() is not self.threading.main_thread():
                return
            prev = signal.getsignal(signal.SIGTERM)
            if prev is signal.SIG_IGN or prev is None:
                return
            self.prev_term = prev
            signal.signal(signal.SIGTERM, _on_sigterm)
        except Exception:
            pass

    # -- draining -----------------------------------------------------------
    def dev(self, d):
        st = self.devs.get(d)
        if st is None:
            st = self.devs[d] = _Dev()
        return st

    def read_allocs(self):
        """allocation.all.allocated per device (cumulative allocs)."""
        out = {}
        ms = self.torch.cuda.memory_stats
        try:
            n = self.torch.cuda.device_count()
        except Exception:
            n = 1
        for d in range(max(n, 1)):
            try:
                s = ms(d)
            except TypeError:
                if d:
                    break
                s = ms()
            except Exception:
                continue
            v = s.get("allocation.all.allocated")
            if v is not None:
                out[d] = int(v)
        return out

    def clock_offset(self):
        """CLOCK_MONOTONIC ns - CLOCK_REALTIME ns, from the tightest of a few
        (monotonic, realtime, monotonic) readings."""
        import time
        best = None
        for _ in range(5):
            a = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            r = time.clock_gettime_ns(time.CLOCK_REALTIME)
            b = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            if best is None or b - a < best[0]:
                best = (b - a, (a + b) // 2 - r)
        return best[1]

    def stack_id(self, frames):
        if not frames:
            return 0
        try:
            key = tuple(map(self.frame_key, frames))
        except Exception:
            return 0
        sid = self.stacks.get(key)
        if sid is not None:
            return sid
        import struct
        parts = []
        for file, line, name in key:
            fb = str(file).encode("utf-8", "surrogateescape")[:65535]
            nb = str(name).encode("utf-8", "surrogateescape")[:65535]
            try:
                ln = min(max(int(line), 0), 0xffffffff)
            except Exception:
                ln = 0
            parts.append(struct.pack("<IHH", ln, len(fb), len(nb)))
            parts.append(fb)
            parts.append(nb)
        blob = b"".join(parts)
        sid = int(self.lib.stack(blob, len(blob), len(key)))
        if sid:
            self.stacks[key] = sid
        return sid

    @staticmethod
    def ident(e):
        return (e.get("action"), e.get("addr", e.get("device_free")), e.get("size"),
                e.get("stream"), e.get("time_us"))

    def new_from(self, st, entries):
        """Index of the first entry not drained yet. The history only ever
        drops its oldest entries, so the last drained one, if still there,
        is at or before where it was; the last few entries together say
        where (times compared with a little slack: PyTorch refits its clock
        at each snapshot)."""
        n = len(entries)
        if not st.tail:
            return 0
        k = len(st.tail)
        idents = self.ident
        for exact in (True, False):
            j = min(st.n, n)
            while j >= k:
                ok = True
                for i in range(k):
                    a = idents(entries[j - k + i])
                    b = st.tail[i]
                    if exact:
                        ok = a == b
                    else:
                        ok = a[:4] == b[:4] and a[4] is not None and b[4] is not None and \
                            abs(a[4] - b[4]) <= _TIME_SLACK_US
                    if not ok:
                        break
                if ok:
                    return j
                j -= 1
        return 0        # wrapped past it: every entry is new

    def drain(self, why):
        """Hands over what is new in the history; returns the snapshot."""
        me = self.threading.get_ident()
        if self.owner == me:
            return None         # a signal handler inside our own drain
        if not self.lock.acquire(timeout=30):
            return None
        self.owner = me
        try:
            return self.drain_locked(why)
        finally:
            self.owner = None
            self.lock.release()

    def drain_locked(self, why):
        import time
        if not self.armed or os.getpid() != self.pid:
            return None
        allocs = self.read_allocs()
        snap = self.snap()
        off = self.clock_offset()
        traces = snap.get("device_traces") or []
        news = []
        for d, entries in enumerate(traces):
            st = self.dev(d)
            entries = entries or []
            start = self.new_from(st, entries)
            new = entries[start:]
            st.allocs_seen += sum(1 for e in new if e["action"] == "alloc")
            st.n = len(entries)
            st.tail = [self.ident(e) for e in entries[-_TAIL:]]
            if new:
                news.append((d, new))
        if len(news) == 1:
            self.drained += self.write(news[0][0], news[0][1], off)
        elif news:
            # several devices: one stream in time order (a device's own
            # order kept), each event with its device
            import heapq
            merged = heapq.merge(*[[(e["time_us"], i, k, d, e) for k, e in enumerate(new)]
                                   for i, (d, new) in enumerate(news)])
            self.drained += self.write(None, [(d, e) for _, _, _, d, e in merged], off)
        self.allocs_at_drain = sum(allocs.values())
        for d, total in allocs.items():
            st = self.dev(d)
            last, st.last_total = st.last_total, total
            if total < last:
                # reset_accumulated_memory_stats: count from here on
                st.allocs_base, st.allocs_seen, st.dropped = total, 0, 0
                continue
            lost = total - st.allocs_base - st.allocs_seen - st.dropped
            if lost > 0:
                st.dropped += lost
                self.lib.info([("framework", "torch"), ("dropped", lost), ("device", d),
                               ("what", "alloc events the history no longer held"),
                               ("max_entries", self.max_entries), ("drain", why)])
        self.last_drain = time.monotonic()
        return snap

    def write(self, dev, entries, off):
        """Packs history entries as struct mt_fw_input and hands them over
        in batches; dev None: entries are (device, entry) pairs. Returns
        how many were written. One loop, no intermediate objects: this is
        the drain's cost per event."""
        import struct
        if self.fmt is None:
            self.fmt = struct.Struct("<IiQQQQQII")
        pack = self.fmt.pack_into
        size = self.fmt.size
        stack_id = self.stack_id
        actions = _ACTIONS
        last = self.last_ns
        d = dev
        written = 0
        for b0 in range(0, len(entries), _BATCH):
            chunk = entries[b0:b0 + _BATCH]
            buf = bytearray(size * len(chunk))
            at = 0
            for e in chunk:
                if dev is None:
                    d, e = e
                a = actions.get(e["action"])
                if a is None:
                    continue
                t = e["time_us"] * 1000 + off
                if t < last:
                    t = last            # a drain's offset moved back
                last = t
                try:
                    if a == 2 or a == 3:
                        # frees carry no context (context="alloc"): the
                        # site is the alloc's
                        pack(buf, at, a, d, t, e["addr"], e["size"], e["stream"], 0, 0, 0)
                    elif a == 8:
                        pack(buf, at, a, d, t, 0, e["size"], e["stream"], e["device_free"],
                             stack_id(e.get("frames")), 0)
                    else:
                        pack(buf, at, a, d, t, e["addr"], e["size"], e["stream"], 0,
                             stack_id(e.get("frames")), 0)
                except Exception:
                    m = 0xffffffffffffffff
                    g = e.get
                    pack(buf, at, a, d, t & m, int(g("addr", 0) or 0) & m,
                         int(g("size", 0) or 0) & m, int(g("stream", 0) or 0) & m,
                         int(g("device_free", 0) or 0) & m if a == 8 else 0, 0, 0)
                at += size
            self.last_ns = last
            n = at // size
            if n:
                cbuf = (self.ctypes.c_char * at).from_buffer(buf)
                self.lib.events(cbuf, n)
                written += n
        return written

    def drain_loop(self):
        """The periodic drain. A drain costs in proportion to the whole
        history (PyTorch hands all of it over each time), so a tick drains
        when there is something new and either the history is still small
        (a quarter of max_entries) or a quarter of it is new (so the ring
        does not wrap before the next tick), and at least once a minute
        otherwise."""
        import time
        while not self.stop.wait(self.drain_s):
            try:
                if os.getpid() != self.pid:
                    return
                if self.oom_pending:
                    self.oom_pending = False
                    self.drain("oom")
                    continue
                total = sum(self.read_allocs().values())
                new = 3 * (total - self.allocs_at_drain)    # alloc, free_requested, free_completed
                if new <= 0:
                    continue
                held = min(self.max_entries, sum(st.n for st in self.devs.values()) + new)
                q = self.max_entries // 4
                if held <= q or new >= q or time.monotonic() - self.last_drain >= 60:
                    self.drain("periodic")
            except Exception:
                pass

    def on_oom(self):
        import time
        now = time.monotonic()
        if now - self.oom_drain < 1.0:
            self.oom_pending = True     # a burst of retries: the thread drains
            return
        self.oom_drain = now
        self.drain("oom")

    def at_exit(self):
        self.stop.set()
        snap = self.drain("exit")
        if self.snapshot_path and snap is not None:
            import pickle
            try:
                with open(self.snapshot_path, "xb") as f:
                    pickle.dump(snap, f)
            except Exception:
                pass


def _on_oom(device, alloc, device_alloc, device_free):
    try:
        if _state is not None:
            _state.on_oom()
    except BaseException:
        pass


def _on_sigterm(signum, frame):
    st = _state
    prev = st.prev_term if st is not None else None
    try:
        if st is not None and os.getpid() == st.pid:
            st.drain("sigterm")
    except BaseException:
        pass
    import signal
    if callable(prev):
        return prev(signum, frame)
    # the default action: die of the signal, as without memtrace
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
