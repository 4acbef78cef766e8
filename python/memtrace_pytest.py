# memtrace_pytest.py - memtrace's pytest plugin (docs/units.md): GPU memory
# per test.
#
#   memtrace run pytest tests/          enabled by itself (PYTEST_PLUGINS,
#                                       set by the bootstrap for pytest)
#   pytest -p memtrace_pytest tests/    the same, by hand (the process must
#                                       be traced: LD_PRELOAD=libmemtrace.so)
#
#   @pytest.mark.gpu_memory(peak="1 GiB", leaks=0)
#   def test_forward(): ...
#
# Each test's call (its body, not its fixtures' setup and teardown) is a
# range of origin "pytest" in the domain "pytest", named by the test's
# nodeid. Its figures are the report's (docs/units.md "What the report
# says"): **peak**, the process's highest reserved over all its devices
# while the test ran (memory held when it began included), and **leaked**,
# what the process held more at the test's end than at its start; with
# PyTorch's events in the trace both are of PyTorch's allocated (tensor
# blocks) rather than reserved, so the caching allocator's cache is no leak.
# A test marked gpu_memory fails when a figure is over its limit, as
# pytest-memray's limit_memory and limit_leaks do for host memory: sizes as
# `memtrace check` reads them (B, KiB/K, MiB/M, GiB/G, TiB/T, KB, MB, GB,
# TB, or a number of bytes).
#
# How the figures are had while the run goes on: the recorder does not
# keep live bytes (a free carries only its address; the model pairs it), so
# the plugin asks the report itself: `memtrace report --json --no-db` on
# this process's trace so far (memtrace_trace_path, exported by
# libmemtrace.so; the command is MEMTRACE_CLI, set by `memtrace run`, else
# `memtrace` on PATH). Exact, the same figures as the report's, but a
# report per marked test (a fraction of a second on a small trace, growing
# with the trace) and one at the end for the table. The JSON lists 1,000
# tests at most: later ones show as "-" and their marks are not checked.
#
# Without memtrace (no recorder in the process) the plugin does nothing
# but register the mark, and says so in one line of the summary.
import json
import os
import subprocess

import pytest

import memtrace

DOMAIN = "pytest"


def parse_size(v):
    """A size as `memtrace check` reads it; bytes (int)."""
    if isinstance(v, bool):
        raise ValueError("not a size: %r" % (v,))
    if isinstance(v, (int, float)):
        if v < 0:
            raise ValueError("not a size: %r" % (v,))
        return int(v)
    s = str(v).strip()
    units = {"": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20,
             "G": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TIB": 1 << 40,
             "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12}
    i = len(s)
    while i > 0 and s[i - 1].isalpha():
        i -= 1
    num, unit = s[:i].strip(), s[i:].upper()
    if unit not in units or not num:
        raise ValueError("not a size: %r" % (v,))
    x = float(num)
    if x < 0 or x != x:
        raise ValueError("not a size: %r" % (v,))
    return int(x * units[unit])


def fmt(n):
    """Bytes as memtrace's report writes them: 0 B, 512 B, 8.00 MiB, 16.0 MiB, 112 MiB."""
    if n is None:
        return "-"
    if n < 1024:
        return "%d B" % n
    v = float(n)
    for u in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        v /= 1024.0
        if v < 1024 or u == "PiB":
            break
    if v < 10:
        return "%.2f %s" % (v, u)
    if v < 100:
        return "%.1f %s" % (v, u)
    return "%.0f %s" % (v, u)


def _trace_path():
    try:
        import ctypes
        f = ctypes.CDLL(None).memtrace_trace_path
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        buf = ctypes.create_string_buffer(4096)
        if f(buf, len(buf)) <= 0:
            return None
        return os.path.abspath(buf.value.decode("utf-8", "surrogateescape"))
    except Exception:
        return None


def _cli():
    c = os.environ.get("MEMTRACE_CLI")
    if c and os.access(c, os.X_OK):
        return c
    import shutil
    return shutil.which("memtrace")


class Manager(object):
    def __init__(self, config):
        self.config = config
        self.order = []         # nodeids, in the order they ran
        self.figures = {}       # nodeid -> (peak, leaked)
        self.verdicts = {}      # nodeid -> "passed" / "over: ..." for marked tests
        self.problem = None     # why figures could not be had
        self.kind = "reserved"  # or PyTorch's allocated, when the trace has its events

    # The report's tests, from the trace so far: {nodeid: (peak, leaked)},
    # the last instance of each nodeid.
    def read(self):
        path, cli = _trace_path(), _cli()
        if not path:
            self.problem = "this process has no trace file"
            return None
        if not cli:
            self.problem = "no memtrace command (MEMTRACE_CLI, PATH)"
            return None
        env = dict(os.environ)
        pre = [p for p in env.get("LD_PRELOAD", "").replace(":", " ").split()
               if "libmemtrace" not in os.path.basename(p)]
        if pre:
            env["LD_PRELOAD"] = " ".join(pre)
        else:
            env.pop("LD_PRELOAD", None)
        try:
            r = subprocess.run([cli, "report", "--json", "--no-db", path], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
            if r.returncode != 0:
                self.problem = "memtrace report: %s" % r.stderr.decode("utf-8", "replace").strip()
                return None
            d = json.loads(r.stdout.decode("utf-8", "replace"))
        except Exception as e:
            self.problem = "memtrace report: %s" % e
            return None
        out = {}
        for t in (d.get("ranges") or {}).get("tests") or []:
            if "framework_peak_allocated" in t:
                self.kind = "PyTorch's allocated"
                peak, held, end = (t["framework_peak_allocated"], t["framework_allocated_at_start"],
                                   t["framework_allocated_at_end"])
            else:
                peak, held, end = t["peak_reserved"], t["reserved_at_start"], t["reserved_at_end"]
            out[t["name"]] = (peak, end - held if end > held else 0)
        self.problem = None
        return out

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        memtrace._record(memtrace._PUSH, memtrace.ORIGIN_PYTEST, DOMAIN, item.nodeid)
        try:
            yield
        finally:
            memtrace._record(memtrace._POP, memtrace.ORIGIN_PYTEST, DOMAIN, None)
            self.order.append(item.nodeid)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when != "call":
            return
        report = outcome.get_result()
        marks = list(item.iter_markers(name="gpu_memory"))
        if not marks:
            return
        limits = {}
        try:
            for m in reversed(marks):       # the closest mark wins
                if m.args:
                    limits["peak"] = parse_size(m.args[0])
                for k, v in m.kwargs.items():
                    if k not in ("peak", "leaks"):
                        raise ValueError("gpu_memory takes peak= and leaks=, not %s=" % k)
                    limits[k] = None if v is None else parse_size(v)
        except ValueError as e:
            report.outcome = "failed"
            report.longrepr = "memtrace: @pytest.mark.gpu_memory: %s" % e
            return
        if report.outcome != "passed":
            return
        figs = self.read()
        if figs is not None:
            self.figures.update(figs)
        got = figs.get(item.nodeid) if figs else None
        if got is None:
            self.verdicts[item.nodeid] = "not checked"
            return
        peak, leaked = got
        over = []
        if limits.get("peak") is not None and peak > limits["peak"]:
            over.append("peak %s over its limit of %s" % (fmt(peak), fmt(limits["peak"])))
        if limits.get("leaks") is not None and leaked > limits["leaks"]:
            over.append("leaked %s over its limit of %s" % (fmt(leaked), fmt(limits["leaks"])))
        if not over:
            self.verdicts[item.nodeid] = "within its limits"
            return
        self.verdicts[item.nodeid] = "; ".join(over)
        report.outcome = "failed"
        report.longrepr = "memtrace: test %s: GPU memory %s" % (item.nodeid, "; ".join(over))
        report.sections.append(("memtrace gpu memory",
                                "peak %s, leaked %s (the process's %s)" %
                                (fmt(peak), fmt(leaked), self.kind)))

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_report_teststatus(self, report):
        outcome = yield
        if report.when == "call" and report.outcome == "failed" and \
                any(s == "memtrace gpu memory" for s, _ in report.sections):
            outcome.force_result(("failed", "M", "GPU MEMORY"))

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        tr.write_sep("=", "memtrace: GPU memory per test")
        if not self.order:
            tr.write_line("no test ran")
            return
        figs = self.read()
        if figs is None:
            tr.write_line("no figures: %s" % self.problem)
            return
        self.figures.update(figs)
        w = max(48, max(len(n) for n in self.order))
        tr.write_line("figures of the process's %s, over all its devices" % self.kind)
        tr.write_line("%-*s %12s %12s  %s" % (w, "test", "peak", "leaked", "gpu_memory mark"))
        seen = set()
        for n in self.order:
            if n in seen:
                continue
            seen.add(n)
            peak, leaked = self.figures.get(n, (None, None))
            tr.write_line(("%-*s %12s %12s  %s" % (w, n, fmt(peak), fmt(leaked),
                                                   self.verdicts.get(n, ""))).rstrip())


class Idle(object):
    """Without memtrace: one line at the end, nothing else."""

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.write_sep("=", "memtrace: GPU memory per test")
        terminalreporter.write_line("not recorded: this process does not run under memtrace "
                                    "(memtrace run pytest ...); gpu_memory marks not checked")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu_memory(peak=None, leaks=None): fail the test when its GPU memory "
        "peak or leak (memtrace's figures) is over the size given")
    config.pluginmanager.register(Manager(config) if memtrace.active() else Idle(),
                                  "memtrace_manager")
