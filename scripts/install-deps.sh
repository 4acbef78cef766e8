#!/bin/sh
# install-deps.sh - make sure what memtrace builds against is on this machine.
#
#   scripts/install-deps.sh          install what is missing (apt-get, as root)
#   scripts/install-deps.sh --check  only check; one line per missing piece
#
# Debian packages: libunwind-dev libdw-dev libelf-dev libsqlite3-dev
# libinih-dev (the rules files of `memtrace check`), libjson-c-dev (its
# --baseline given as a report's JSON), libncurses-dev (the view of
# `memtrace top`), libzstd-dev (the codec of `memtrace export --format
# parquet`)
# gnuplot-nox, sqlite3 (the shell, to query a report's database; the tests
# use it), tmux (a terminal, for the test of the progress line), xxd (the
# build turns the page of `memtrace view` into C arrays with it), plus gcc
# and make; for the tests only, chromium (headless, loads the pages of
# `memtrace view`) and cmake (runs the ctest recipe of `memtrace check`):
# and for the tests of `memtrace top`'s metrics prometheus (with promtool)
# and prometheus-node-exporter, started on loopback; python3-torch, Debian's
# PyTorch (1.13, CPU only) for /usr/bin/python3, the interpreter
# tests/t730-real-torch.sh runs real torch programs under (it skips without
# it): installed, but --check does not ask for them. python3-torch (about
# 170 packages with its dependencies) is installed on its own, after the
# rest, and only where apt has a candidate for it (Debian 12 does; not
# every Ubuntu): failing that is said in one line, and is not a failure of
# this script. The CUDA headers (cuda.h, cuda_runtime_api.h) come from the
# CUDA toolkit under CUDA_HOME (default /usr/local/cuda); when they are
# missing there, Debian's nvidia-cuda-dev (non-free) provides them under
# /usr/include and CUDA_HOME=/usr works.
set -u

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
check_only=0
[ "${1:-}" = "--check" ] && check_only=1

missing=""
have_header() {
	printf '#include <%s>\n' "$1" | cc -E -I"$CUDA_HOME/include" -x c - >/dev/null 2>&1
}
need() { # package, test command...
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
need gcc command -v cc
need make command -v make
need libunwind-dev have_header libunwind.h
need libdw-dev have_header elfutils/libdw.h
need libelf-dev have_header gelf.h
need libsqlite3-dev have_header sqlite3.h
need libinih-dev have_header ini.h
need libjson-c-dev have_header json-c/json.h
need libncurses-dev have_header curses.h
need libzstd-dev have_header zstd.h
need sqlite3 command -v sqlite3
need gnuplot-nox command -v gnuplot
need tmux command -v tmux
need xxd command -v xxd
[ "$check_only" = 0 ] && need chromium command -v chromium
[ "$check_only" = 0 ] && need prometheus command -v promtool
[ "$check_only" = 0 ] && need prometheus-node-exporter command -v prometheus-node-exporter
[ "$check_only" = 0 ] && need cmake command -v ctest
[ "$check_only" = 0 ] && need python3-pytest /usr/bin/python3 -m pytest --version

cuda_ok=1
have_header cuda.h && have_header cuda_runtime_api.h || cuda_ok=0

if [ -n "$missing" ] && [ "$check_only" = 0 ] && [ "$(id -u)" = 0 ]; then
	echo "memtrace: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
		apt-get update -qq >/dev/null 2>&1
		apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
			{ echo "memtrace: apt-get install$missing failed" >&2; exit 1; }
	fi
	missing=""
fi

# Debian's torch, for /usr/bin/python3 (found, not imported: importing it
# takes seconds).
has_torch() {
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("torch") is None)'
}
if [ "$check_only" = 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! has_torch >/dev/null 2>&1; then
	export DEBIAN_FRONTEND=noninteractive
	cand=$(apt-cache policy python3-torch 2>/dev/null | sed -n 's/^ *Candidate: //p')
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		apt-get update -qq >/dev/null 2>&1
		cand=$(apt-cache policy python3-torch 2>/dev/null | sed -n 's/^ *Candidate: //p')
	fi
	if [ -n "$cand" ] && [ "$cand" != "(none)" ]; then
		echo "memtrace: installing python3-torch $cand (for tests/t730-real-torch.sh)" >&2
		apt-get install -y -qq --no-install-recommends python3-torch >/dev/null 2>&1 ||
			echo "memtrace: apt-get install python3-torch failed; tests/t730-real-torch.sh will skip" >&2
	else
		echo "memtrace: apt has no python3-torch here; tests/t730-real-torch.sh will skip" >&2
	fi
fi

# npm packages for the tests of `memtrace export --format parquet`
# (tests/t90*-parquet-*.sh): DuckDB's Node API (it ships the engine),
# hyparquet and hyparquet-compressors (a second, independent reader, with
# its ZSTD), installed into build/npm, which git ignores. Failing that is
# said in one line, and the tests skip.
npm_dir=$(cd "$(dirname "$0")/.." && pwd)/build/npm
if [ "$check_only" = 0 ] && command -v npm >/dev/null 2>&1 &&
   { ! [ -d "$npm_dir/node_modules/@duckdb/node-api" ] || ! [ -d "$npm_dir/node_modules/hyparquet-compressors" ]; }; then
	mkdir -p "$npm_dir"
	[ -f "$npm_dir/package.json" ] || echo '{"name": "memtrace-test-deps", "private": true}' >"$npm_dir/package.json"
	echo "memtrace: installing @duckdb/node-api hyparquet hyparquet-compressors into build/npm (for the Parquet tests)" >&2
	(cd "$npm_dir" && npm install --no-audit --no-fund --silent @duckdb/node-api hyparquet hyparquet-compressors >/dev/null 2>&1) ||
		echo "memtrace: npm install failed; the Parquet tests will skip" >&2
fi

status=0
if [ -n "$missing" ]; then
	echo "memtrace: missing$missing; install with: sudo apt-get install$missing" >&2
	status=1
fi
if [ "$cuda_ok" = 0 ]; then
	echo "memtrace: no cuda.h and cuda_runtime_api.h under $CUDA_HOME/include; install the CUDA toolkit or set CUDA_HOME" >&2
	status=1
fi
exit $status
