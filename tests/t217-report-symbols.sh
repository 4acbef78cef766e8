#!/bin/sh
# Offline symbols: frames resolve from the recorded module map (function,
# file:line, inlined frames); memtrace's and CUDA's frames are hidden and
# the user's first frame is marked. A binary gone or rebuilt shows
# module+offset and is counted; --sysroot and --debug-dir find it again;
# the database caches what was resolved.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/bin" && cp "$CLIENTS/rt-rep-peak" "$T/bin/" || fail "cannot copy the client"
traced "$T/bin/rt-rep-peak" >"$T/out" 2>"$T/err" || fail "rt-rep-peak failed: $(cat "$T/err")"
rep() { "$MEMTRACE" report --no-db --json "$@" "$T/trace.bin" >"$T/json" 2>"$T/err" || fail "report $* exited $?"; }
unresolved() { grep -m1 '"unresolved_frames"' "$T/json" | sed 's/.*: //; s/,//'; }

rep
grep -q '{"function": "site_c", "file": "[^"]*rt-rep-peak.c", "line": 15, .*"inlined": true, "user": true, "python": false}' "$T/json" ||
	fail "site_c (inlined, the user's frame) not resolved"
grep -q '{"function": "main", "file": "[^"]*rt-rep-peak.c", "line": 25, .*"inlined": false, "user": false, "python": false}' "$T/json" ||
	fail "main not resolved under site_c"
grep -Eq '"module": "[^"]*(libmemtrace|libcudart|libcuda)' "$T/json" && fail "memtrace or CUDA frames shown"
grep -q '"hidden_frames": [1-9]' "$T/json" || fail "no hidden frames counted"
expect_eq "$(unresolved)" 0 "unresolved frames with the binary in place"

# gone: module+offset, counted, named
mkdir -p "$T/sysroot$T" && mv "$T/bin" "$T/sysroot$T/" || fail "cannot move the binary"
rep
[ "$(unresolved)" -gt 0 ] || fail "no unresolved frames counted"
grep -q '{"function": null, "file": null, "line": 0, "module": "[^"]*/bin/rt-rep-peak", "offset": "0x[0-9a-f]*"' "$T/json" ||
	fail "no module+offset frame"
grep -q '"problem": "not found"' "$T/json" || fail "the missing binary is not named"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "text report failed"
grep -q '^symbols: [0-9]* frames could not be resolved' "$T/text" || fail "text does not count unresolved frames"
grep -q 'rt-rep-peak+0x[0-9a-f]*' "$T/text" || fail "text does not show module+offset"

# --sysroot
rep --sysroot "$T/sysroot"
expect_eq "$(unresolved)" 0 "unresolved frames with --sysroot"
grep -q '"function": "site_c"' "$T/json" || fail "--sysroot did not resolve"

# --debug-dir, by build id
id=$("$MEMTRACE" dump "$T/trace.bin" | sed -n 's/^module .*build_id=\([0-9a-f]*\) path=".*\/bin\/rt-rep-peak"$/\1/p')
[ -n "$id" ] || fail "no build id for the client"
mkdir -p "$T/debug/.build-id/$(echo "$id" | cut -c1-2)"
cp "$T/sysroot$T/bin/rt-rep-peak" "$T/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
rep --debug-dir "$T/debug"
expect_eq "$(unresolved)" 0 "unresolved frames with --debug-dir"

# rebuilt: another binary at the recorded path
mkdir -p "$T/bin" && cp "$CLIENTS/rt-rep-grow" "$T/bin/rt-rep-peak"
rep
grep -q '"problem": "build id mismatch' "$T/json" || fail "a rebuilt binary is used or not named"
grep -q '"function": "site_c"' "$T/json" && fail "frames resolved in the wrong binary"

# the database remembers what it resolved
rm -f "$T/bin/rt-rep-peak"
mv "$T/sysroot$T/bin/rt-rep-peak" "$T/bin/" || fail "cannot restore the binary"
"$MEMTRACE" report --json "$T/trace.bin" >"$T/json" || fail "report with a database failed"
rm -f "$T/bin/rt-rep-peak"
"$MEMTRACE" report --json "$T/trace.bin" >"$T/json" || fail "second report failed"
grep -q '"function": "site_c"' "$T/json" || fail "the symbol cache did not answer"
exit 0
