#!/bin/sh
# `memtrace top` and its metrics compute no figure of their own: the views
# of analyze/live/ (figures.c, metrics.c, screen.c, watch.c) read the pass's
# analysis, its sites (sites_build) and the framework's model, and never
# decode a record, a framework event or a frame themselves (the figures
# equal the report's: t804, t805); the follower (follow.c) hands records to
# the pass (analysis_feed) and reads of an FW event only its stack id, to
# wait for the stack. A view that counted bytes from the records, or
# named a site with frames of its own choosing, fails here.
. "$(dirname "$0")/lib.sh"
L=$ROOT/analyze/live
hits=$(grep -nE 'mt_event|mt_fw_event|mt_pool|MT_FW_|MT_REC_|MT_KIND_|frame_name|sym_frame|sym_stack|trace_fw_|rep_main_frame|->frames\b' \
	"$L/figures.c" "$L/metrics.c" "$L/screen.c" "$L/watch.c")
[ -z "$hits" ] || fail "a view of analyze/live/ reads records or frames itself: $hits"
# the follower: FW events only by their stack id, no sizes or addresses
hits=$(grep -nE 'mt_fw_event \*\)[^;]*->(size|addr|x|stream)|mt_event \*\)[^;]*->(bytes|addr)|fw_record\(' "$L/follow.c")
[ -z "$hits" ] || fail "follow.c reads what the pass computes from: $hits"
grep -q 'analysis_feed(f->a' "$L/follow.c" || fail "follow.c does not feed the pass"
grep -q 'stream_order_before(' "$L/follow.c" || fail "follow.c does not order by stream.h's rule"
# the framework's figures: each a field of struct fw_dev or fw_site
for fld in reserved allocated requested awaiting; do
	grep -q "o->$fld = d->$fld;" "$L/figures.c" || fail "figures.c: $fld not fw_dev's"
done
grep -q 'fw_site_name(o->name' "$L/figures.c" || fail "figures.c: tensor sites not named by fw_site_name"
grep -q 'rep_site_name(o->name' "$L/figures.c" || fail "figures.c: sites not named by rep_site_name"
exit 0
