#!/bin/sh
# t242-plot-sites: the top-sites plot labels each site by its name, the
# one every view shows (rep_site_name): its frames from the main one
# outward, at least three, more when two sites read the same that far
# (call paths through one allocation wrapper); the text report names the
# same sites with the same words.
. "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed"
command -v python3 >/dev/null 2>&1 || skip "no python3"
v=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case $v in 3.9|3.10|3.11|3.12|3.13) ;; *) skip "python3 is $v, not 3.9 .. 3.13" ;; esac

# alloc() on line 7, called by build() (line 11, through layer() on line
# 14 for one of them) and by train() (line 17); all live at the peak.
cat >"$T/pyleak.py" <<'PY'
import ctypes
rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
keep = []
def alloc(mib):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), mib << 20) == 0
    keep.append(p)

def build(mib):
    alloc(mib)

def layer():
    build(3)

def train():
    alloc(5)

def main():
    build(8)
    layer()
    train()
    ctypes.CDLL("libcudart.so.13").cudaDeviceSynchronize()

main()
PY
traced python3 "$T/pyleak.py" >"$T/out" 2>"$T/err" || fail "pyleak.py failed: $(cat "$T/err")"
"$MEMTRACE" plot -o "$T/p" "$T/trace.bin" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
cat >"$T/want" <<'WANT'
alloc (pyleak.py:7) < build (pyleak.py:11) < main (pyleak.py:20)	8.000
alloc (pyleak.py:7) < train (pyleak.py:17) < main (pyleak.py:22)	5.000
alloc (pyleak.py:7) < build (pyleak.py:11) < layer (pyleak.py:14)	3.000
WANT
diff -u "$T/want" "$T/p/sites-dev0.tsv" || fail "site labels"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/rep" 2>"$T/err" || fail "report exited $?"
cut -f1 "$T/want" | while read -r name; do
	grep -q -F "  $name" "$T/rep" || fail "the report does not name a site '$name': $(grep pyleak "$T/rep")"
done
[ "$(head -c 4 "$T/p/sites-dev0.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "sites-dev0.png is not a PNG"
exit 0
