#!/bin/sh
# Virtual memory (drv-rep-vmm, numbers in its header): physical handles
# count in reserved until released and unmapped, mappings in allocated; the
# reservation's unmapped holes at the peak are the free extents.
. "$(dirname "$0")/lib.sh"

jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }

traced "$CLIENTS/drv-rep-vmm" >"$T/out" 2>"$T/err" || fail "drv-rep-vmm failed: $(cat "$T/err")"
"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "report failed"
MiB=1048576
expect_eq "$(jnum peak_reserved_bytes "$T/json")" $((6 * MiB)) "peak reserved"
expect_eq "$(jnum peak_allocated_bytes "$T/json")" $((4 * MiB)) "peak allocated"
expect_eq "$(jnum cached_bytes_at_peak "$T/json")" $((2 * MiB)) "cached at the peak"
expect_eq "$(jnum left_at_exit_bytes "$T/json")" $((2 * MiB)) "live at exit: h3 only (h1 went at its unmap)"
sed -n '/"free_extents_at_peak"/,/\]/p' "$T/json" >"$T/ext"
expect_eq "$(jnum type "$T/ext")" '"vmm_reservation"' "extent type"
expect_eq "$(jnum size_bytes "$T/ext")" $((64 * MiB)) "reservation size"
expect_eq "$(jnum free_bytes "$T/ext")" $((60 * MiB)) "unmapped"
expect_eq "$(jnum largest_free_bytes "$T/ext")" $((56 * MiB)) "largest hole"
expect_eq "$(jnum approximate "$T/ext")" false "exact for reservations"
exit 0
