# sitecustomize.py - memtrace's Python bootstrap. `memtrace run` puts this
# directory first on PYTHONPATH, so every Python the traced command starts
# (torchrun ranks and multiprocessing spawn workers too: PYTHONPATH stays
# set) imports this file while `site` starts up.
#
# It does three things and nothing else:
#   1. imports memtrace_torch, which waits for the program's own
#      `import torch` (it never imports torch itself), unless MEMTRACE_TORCH
#      is not "1";
#   2. makes memtrace's own modules importable without leaving this
#      directory on sys.path: a finder at the end of sys.meta_path answers
#      only `import memtrace` (python/memtrace.py, the marker API) and
#      `import memtrace_pytest` (the pytest plugin), and only when nothing
#      on the path has them; when the program is pytest (`pytest ...`,
#      `python -m pytest ...`), it adds memtrace_pytest to PYTEST_PLUGINS
#      (docs/units.md);
#   3. chains to the next sitecustomize on the path (the user's, a venv's or
#      the distro's), ddtrace style: this directory off sys.path, this
#      module out of sys.modules, `import sitecustomize`; an error in the
#      user's file reaches `site` exactly as it would without memtrace;
#   4. leaves sys.path and sys.modules as they would be without memtrace:
#      this directory is taken off sys.path for good (PYTHONPATH keeps it
#      for children), and "sitecustomize" in sys.modules is the user's
#      module. Where there is none, this module stays there (the import
#      machinery takes sys.modules["sitecustomize"] back after running it,
#      so the entry cannot be left empty); with memtrace_torch it is all
#      memtrace adds (the finder of 2 aside, on sys.meta_path).
#
# It imports nothing that `site` has not imported already (sys, os) and
# never raises anything of its own into the interpreter's start.
import os
import sys


def _memtrace_boot():
    try:
        here = os.path.dirname(os.path.realpath(__file__))
    except Exception:
        return None

    def ours(entry):
        try:
            return bool(entry) and os.path.realpath(entry) == here
        except Exception:
            return False

    if os.environ.get("MEMTRACE_TORCH", "") == "1":
        try:
            import memtrace_torch
            memtrace_torch.install()
        except Exception:
            pass

    try:
        _memtrace_modules(here)
    except Exception:
        pass

    me = sys.modules.get(__name__)
    removed = [e for e in sys.path if ours(e)]
    sys.path[:] = [e for e in sys.path if not ours(e)]
    for e in removed:
        sys.path_importer_cache.pop(e, None)
    sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  the next one on the path
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            raise       # the user's file failed: `site` says so, as usual
        if me is not None:
            sys.modules["sitecustomize"] = me


def _memtrace_modules(here):
    names = ("memtrace", "memtrace_pytest", "memtrace_hooks")

    class MemtraceFinder(object):
        """Last on sys.meta_path: memtrace's own modules, from its directory."""
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name not in names or path is not None:
                return None
            from importlib.machinery import PathFinder
            return PathFinder.find_spec(name, [here])

    sys.meta_path.append(MemtraceFinder)

    # pytest as the program: its plugin, by PYTEST_PLUGINS (read by pytest
    # at its start; children inherit it, and a child pytest is traced too)
    argv = list(getattr(sys, "orig_argv", None) or sys.argv or [])
    pytests = ("pytest", "py.test", "pytest-3", "py.test-3")
    prog = os.path.basename(argv[0]) if argv else ""
    is_pytest = prog in pytests
    if not is_pytest and prog.startswith("python"):
        for i, a in enumerate(argv[1:], 1):
            if a == "-m" and i + 1 < len(argv):
                is_pytest = argv[i + 1] in ("pytest", "py.test")
                break
            if a.startswith("-m"):
                is_pytest = a[2:] in ("pytest", "py.test")
                break
            if not a.startswith("-"):
                # a script: pytest's own console script, or not pytest
                is_pytest = os.path.basename(a) in pytests
                break
    if is_pytest and os.environ.get("MEMTRACE_PYTEST", "1") != "0":
        old = os.environ.get("PYTEST_PLUGINS", "")
        have = [p.strip() for p in old.split(",") if p.strip()]
        if "memtrace_pytest" not in have:
            os.environ["PYTEST_PLUGINS"] = ",".join(have + ["memtrace_pytest"])


_memtrace_boot()
del _memtrace_boot, _memtrace_modules
