# sitecustomize.py - memtrace's Python bootstrap. `memtrace run` puts this
# directory first on PYTHONPATH, so every Python the traced command starts
# (torchrun ranks and multiprocessing spawn workers too: PYTHONPATH stays
# set) imports this file while `site` starts up.
#
# It does three things and nothing else:
#   1. imports memtrace_torch, which waits for the program's own
#      `import torch` (it never imports torch itself), unless MEMTRACE_TORCH
#      is not "1";
#   2. chains to the next sitecustomize on the path (the user's, a venv's or
#      the distro's), ddtrace style: this directory off sys.path, this
#      module out of sys.modules, `import sitecustomize`; an error in the
#      user's file reaches `site` exactly as it would without memtrace;
#   3. leaves sys.path and sys.modules as they would be without memtrace:
#      this directory is taken off sys.path for good (PYTHONPATH keeps it
#      for children), and "sitecustomize" in sys.modules is the user's
#      module. Where there is none, this module stays there (the import
#      machinery takes sys.modules["sitecustomize"] back after running it,
#      so the entry cannot be left empty); with memtrace_torch it is all
#      memtrace adds.
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


_memtrace_boot()
del _memtrace_boot
