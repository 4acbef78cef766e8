#!/bin/sh
# t311-train-py: samples/train.py, which needs PyTorch and a GPU to run,
# compiles; without PyTorch, and with a PyTorch that sees no GPU (a stand-in
# module here), it exits 1 with one clear line; its allocator flags are in
# PYTORCH_CUDA_ALLOC_CONF before torch is imported; conflicting flags are a
# usage error.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
PY="python3 $ROOT/samples/train.py"

python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
	"$ROOT/samples/train.py" "$T/train.pyc" || fail "train.py does not compile"

# No torch at all (an empty path first, and no site packages).
if ! python3 -c 'import torch' >/dev/null 2>&1; then
	$PY --epochs 1 >"$T/out" 2>"$T/err"
	expect_eq "$?" 1 "exit status without torch"
	grep -q "^train.py: PyTorch is not installed (No module named 'torch'); install it with 'pip install torch'$" "$T/err" ||
		fail "message without torch: $(cat "$T/err")"
fi

# A stand-in torch without CUDA, which says what PYTORCH_CUDA_ALLOC_CONF
# was when it was imported.
mkdir -p "$T/fake/torch/nn" "$T/fake/torch/utils/data"
cat >"$T/fake/torch/__init__.py" <<'PY'
import os
print("import torch: PYTORCH_CUDA_ALLOC_CONF=%s" % os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
__version__ = "0.0+stand-in"
class cuda:
    @staticmethod
    def is_available():
        return False
PY
: >"$T/fake/torch/nn/__init__.py"
: >"$T/fake/torch/utils/__init__.py"
: >"$T/fake/torch/utils/checkpoint.py"
echo 'DataLoader = None' >"$T/fake/torch/utils/data/__init__.py"
for flag in "" --expandable-segments --async-allocator; do
	PYTHONPATH=$T/fake $PY $flag >"$T/out" 2>"$T/err"
	expect_eq "$?" 1 "exit status without a GPU ($flag)"
	expect_eq "$(cat "$T/err")" "train.py: PyTorch 0.0+stand-in sees no CUDA GPU (torch.cuda.is_available() is False)" \
		"message without a GPU ($flag)"
	case "$flag" in
	"") want= ;;
	--expandable-segments) want=expandable_segments:True ;;
	--async-allocator) want=backend:cudaMallocAsync ;;
	esac
	expect_eq "$(cat "$T/out")" "import torch: PYTORCH_CUDA_ALLOC_CONF=$want" "allocator setting at import ($flag)"
done
PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 PYTHONPATH=$T/fake $PY --async-allocator >"$T/out" 2>/dev/null
expect_eq "$(cat "$T/out")" "import torch: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,backend:cudaMallocAsync" \
	"a setting of the user's kept"

$PY --expandable-segments --async-allocator >"$T/out" 2>"$T/err"
expect_eq "$?" 2 "exit status of conflicting flags"
grep -q 'exclude each other' "$T/err" || fail "message of conflicting flags: $(cat "$T/err")"
$PY --help >"$T/out" 2>&1 || fail "--help failed"
for f in --checkpoint --amp --empty-cache --expandable-segments --async-allocator --workers --sharing-strategy; do
	grep -q -- "$f" "$T/out" || fail "--help does not list $f"
done
