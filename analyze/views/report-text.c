/*
 * report-text.c - the report for a person: a summary, then per device the
 * peak, how it splits, and who held it; leak candidates, fragmentation,
 * failures and POSIX shared memory. Sizes in binary units, times relative
 * to the run's start; one short phrase says what a number means where it is
 * not obvious.
 */
#include <inttypes.h>
#include <string.h>

#include "model/framework.h"
#include "model/report.h"
#include "views/format.h"
#include "views/report-nvtxmem.h"
#include "views/report-ranges.h"

/* A size in a rotating buffer: up to 8 per printf. */
static const char *SZ(uint64_t v)
{
	static char buf[8][32];
	static int i;

	i = (i + 1) % 8;
	return rep_size(buf[i], sizeof(buf[i]), v);
}

/* A call path by its name (rep_stack_name: the one every view shows),
   with the library frames it folds said. */
static void chain(FILE *f, const struct sym_stack *st, int max)
{
	char b[4096];
	int folded;

	rep_stack_name(b, sizeof(b), st, max, &folded);
	rep_text_str(f, b, strlen(b));
	if (folded > 0)
		fprintf(f, "  (+%d library frame%s inside)", folded, folded == 1 ? "" : "s");
}

static void entry(FILE *f, const struct report *r, const struct rep_entry *e, const char *indent)
{
	fprintf(f, "%s%10s  %5" PRIu64 " alloc%s  ", indent, SZ(e->bytes), e->count,
		e->count == 1 ? " " : "s");
	chain(f, e->st, e->site ? e->site->name_frames : SITE_NAME_FRAMES);
	if (e->nprocs > 1)
		fprintf(f, "  [%d processes]", e->nprocs);
	if (e->caching)
		fputs("  [caching allocator]", f);
	putc('\n', f);
	(void)r;
}

/*
 * What was left live: one figure for one process, two for a device that
 * several processes shared, since their exits are different moments.
 */
static void exits(FILE *f, const struct analysis *a, int di, const char *ind)
{
	const struct an_dev *d = &a->devs[di];
	int nprocs = 0;

	for (int i = 0; d->proc < 0 && i < a->ndevs; i++)
		nprocs += a->devs[i].gdev == di;
	if (nprocs <= 1) {
		fprintf(f, "%slive at exit %s\n", ind, SZ(d->left_at_exit));
		return;
	}
	fprintf(f, "%sleft at exit %s (by %d processes, each at its own exit), "
		"live at the end of the run %s\n", ind, SZ(d->left_at_exit), nprocs,
		SZ(d->live_at_end));
}

static void device(FILE *f, const struct report *r, int di, int brief)
{
	const struct analysis *a = r->a;
	const struct an_dev *d = &a->devs[di];
	const struct an_peak *pk = &d->peak;
	const struct rep_list *l = &r->dev_sites[di];
	const char *api = trace_api_name(pk->api);
	char name[256], tm[32];
	const char *ind = brief ? "    " : "  ";

	fprintf(f, "%s%s: peak %s reserved at %s", brief ? "  " : "", rep_dev_name(r, d, name,
		sizeof(name)), SZ(pk->reserved), rep_time(tm, sizeof(tm), pk->time));
	if (!pk->reserved) {
		fputs(" (nothing allocated)\n", f);
		return;
	}
	fputs("\n", f);
	if (pk->bytes)
		fprintf(f, "%sset by %s of %s", ind, api ? api : "an unknown call", SZ(pk->bytes));
	else
		fprintf(f, "%sset by a pool growing, after %s", ind, api ? api : "an unknown call");
	if (a->nprocs > 1 && !brief)
		fprintf(f, " in pid %" PRIu32, rep_pid(a, pk->proc));
	fputs(" at ", f);
	chain(f, sym_stack(r->sy, a->s, pk->proc, pk->stack), 2);
	putc('\n', f);
	fprintf(f, "%sreserved %s = allocated %s (in the program's buffers)\n", ind,
		SZ(pk->reserved), SZ(pk->allocated));
	fprintf(f, "%s%*s + cached %s (held but not in a buffer: free for reuse)\n", ind,
		(int)strlen(SZ(pk->reserved)) + 9, "", SZ(pk->reserved - pk->allocated));
	if (pk->has_sample) {
		fprintf(f, "%sdevice used %s", ind, SZ(pk->used));
		if (d->sample_total)
			fprintf(f, " of %s", SZ(d->sample_total));
		if (pk->sample_time == pk->time)
			fputs(" (sampled at the peak)", f);
		else
			fprintf(f, " (sampled %s %s the peak)",
				rep_duration(tm, sizeof(tm), pk->sample_time > pk->time ?
					     pk->sample_time - pk->time : pk->time - pk->sample_time),
				pk->sample_time > pk->time ? "after" : "before");
		if (pk->untraced >= 0)
			fprintf(f, "\n%s  of which %s untraced (CUDA context, kernels, libraries%s)\n", ind,
				SZ((uint64_t)pk->untraced), d->proc >= 0 ? ", other processes" :
				", untraced processes");
		else
			fprintf(f, "\n%s  (taken before %s of the peak was reserved)\n", ind,
				SZ((uint64_t)-pk->untraced));
	}
	exits(f, a, di, ind);
	if (l->n) {
		fprintf(f, "%stop sites at the peak%s:\n", ind,
			l->total > l->n ? " (largest first)" : "");
		for (int i = 0; i < l->n && (!brief || i < 3); i++)
			entry(f, r, &l->v[i], brief ? "      " : "    ");
		if (l->total > (brief ? 3 : l->n))
			fprintf(f, "%s  ... %d more site%s\n", ind, l->total - (brief ? 3 : l->n),
				l->total - (brief ? 3 : l->n) == 1 ? "" : "s");
	}
}

static void command(FILE *f, const struct analysis *a, int proc)
{
	struct trace_bytes arg;
	int ai = 0, n = 0;

	while ((arg = rep_command_arg(a, proc, &ai)).p && n < 8) {
		if (n++)
			putc(' ', f);
		if (n == 1) {
			size_t k = arg.len;

			while (k > 0 && arg.p[k - 1] != '/')
				k--;
			rep_text_str(f, arg.p + k, arg.len - k);
		} else
			rep_text_str(f, arg.p, arg.len > 60 ? 60 : arg.len);
	}
	if (arg.p)
		fputs(" ...", f);
	if (!n)
		fputs("(unknown command)", f);
}

static void process_line(FILE *f, const struct report *r, int i)
{
	const struct analysis *a = r->a;
	const struct sproc *p = stream_proc(a->s, i);
	const struct an_proc *ap = &a->procs[i];
	char tm[32], warning[512];

	fprintf(f, "  pid %-7" PRIu32 " ", rep_pid(a, i));
	command(f, a, i);
	if (p->process && p->process->rank >= 0)
		fprintf(f, "  [rank %d]", p->process->rank);
	if (a->nhosts > 1 && p->process) {
		struct trace_bytes h, c, e;

		trace_process_strings(p->process, &h, &c, &e);
		fputs("  on ", f);
		rep_text_str(f, h.p, h.len);
	}
	fprintf(f, "\n      %" PRIu64 " event%s (%" PRIu64 " failed), ", ap->events,
		ap->events == 1 ? "" : "s", ap->failed);
	fprintf(f, "%s long", rep_time(tm, sizeof(tm), p->last_t - p->first_t) + 1);
	if (a->nprocs > 1)
		fprintf(f, ", starting at %s", rep_time(tm, sizeof(tm), p->first_t));
	switch (ap->end) {
	case AN_END_EXIT:
		fprintf(f, ", exited with status %d", ap->exit_status);
		break;
	case AN_END_UNDERSCORE_EXIT:
		fprintf(f, ", ended by _exit(%d)", ap->exit_status);
		break;
	case AN_END_KILLED:
		fputs(", interrupted: killed or crashed (the trace shows no clean exit)", f);
		break;
	case AN_END_EXEC:
		fputs(", then exec()ed a new program", f);
		break;
	case AN_END_UNKNOWN:
		break;
	}
	putc('\n', f);
	/* what the figures may lack or count twice, said where they are read */
	for (unsigned w = 0; !rep_proc_warning(a, i, w, warning, sizeof(warning)); w++)
		fprintf(f, "      warning: %s\n", warning);
}

/* "rank 5 (pid 1005) on node00 dev 1" */
static void rank_name(FILE *f, const struct report *r, const struct rep_rank *k)
{
	if (k->rank >= 0)
		fprintf(f, "rank %d (pid %" PRIu32 ")", k->rank, rep_pid(r->a, k->proc));
	else
		fprintf(f, "pid %" PRIu32, rep_pid(r->a, k->proc));
	if (k->host.len) {
		fputs(" on ", f);
		rep_text_str(f, k->host.p, k->host.len);
	}
	if (k->dev >= 0)
		fprintf(f, " dev %d", k->dev);
}

/*
 * Many processes: the outliers first, then one line per process, by host,
 * device and rank, instead of a section each.
 */
static void ranks_table(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;
	char num[32];
	int n;

	fprintf(f, "ranks: %d processes on %d host%s; full sections below only for the %d highest "
		"peaks and the flagged ranks (--json lists every process)\n", r->nranks, a->nhosts,
		a->nhosts == 1 ? "" : "s", REP_RANKS_FULL);
	if (r->top_peak_proc >= 0) {
		const struct rep_rank *k = &r->ranks[r->rank_row[r->top_peak_proc]];

		fputs("  highest peak: ", f);
		rank_name(f, r, k);
		fprintf(f, ", %s", SZ(k->peak));
		fprintf(f, " (the median process %s)\n", SZ(r->median_peak));
	} else if (r->top_peak) {
		fprintf(f, "  highest peak: %s, reached by %d processes (the median process %s)\n",
			SZ(r->top_peak), r->top_peak_shared, SZ(r->median_peak));
	}
	for (int flag = REP_RANK_FAILED; flag <= REP_RANK_KILLED; flag <<= 1) {
		int total = flag == REP_RANK_FAILED ? r->nflagged_failed : r->nflagged_killed;

		if (!total)
			continue;
		fprintf(f, "  %s (%d): ", flag == REP_RANK_FAILED ? "failed calls" :
			"killed or crashed", total);
		n = 0;
		for (int i = 0; i < r->nranks; i++) {
			const struct rep_rank *k = &r->ranks[i];

			if (!(k->flags & flag))
				continue;
			if (n++)
				fputs("; ", f);
			rank_name(f, r, k);
			if (flag == REP_RANK_FAILED)
				fprintf(f, ", %" PRIu64 " failed", k->failed);
		}
		putc('\n', f);
	}
	fprintf(f, "  %-12s %4s %6s %8s %12s %7s\n", "host", "dev", "rank", "pid", "peak", "failed");
	for (int i = 0; i < r->nranks; i++) {
		const struct rep_rank *k = &r->ranks[i];
		char host[13];
		size_t hl = k->host.len < 12 ? k->host.len : 12;

		memcpy(host, k->host.p ? k->host.p : "", hl);
		host[hl] = 0;
		for (size_t c = 0; c < hl; c++)
			if ((unsigned char)host[c] < 0x20 || (unsigned char)host[c] >= 0x7f)
				host[c] = '?';
		if (k->dev >= 0)
			snprintf(num, sizeof(num), "%d", k->dev);
		else
			snprintf(num, sizeof(num), "-");
		fprintf(f, "  %-12s %4s ", hl ? host : "?", num);
		if (k->rank >= 0)
			fprintf(f, "%6d", k->rank);
		else
			fprintf(f, "%6s", "-");
		fprintf(f, " %8" PRIu32 " %12s %7" PRIu64, rep_pid(r->a, k->proc), SZ(k->peak),
			k->failed);
		if (k->flags & REP_RANK_TOP_PEAK)
			fputs("  highest peak", f);
		if (k->flags & REP_RANK_FAILED)
			fputs("  FAILED", f);
		if (k->flags & REP_RANK_KILLED)
			fputs("  KILLED", f);
		putc('\n', f);
	}
}

static void apis(FILE *f, const struct analysis *a)
{
	int n = 0;

	fputs("events by API:", f);
	for (unsigned i = 0; i < MT_API_MAX; i++) {
		const char *nm = trace_api_name(i);

		if (!a->by_api[i])
			continue;
		fprintf(f, "%s %s %" PRIu64, n++ ? "," : "", nm ? nm : "unknown", a->by_api[i]);
		if (a->failed_by_api[i])
			fprintf(f, " (%" PRIu64 " failed)", a->failed_by_api[i]);
	}
	if (!n)
		fputs(" none", f);
	putc('\n', f);
}

static void leaks(FILE *f, const struct report *r)
{
	fputs("\nleak candidates\n", f);
	if (!r->leaks.n)
		fputs("  none: everything was freed, and no site kept growing\n", f);
	if (r->leaks.n)
		fputs("  left live at exit (allocated and never freed), or kept growing through the run:\n",
		      f);
	for (int i = 0; i < r->leaks.n; i++) {
		const struct rep_entry *e = &r->leaks.v[i];
		char dn[32];

		snprintf(dn, sizeof(dn), e->dev >= 0 ? "dev %d" : "host", e->dev);
		fprintf(f, "    %-6s", dn);
		entry(f, r, e, "");
		fprintf(f, "%14s%s%s%s\n", "", e->at_exit ? "left at exit" : "",
			e->at_exit && e->growing ? ", " : "", e->growing ? "growing" : "");
		if (e->site->interrupted)
			fprintf(f, "%14sinterrupted: a process holding it did not exit cleanly "
				"(killed or crashed), so it may not be a leak\n", "");
	}
	if (r->leaks.total > r->leaks.n)
		fprintf(f, "    ... %d more site%s\n", r->leaks.total - r->leaks.n,
			r->leaks.total - r->leaks.n == 1 ? "" : "s");
	if (r->cache_exit.n) {
		fputs("  held by a caching allocator at exit (its cache, not a leak):\n", f);
		for (int i = 0; i < r->cache_exit.n; i++)
			entry(f, r, &r->cache_exit.v[i], "    ");
	}
}

static void fragmentation(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;

	fputs("\nfragmentation\n", f);
	for (int g = 0; g < r->ngdevs; g++) {
		const struct an_dev *d = &a->devs[r->gdevs[g]];
		char name[256];
		int n = 0;

		if (!d->peak.reserved)
			continue;
		fprintf(f, "  %s: cached %.0f%% of reserved at the peak, %.0f%% on average over time\n",
			rep_dev_name(r, d, name, sizeof(name)),
			100.0 * (double)(d->peak.reserved - d->peak.allocated) / (double)d->peak.reserved,
			d->int_reserved > 0 ? 100.0 * d->int_cached / d->int_reserved : 0.0);
		for (uint32_t i = 0; i < d->nextents; i++) {
			const struct an_extent *x = &d->extents[i];

			fprintf(f, "    %s 0x%" PRIx64 ": %s free of %s; largest free extent %s%s\n",
				x->pool ? "pool" : "reservation", x->addr, SZ(x->free_total),
				SZ(x->size), x->pool ? "about " : "", SZ(x->free_largest));
		}
		if (d->nextents)
			fputs("      (the largest free extent is the largest request that fits without "
			      "asking the driver)\n", f);
		fputs("    allocation sizes:", f);
		for (int b = 0; b < AN_HIST; b++) {
			if (!d->hist_count[b])
				continue;
			fprintf(f, "%s %s-%s x%" PRIu64, n++ ? "," : "", SZ((uint64_t)1 << b),
				b + 1 < 64 ? SZ((uint64_t)1 << (b + 1)) : "", d->hist_count[b]);
		}
		putc('\n', f);
	}
	for (uint32_t i = 0; i < a->noomsigs; i++) {
		const struct an_oomsig *s = &a->oomsigs[i];
		char tm[32];

		if (!i)
			fputs("  out-of-memory retries (a failed allocation, frees, then a retry: a "
			      "fragmented cache):\n", f);
		fprintf(f, "    %s pid %" PRIu32 " device %d: %s failed, %u free%s released %s, retry of "
			"%s %s\n", rep_time(tm, sizeof(tm), s->time), rep_pid(a, s->proc), s->dev,
			SZ(s->requested), s->nfrees, s->nfrees == 1 ? "" : "s", SZ(s->freed),
			SZ(s->retry_bytes), s->retry_result ? "failed again" : "succeeded");
	}
}

static void failures(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;

	if (!a->failures_total) {
		fputs("\nfailures: none\n", f);
		return;
	}
	fprintf(f, "\nfailures (%" PRIu64 ")\n", a->failures_total);
	for (uint32_t i = 0; i < a->nfailures && i < 20; i++) {
		const struct an_failure *fl = &a->failures[i];
		const char *api = trace_api_name(fl->api), *en = rep_error_name(fl->error, fl->runtime);
		char tm[32];

		fprintf(f, "  %s  %s of %s", rep_time(tm, sizeof(tm), fl->time), api ? api : "unknown",
			SZ(fl->requested));
		if (fl->dev >= 0)
			fprintf(f, " on device %d", fl->dev);
		else
			fputs(" with no current context", f);
		if (a->nprocs > 1)
			fprintf(f, " in pid %" PRIu32, rep_pid(a, fl->proc));
		fprintf(f, ": %s (%u)\n", en ? en : "unknown error", fl->error);
		fputs("      at ", f);
		chain(f, sym_stack(r->sy, a->s, fl->proc, fl->stack), 2);
		fprintf(f, "\n      the process held %s reserved", SZ(fl->reserved));
		if (fl->has_free_after)
			fprintf(f, "; %s free on the device after it", SZ(fl->free_after));
		putc('\n', f);
		for (int k = 0; k < fl->ntop; k++) {
			const struct site *s = site_of(&r->sites, fl->top[k].site);

			fprintf(f, "      %s %10s  ", k ? "          " : "top holders", SZ(fl->top[k].bytes));
			chain(f, s->st, s->name_frames);
			putc('\n', f);
		}
	}
	if (a->failures_total > 20)
		fprintf(f, "  ... %" PRIu64 " more (see --json)\n", a->failures_total - 20);
}

struct shm_ctx {
	struct symbols *sy;
	const struct stream *s;
};

/* The stack that created a segment, as the other sites print theirs. */
static void shm_stack(void *ctx, FILE *f, int proc, uint32_t stack, const char *indent)
{
	const struct shm_ctx *c = ctx;
	const struct sym_stack *st = sym_stack(c->sy, c->s, proc, stack);

	fprintf(f, "%s%s", indent, rep_main_frame(st) ? "at " : "");
	chain(f, st, 3);
	putc('\n', f);
}

/* The section of shm.c, only when the traces hold shared memory records. */
static void shm(FILE *f, const struct report *r)
{
	struct shm_ctx c = { r->sy, r->a->s };

	if (!r->shm.ops)
		return;
	putc('\n', f);
	shm_render_text(f, &r->shm, shm_stack, &c);
}

/* --- framework: PyTorch (only when the traces hold FW records) ----------- */

/* A tensor site by its name (fw_site_name, the one every view shows),
   with the framework frames it folds said. */
static void fw_chain(FILE *f, const struct report *r, const struct fw_site *s)
{
	char b[4096];
	int folded;

	fw_site_name(b, sizeof(b), r->a, s, &folded);
	rep_text_str(f, b, strlen(b));
	if (folded > 0)
		fprintf(f, "  (+%d framework frame%s inside)", folded, folded == 1 ? "" : "s");
}

static void fw_held_line(FILE *f, const struct report *r, const struct fw_held *h,
			 const char *ind)
{
	fprintf(f, "%s%10s  %5" PRIu64 " tensor%s  ", ind, SZ(h->bytes), h->count,
		h->count == 1 ? " " : "s");
	fw_chain(f, r, &r->a->fw->sites[h->site]);
	putc('\n', f);
}

/* "reserved R = allocated A + cached C (requested Q; inactive split,
   largest free block)", PyTorch's memory_stats() names */
static void fw_state_line(FILE *f, const struct fw_state *st)
{
	fprintf(f, "reserved %s = allocated %s + cached %s (requested %s; inactive split %s, "
		"largest free block %s", SZ(st->reserved), SZ(st->allocated), SZ(st->cached),
		SZ(st->requested), SZ(st->inactive_split), SZ(st->largest_free));
	if (st->awaiting)
		fprintf(f, "; %s of cached awaiting other streams", SZ(st->awaiting));
	fputs(")\n", f);
}

/* PyTorch's own peaks (memory_stats() read by the drains) beside the
   rebuilt ones: for a process's device, or the run's device of a run of
   one process. */
static void fw_torch_peaks(FILE *f, const struct report *r, const struct fw_dev *d,
			   const char *ind)
{
	const struct fw_model *m = r->a->fw;
	const struct fw_dev *p = d;
	char tm[32];
	int same;

	if (d->proc < 0) {
		p = NULL;
		for (int i = 0; i < m->ndevs; i++)
			if (m->devs[i].run == d - m->devs && m->devs[i].proc >= 0) {
				if (p)
					return;         /* several processes: each says its own */
				p = &m->devs[i];
			}
		if (!p)
			return;
	}
	if (!p->has_torch_peaks)
		return;
	same = p->torch_peak_allocated == d->peak_alloc.st.allocated &&
	       p->torch_peak_requested == d->peak_req.st.requested &&
	       p->torch_peak_reserved == d->peak_res.st.reserved;
	fprintf(f, "%s%s PyTorch's own peaks (memory_stats(), read after %s): allocated %s, requested %s, "
		"reserved %s%s\n", ind, same ? "checked:" : "warning:",
		rep_time(tm, sizeof(tm), p->torch_peaks_t), SZ(p->torch_peak_allocated),
		SZ(p->torch_peak_requested), SZ(p->torch_peak_reserved),
		same ? ": the same" : ": memtrace's rebuilt peaks above differ (events it did not "
		"get, or a peak reset by the program)");
}

static void fw_device(FILE *f, const struct report *r, int di, int brief)
{
	const struct fw_model *m = r->a->fw;
	const struct fw_dev *d = &m->devs[di];
	const char *ind = brief ? "    " : "  ";
	char tm[32];

	if (brief)
		fprintf(f, "  pid %" PRIu32 " device %d\n", rep_pid(r->a, d->proc), d->dev);
	else
		fprintf(f, "\nframework: PyTorch, device %d\n", d->dev);
	fprintf(f, "%speak allocated %s at %s: ", ind, SZ(d->peak_alloc.st.allocated),
		rep_time(tm, sizeof(tm), d->peak_alloc.st.t));
	fw_state_line(f, &d->peak_alloc.st);
	fprintf(f, "%speak requested %s at %s: ", ind, SZ(d->peak_req.st.requested),
		rep_time(tm, sizeof(tm), d->peak_req.st.t));
	fw_state_line(f, &d->peak_req.st);
	fprintf(f, "%speak reserved %s at %s: ", ind, SZ(d->peak_res.st.reserved),
		rep_time(tm, sizeof(tm), d->peak_res.st.t));
	fw_state_line(f, &d->peak_res.st);
	fprintf(f, "%sat exit: ", ind);
	fw_state_line(f, &d->end);
	if (d->has_cuda)
		fprintf(f, "%sCUDA API: peak reserved %s; at the framework's peak of reserved %s, of "
			"which %s outside the framework's segments (other allocations: NCCL, cuBLAS, "
			"other libraries)\n", ind, SZ(d->cuda_peak), SZ(d->cuda_at_peak_res),
			SZ(d->cuda_at_peak_res > d->peak_res.st.reserved ?
			   d->cuda_at_peak_res - d->peak_res.st.reserved : 0));
	else
		fprintf(f, "%sCUDA API: no allocation seen on this device (the framework's segments "
			"were not traced)\n", ind);
	fw_torch_peaks(f, r, d, ind);
	if (brief)
		return;
	for (int k = 0; k < 2; k++) {
		const struct fw_moment *mo = k ? &d->peak_res : &d->peak_alloc;

		if (!mo->nheld)
			continue;
		fprintf(f, "%stop tensor sites at the peak of %s:\n", ind, k ? "reserved" : "allocated");
		for (uint32_t i = 0; i < mo->nheld && i < REP_TOP; i++)
			fw_held_line(f, r, &mo->held[i], "    ");
		if (mo->nheld > REP_TOP)
			fprintf(f, "    ... %u more site%s\n", mo->nheld - REP_TOP,
				mo->nheld - REP_TOP == 1 ? "" : "s");
	}
}

/* How the rebuilt blocks held against PyTorch's own counters. */
static void fw_checks(FILE *f, const struct report *r)
{
	const struct fw_model *m = r->a->fw;
	uint64_t drift = m->drift_no_block + m->drift_small_block + m->drift_seg_busy;
	char tm[32];

	if (m->drains)
		fprintf(f, "  drains: %" PRIu64 " read%s of PyTorch's history, %s in all (%.2f%% of the "
			"run)\n", m->drains, m->drains == 1 ? "" : "s", rep_duration(tm, sizeof(tm), m->drain_ns),
			r->a->duration ? 100.0 * (double)m->drain_ns / (double)r->a->duration : 0.0);
	if (m->drain_timing)
		fputs("  note: the history had no times (torch before 2.2): each tensor event has the "
		      "time of the drain that read it, in the history's order\n", f);
	if (m->resyncs)
		fprintf(f, "  note: %" PRIu64 " drain%s had to find the last entry read by its identity "
			"(the ring turned over or was reordered); events around it may be missing\n",
			m->resyncs, m->resyncs == 1 ? "" : "s");
	if (m->budget_gaps)
		fprintf(f, "  note: %" PRIu64 " time%s the drains' budget (2%% of the run) let the history "
			"turn over between two drains\n", m->budget_gaps, m->budget_gaps == 1 ? "" : "s");
	if (m->program_history)
		fprintf(f, "  note: the program called _record_memory_history itself %" PRIu64 " time%s; "
			"memtrace drained before each call and kept the program's settings\n",
			m->program_history, m->program_history == 1 ? "" : "s");
	if (m->checks && !m->check_bad)
		fprintf(f, "  checked: allocated, requested and reserved equal PyTorch's own counters "
			"at %s %" PRIu64 " drain%s that could read them\n", m->checks == 1 ? "the" : "all",
			m->checks, m->checks == 1 ? "" : "s");
	else if (m->checks)
		fprintf(f, "  warning: at %" PRIu64 " of %" PRIu64 " drains the figures differ from "
			"PyTorch's counters (first at %s, pid %" PRIu32 " device %d: %s memtrace %" PRIu64
			" B, PyTorch %" PRIu64 " B)\n", m->check_bad, m->checks,
			rep_time(tm, sizeof(tm), m->first_bad.t), rep_pid(r->a, m->first_bad.proc),
			m->first_bad.dev, m->first_bad.what, m->first_bad.ours, m->first_bad.theirs);
	if (drift)
		fprintf(f, "  warning: %" PRIu64 " event%s did not fit PyTorch's block rules (first at "
			"%s: %" PRIu64 " alloc%s where no free block began, %" PRIu64 " larger than its "
			"free block, %" PRIu64 " segment%s given back while in use); block sizes after "
			"it may be off\n", drift, drift == 1 ? "" : "s",
			rep_time(tm, sizeof(tm), m->drift_first_t), m->drift_no_block,
			m->drift_no_block == 1 ? "" : "s", m->drift_small_block, m->drift_seg_busy,
			m->drift_seg_busy == 1 ? "" : "s");
}

static void framework(FILE *f, const struct report *r)
{
	const struct analysis *a = r->a;
	const struct fw_model *m = a->fw;
	int procs = 0;

	if (!m)
		return;
	for (int i = 0; i < m->ndevs; i++)
		if (m->devs[i].proc < 0)
			fw_device(f, r, i, 0);
	for (int i = 0; i < m->ndevs; i++)
		procs += m->devs[i].proc >= 0;
	if (a->nprocs > 1 && procs) {
		fputs("  by process:\n", f);
		for (int i = 0; i < m->ndevs; i++)
			if (m->devs[i].proc >= 0)
				fw_device(f, r, i, 1);
	}
	if (m->dropped)
		fprintf(f, "  note: %" PRIu64 " framework event%s lost before memtrace read them "
			"(the framework's history wrapped); figures miss them\n", m->dropped,
			m->dropped == 1 ? " was" : "s were");
	fw_checks(f, r);
	fputs("\ntensor leak candidates\n", f);
	if (!m->nleaks)
		fputs("  none: every tensor was freed, and no tensor site kept growing\n", f);
	for (uint32_t i = 0; i < m->nleaks && i < REP_TOP; i++) {
		const struct fw_site *s = &m->sites[m->leaks[i]];

		fprintf(f, "    dev %-2d%10s  %5" PRIu64 " tensor%s  ", s->dev, SZ(s->exit_bytes),
			s->exit_count, s->exit_count == 1 ? " " : "s");
		fw_chain(f, r, s);
		fprintf(f, "\n%14s%s%s%s (highest live %s)\n", "", s->exit_bytes ? "left at exit" : "",
			s->exit_bytes && s->growing ? ", " : "", s->growing ? "growing" : "",
			SZ(s->max));
		if (s->interrupted)
			fprintf(f, "%14sinterrupted: its process did not exit cleanly, so it may not be "
				"a leak\n", "");
	}
	for (int i = 0; i < m->ndevs; i++) {
		const struct fw_dev *d = &m->devs[i];

		if (d->proc < 0 || !d->end.cached)
			continue;
		fprintf(f, "  cache held at exit (the framework's free blocks, not a leak): pid %" PRIu32
			" device %d %s\n", rep_pid(a, d->proc), d->dev, SZ(d->end.cached));
	}
	if (!m->nooms)
		return;
	fprintf(f, "\nframework out-of-memory errors (%u)\n", m->nooms);
	for (uint32_t i = 0; i < m->nooms; i++) {
		const struct fw_oom *o = &m->ooms[i];
		char tm[32];

		fprintf(f, "  %s pid %" PRIu32 " device %d: request of %s failed: %s\n",
			rep_time(tm, sizeof(tm), o->st.t), rep_pid(a, o->proc), o->dev,
			SZ(o->requested), fw_verdict_name(o->verdict));
		fputs("      ", f);
		fw_state_line(f, &o->st);
		fprintf(f, "      device free %s (as the framework saw it)", SZ(o->device_free));
		if (o->has_total)
			fprintf(f, " of %s; outside the framework %s", SZ(o->device_total),
				o->outside > 0 ? SZ((uint64_t)o->outside) : "0 B");
		if (o->has_cuda)
			fprintf(f, "; memtrace's reserved of the process %s", SZ(o->cuda_reserved));
		putc('\n', f);
		for (int k = 0; k < o->ntop; k++)
			fw_held_line(f, r, &o->top[k], k ? "                  " : "      top holders ");
	}
}

int report_text(const struct report *r, FILE *f)
{
	const struct analysis *a = r->a;
	char tm[32];
	const char *path, *why;
	int nhost = 0;

	fprintf(f, "memtrace report: %d process%s, %s, %" PRIu64 " event%s (%" PRIu64 " failed)\n",
		a->nprocs, a->nprocs == 1 ? "" : "es", rep_time(tm, sizeof(tm), a->duration) + 1,
		a->events, a->events == 1 ? "" : "s", a->failed);
	if (r->nranks)
		ranks_table(f, r);
	else
		for (int i = 0; i < a->nprocs; i++)
			process_line(f, r, i);
	apis(f, a);
	for (int g = 0; g < r->ngdevs; g++) {
		putc('\n', f);
		device(f, r, r->gdevs[g], 0);
	}
	if (!r->ngdevs)
		fputs("\nno device memory was allocated\n", f);
	if (a->nprocs > 1) {
		putc('\n', f);
		for (int i = 0; i < a->nprocs; i++) {
			const struct an_proc *ap = &a->procs[i];

			if (r->nranks && !(r->ranks[r->rank_row[i]].flags & REP_RANK_FULL))
				continue;
			if (r->nranks)
				process_line(f, r, i);
			fprintf(f, "process %" PRIu32 ": peak %s reserved over all devices at %s\n",
				rep_pid(a, i), SZ(ap->peak_all), rep_time(tm, sizeof(tm), ap->peak_all_time));
			for (int k = 0; k < AN_MAX_DEV; k++)
				if (ap->pdev[k] >= 0 && a->devs[ap->pdev[k]].peak.reserved)
					device(f, r, ap->pdev[k], 1);
		}
		if (r->ngdevs > 1)
			fprintf(f, "all devices: peak %s reserved at %s\n", SZ(a->gpeak_all),
				rep_time(tm, sizeof(tm), a->gpeak_all_time));
	}
	for (int i = 0; i < a->nprocs; i++) {
		const struct an_proc *ap = &a->procs[i];

		if (!ap->host_peak && !ap->hostreg_peak && !ap->foreign_peak)
			continue;
		if (!nhost++)
			fputs("\nhost and imported memory (not counted in device reserved)\n", f);
		fprintf(f, "  pid %" PRIu32 ": pinned host peak %s (%s at exit), registered host peak "
			"%s, imported from other processes peak %s\n", rep_pid(a, i),
			SZ(ap->host_peak), SZ(ap->host_live), SZ(ap->hostreg_peak), SZ(ap->foreign_peak));
	}
	framework(f, r);
	report_ranges_text(r, f);
	report_nvtxmem_text(r, f);
	for (int i = 0; i < a->nprocs; i++)
		if (r->fw_off[i].p) {
			fprintf(f, "\nnote: pid %" PRIu32 ": PyTorch's tensors were not recorded: ", rep_pid(a, i));
			rep_text_str(f, r->fw_off[i].p, r->fw_off[i].len);
			putc('\n', f);
		}
	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *p = stream_proc(a->s, i);

		for (uint32_t k = 0; k < p->nnotes; k++) {
			struct trace_bytes n = trace_note_text(p->notes[k]);

			fprintf(f, "\nnote: pid %" PRIu32 ", from the recorder: ", rep_pid(a, i));
			rep_text_str(f, n.p, n.len);
			putc('\n', f);
		}
	}
	if (r->caching_seen && a->fw)
		fputs("\nnote: a caching allocator holds some segments: at the CUDA API they count as "
		      "cached;\n  the framework section above splits them into tensors and cache.\n", f);
	else if (r->caching_seen)
		fputs("\nnote: a caching allocator (PyTorch, CuPy) holds some segments. How it splits them "
		      "into\n  buffers is not visible at the CUDA API, so they count as cached. For PyTorch,\n"
		      "  memtrace run records the allocator's own events unless MEMTRACE_TORCH=0, python\n"
		      "  -I/-E/-S or another backend (docs/torch.md); this trace has none.\n", f);
	leaks(f, r);
	fragmentation(f, r);
	failures(f, r);
	shm(f, r);
	if (sym_unresolved(r->sy) || sym_problem(r->sy, 0, &path, &why) == 0) {
		fprintf(f, "\nsymbols: %" PRIu64 " frame%s could not be resolved (shown as module+offset)\n",
			sym_unresolved(r->sy), sym_unresolved(r->sy) == 1 ? "" : "s");
		for (unsigned i = 0; sym_problem(r->sy, i, &path, &why) == 0; i++) {
			fputs("  ", f);
			rep_text_str(f, path, strlen(path));
			fprintf(f, ": %s\n", why);
		}
	}
	return ferror(f) ? -1 : 0;
}
