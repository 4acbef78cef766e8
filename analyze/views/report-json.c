/*
 * report-json.c - the report as JSON (docs/report-json.md): one key per
 * line, indented, so that a test or a person can grep it; a frame is one
 * object on one line. Keys are only ever added, never renamed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "model/nvtxmem.h"
#include "model/ranges.h"
#include "model/report.h"
#include "views/format.h"
#include "views/report-nvtxmem.h"

struct jw {
	FILE *f;
	int depth;
	int first[32];
};

static void sep(struct jw *j)
{
	if (j->depth > 0 && !j->first[j->depth])
		putc(',', j->f);
	if (j->depth > 0)
		j->first[j->depth] = 0;
	putc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void key(struct jw *j, const char *k)
{
	sep(j);
	if (k)
		fprintf(j->f, "\"%s\": ", k);
}

static void open_(struct jw *j, const char *k, char c)
{
	key(j, k);
	putc(c, j->f);
	j->depth++;
	j->first[j->depth] = 1;
}

static void close_(struct jw *j, char c)
{
	int empty = j->first[j->depth];

	j->depth--;
	if (!empty) {
		putc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	putc(c, j->f);
}

static void u64(struct jw *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->f, "%" PRIu64, v);
}

static void i64(struct jw *j, const char *k, int64_t v)
{
	key(j, k);
	fprintf(j->f, "%" PRId64, v);
}

static void str(struct jw *j, const char *k, const char *s, size_t len)
{
	key(j, k);
	rep_json_str(j->f, s, len);
}

static void cstr(struct jw *j, const char *k, const char *s)
{
	str(j, k, s, s ? strlen(s) : 0);
}

static void boolean(struct jw *j, const char *k, int v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

static void null(struct jw *j, const char *k)
{
	key(j, k);
	fputs("null", j->f);
}

static void share(struct jw *j, const char *k, double v)
{
	key(j, k);
	fprintf(j->f, "%.4f", v);
}

static void frames(struct jw *j, const struct sym_stack *st)
{
	FILE *f = j->f;

	open_(j, "frames", '[');
	for (int i = 0; st && i < st->nframes; i++) {
		const struct sym_frame *fr = &st->frames[i];

		key(j, NULL);
		fputs("{\"function\": ", f);
		rep_json_str(f, fr->function, fr->function ? strlen(fr->function) : 0);
		fputs(", \"file\": ", f);
		rep_json_str(f, fr->file, fr->file ? strlen(fr->file) : 0);
		fprintf(f, ", \"line\": %d, \"module\": ", fr->line);
		rep_json_str(f, fr->module, strlen(fr->module));
		fprintf(f, ", \"offset\": \"0x%" PRIx64 "\", \"inlined\": %s, \"user\": %s, \"python\": %s}",
			fr->offset, fr->inlined ? "true" : "false", fr->user ? "true" : "false",
			fr->python ? "true" : "false");
	}
	close_(j, ']');
	u64(j, "hidden_frames", st ? (uint64_t)st->hidden : 0);
}

/* A site in a list; leak: with the reasons it is a leak candidate. */
static void entry(struct jw *j, const struct rep_entry *e, int leak)
{
	open_(j, NULL, '{');
	u64(j, "site", e->site->id);
	if (leak) {
		open_(j, "reasons", '[');
		if (e->at_exit)
			cstr(j, NULL, "live_at_exit");
		if (e->growing)
			cstr(j, NULL, "growing");
		close_(j, ']');
		boolean(j, "interrupted", e->site->interrupted);
	}
	if (e->dev >= 0)
		i64(j, "device", e->dev);
	else
		cstr(j, "device", "host");
	u64(j, "bytes", e->bytes);
	u64(j, "count", e->count);
	u64(j, "processes", (uint64_t)e->nprocs);
	boolean(j, "caching_allocator", e->caching);
	frames(j, e->st);
	close_(j, '}');
}

static void device(struct jw *j, const struct report *r, int di)
{
	const struct analysis *a = r->a;
	const struct an_dev *d = &a->devs[di];
	const struct an_peak *pk = &d->peak;
	const char *h;
	size_t hl;

	an_hostname(a, d->host_proc, &h, &hl);
	open_(j, NULL, '{');
	i64(j, "device", d->dev);
	str(j, "hostname", h, hl);
	u64(j, "peak_reserved_bytes", pk->reserved);
	u64(j, "peak_reserved_time_ns", pk->time);
	u64(j, "peak_allocated_bytes", pk->allocated);
	u64(j, "cached_bytes_at_peak", pk->reserved - pk->allocated);
	u64(j, "left_at_exit_bytes", d->left_at_exit);
	u64(j, "live_at_end_bytes", d->live_at_end);
	if (pk->has_sample) {
		u64(j, "device_used_bytes_at_peak", pk->used);
		u64(j, "device_used_sample_time_ns", pk->sample_time);
		i64(j, "untraced_bytes_at_peak", pk->untraced);
	} else {
		null(j, "device_used_bytes_at_peak");
		null(j, "untraced_bytes_at_peak");
	}
	if (d->has_sample)
		u64(j, "device_total_bytes", d->sample_total);
	else
		null(j, "device_total_bytes");
	if (pk->reserved) {
		const char *api = trace_api_name(pk->api);

		open_(j, "peak_set_by", '{');
		cstr(j, "api", api ? api : "unknown");
		u64(j, "bytes", pk->bytes);
		u64(j, "pid", rep_pid(a, pk->proc));
		frames(j, sym_stack(r->sy, a->s, pk->proc, pk->stack));
		close_(j, '}');
	}
	open_(j, "peak_sites", '[');
	for (int i = 0; i < r->dev_sites[di].n; i++)
		entry(j, &r->dev_sites[di].v[i], 0);
	close_(j, ']');
	close_(j, '}');
}

static void process(struct jw *j, const struct report *r, int i)
{
	const struct analysis *a = r->a;
	const struct sproc *p = stream_proc(a->s, i);
	const struct an_proc *ap = &a->procs[i];
	struct trace_bytes h = { "", 0 }, c = { "", 0 }, e = { "", 0 }, arg;
	int argi = 0;
	char *cmd;
	size_t n = 0;

	if (p->process)
		trace_process_strings(p->process, &h, &c, &e);
	open_(j, NULL, '{');
	u64(j, "pid", rep_pid(a, i));
	if (p->process)
		u64(j, "ppid", p->process->ppid);
	else
		null(j, "ppid");
	cmd = malloc(c.len + 1);
	if (cmd) {
		int ai = 0;

		while ((arg = rep_command_arg(a, i, &ai)).p) {
			if (n)
				cmd[n++] = ' ';
			memcpy(cmd + n, arg.p, arg.len);
			n += arg.len;
		}
	}
	str(j, "command", cmd ? cmd : "", n);
	free(cmd);
	open_(j, "argv", '[');
	while ((arg = rep_command_arg(a, i, &argi)).p)
		str(j, NULL, arg.p, arg.len);
	close_(j, ']');
	str(j, "exe", e.p, e.len);
	str(j, "hostname", h.p, h.len);
	i64(j, "rank", p->process ? p->process->rank : -1);
	i64(j, "local_rank", p->process ? p->process->local_rank : -1);
	i64(j, "world_size", p->process ? p->process->world_size : -1);
	cstr(j, "trace", trace_path(p->t));
	if (rep_end_name(ap->end))
		cstr(j, "ended", rep_end_name(ap->end));
	else
		null(j, "ended");
	if (ap->end == AN_END_EXIT || ap->end == AN_END_UNDERSCORE_EXIT)
		i64(j, "exit_status", ap->exit_status);
	else
		null(j, "exit_status");
	u64(j, "end_ns", ap->end_time);
	if (r->fw_off[i].p)
		str(j, "framework_off", r->fw_off[i].p, r->fw_off[i].len);
	open_(j, "recorder_notes", '[');
	for (uint32_t k = 0; k < p->nnotes; k++) {
		struct trace_bytes n = trace_note_text(p->notes[k]);

		str(j, NULL, n.p, n.len);
	}
	close_(j, ']');
	u64(j, "events", ap->events);
	u64(j, "failed", ap->failed);
	u64(j, "unknown_frees", ap->unknown_frees);
	u64(j, "start_ns", p->first_t);
	u64(j, "duration_ns", p->last_t - p->first_t);
	u64(j, "peak_reserved_bytes", ap->peak_all);
	u64(j, "peak_reserved_time_ns", ap->peak_all_time);
	u64(j, "host_pinned_peak_bytes", ap->host_peak);
	u64(j, "host_pinned_live_at_exit_bytes", ap->host_live);
	u64(j, "host_registered_peak_bytes", ap->hostreg_peak);
	u64(j, "foreign_peak_bytes", ap->foreign_peak);
	u64(j, "estimated_bytes", ap->estimated_bytes);
	open_(j, "devices", '[');
	for (int k = 0; k < AN_MAX_DEV; k++)
		if (ap->pdev[k] >= 0 && a->devs[ap->pdev[k]].used)
			device(j, r, ap->pdev[k]);
	close_(j, ']');
	close_(j, '}');
}

static void by_api(struct jw *j, const char *k, const uint64_t *v)
{
	open_(j, k, '{');
	for (unsigned i = 0; i < MT_API_MAX; i++) {
		char num[16];
		const char *nm = trace_api_name(i);

		if (!v[i])
			continue;
		if (!nm) {
			snprintf(num, sizeof(num), "%u", i);
			nm = num;
		}
		u64(j, nm, v[i]);
	}
	close_(j, '}');
}

static void fragmentation(struct jw *j, const struct report *r, int di)
{
	const struct an_dev *d = &r->a->devs[di];

	open_(j, NULL, '{');
	i64(j, "device", d->dev);
	share(j, "cached_share_at_peak", d->peak.reserved ?
	      (double)(d->peak.reserved - d->peak.allocated) / (double)d->peak.reserved : 0);
	share(j, "cached_share_mean", d->int_reserved > 0 ? d->int_cached / d->int_reserved : 0);
	open_(j, "free_extents_at_peak", '[');
	for (uint32_t i = 0; i < d->nextents; i++) {
		const struct an_extent *x = &d->extents[i];
		char addr[32];

		open_(j, NULL, '{');
		cstr(j, "type", x->pool ? "pool" : "vmm_reservation");
		snprintf(addr, sizeof(addr), "0x%" PRIx64, x->addr);
		cstr(j, x->pool ? "pool" : "address", addr);
		u64(j, "size_bytes", x->size);
		u64(j, "free_bytes", x->free_total);
		u64(j, "largest_free_bytes", x->free_largest);
		boolean(j, "approximate", x->pool);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "size_histogram", '[');
	for (int b = 0; b < AN_HIST; b++) {
		if (!d->hist_count[b])
			continue;
		open_(j, NULL, '{');
		u64(j, "from_bytes", (uint64_t)1 << b);
		u64(j, "count", d->hist_count[b]);
		u64(j, "bytes", d->hist_bytes[b]);
		close_(j, '}');
	}
	close_(j, ']');
	close_(j, '}');
}

/* --- "framework": the framework's own allocator (docs/report-json.md) ---- */

static void fw_frames(struct jw *j, const struct report *r, const struct fw_site *s)
{
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;

	if (s->stack)
		nf = trace_fw_stack_frames(stream_proc(r->a->s, s->proc)->t, s->stack, fr, 64);
	open_(j, "frames", '[');
	for (uint32_t i = 0; i < nf && i < 64; i++) {
		key(j, NULL);
		fputs("{\"file\": ", j->f);
		rep_json_str(j->f, fr[i].file, fr[i].file_len);
		fprintf(j->f, ", \"line\": %" PRIu32 ", \"function\": ", fr[i].line);
		rep_json_str(j->f, fr[i].function, fr[i].function_len);
		fprintf(j->f, ", \"user\": %s}", s->user && (int)i == s->main_frame ? "true" : "false");
	}
	close_(j, ']');
}

static void fw_state(struct jw *j, const char *k, const struct fw_state *st)
{
	open_(j, k, '{');
	u64(j, "time_ns", st->t);
	u64(j, "reserved_bytes", st->reserved);
	u64(j, "allocated_bytes", st->allocated);
	u64(j, "requested_bytes", st->requested);
	u64(j, "cached_bytes", st->cached);
	u64(j, "awaiting_free_bytes", st->awaiting);
	u64(j, "inactive_split_bytes", st->inactive_split);
	u64(j, "largest_free_block_bytes", st->largest_free);
	u64(j, "segments", st->segments);
	u64(j, "blocks", st->blocks);
}

static void fw_held(struct jw *j, const struct fw_held *h, int n)
{
	for (int i = 0; i < n; i++) {
		open_(j, NULL, '{');
		u64(j, "site", h[i].site + 1);
		u64(j, "bytes", h[i].bytes);
		u64(j, "count", h[i].count);
		close_(j, '}');
	}
}

static void fw_moment(struct jw *j, const char *k, const struct fw_moment *mo)
{
	fw_state(j, k, &mo->st);
	open_(j, "sites", '[');
	fw_held(j, mo->held, mo->nheld < REP_TOP ? (int)mo->nheld : REP_TOP);
	close_(j, ']');
	close_(j, '}');
}

static void fw_device(struct jw *j, const struct report *r, const struct fw_dev *d)
{
	const struct analysis *a = r->a;
	const char *h;
	size_t hl;

	an_hostname(a, d->proc >= 0 ? d->proc : 0, &h, &hl);
	open_(j, NULL, '{');
	i64(j, "device", d->dev);
	if (d->proc >= 0)
		u64(j, "pid", rep_pid(a, d->proc));
	else
		null(j, "pid");
	str(j, "hostname", h, hl);
	fw_moment(j, "peak_allocated", &d->peak_alloc);
	fw_moment(j, "peak_requested", &d->peak_req);
	fw_moment(j, "peak_reserved", &d->peak_res);
	fw_state(j, "at_exit", &d->end);
	close_(j, '}');
	if (d->has_cuda) {
		u64(j, "cuda_peak_reserved_bytes", d->cuda_peak);
		u64(j, "cuda_reserved_at_peak_reserved_bytes", d->cuda_at_peak_res);
		u64(j, "outside_framework_bytes_at_peak_reserved",
		    d->cuda_at_peak_res > d->peak_res.st.reserved ?
		    d->cuda_at_peak_res - d->peak_res.st.reserved : 0);
	} else {
		null(j, "cuda_peak_reserved_bytes");
		null(j, "cuda_reserved_at_peak_reserved_bytes");
		null(j, "outside_framework_bytes_at_peak_reserved");
	}
	if (d->has_torch_peaks) {
		open_(j, "pytorch_peaks", '{');
		u64(j, "time_ns", d->torch_peaks_t);
		u64(j, "allocated_bytes", d->torch_peak_allocated);
		u64(j, "requested_bytes", d->torch_peak_requested);
		u64(j, "reserved_bytes", d->torch_peak_reserved);
		close_(j, '}');
	} else
		null(j, "pytorch_peaks");
	u64(j, "allocs", d->allocs);
	u64(j, "segment_allocs", d->segment_allocs);
	u64(j, "segment_maps", d->maps);
	u64(j, "ooms", d->ooms);
	open_(j, "timeline", '[');
	for (uint32_t i = 0; i < d->ntl; i++) {
		key(j, NULL);
		fprintf(j->f, "[%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", d->tl[i].t, d->tl[i].reserved,
			d->tl[i].allocated);
	}
	close_(j, ']');
	close_(j, '}');
}

static void framework(struct jw *j, const struct report *r)
{
	const struct analysis *a = r->a;
	const struct fw_model *m = a->fw;

	if (!m)             /* absent: reports of other traces stay as they were */
		return;
	open_(j, "framework", '{');
	cstr(j, "name", "PyTorch");
	u64(j, "events", m->events);
	u64(j, "unknown_frees", m->unknown_frees);
	u64(j, "dropped_events", m->dropped);
	open_(j, "drains", '{');
	u64(j, "count", m->drains);
	u64(j, "total_ns", m->drain_ns);
	share(j, "share_of_run", a->duration ? (double)m->drain_ns / (double)a->duration : 0);
	u64(j, "resyncs", m->resyncs);
	u64(j, "budget_gaps", m->budget_gaps);
	u64(j, "program_history_calls", m->program_history);
	cstr(j, "timing", m->drain_timing ? "drain" : "time_us");
	close_(j, '}');
	open_(j, "checks", '{');
	u64(j, "count", m->checks);
	u64(j, "mismatches", m->check_bad);
	if (m->check_bad) {
		open_(j, "first_mismatch", '{');
		u64(j, "time_ns", m->first_bad.t);
		u64(j, "pid", rep_pid(a, m->first_bad.proc));
		i64(j, "device", m->first_bad.dev);
		cstr(j, "figure", m->first_bad.what);
		u64(j, "memtrace_bytes", m->first_bad.ours);
		u64(j, "pytorch_bytes", m->first_bad.theirs);
		close_(j, '}');
	} else
		null(j, "first_mismatch");
	close_(j, '}');
	open_(j, "drift", '{');
	u64(j, "alloc_without_free_block", m->drift_no_block);
	u64(j, "alloc_larger_than_free_block", m->drift_small_block);
	u64(j, "segment_released_while_used", m->drift_seg_busy);
	if (m->drift_first_t != FW_NEVER)
		u64(j, "first_time_ns", m->drift_first_t);
	else
		null(j, "first_time_ns");
	close_(j, '}');
	open_(j, "devices", '[');
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < m->ndevs; i++)
			if ((m->devs[i].proc < 0) == !k)
				fw_device(j, r, &m->devs[i]);
	close_(j, ']');
	open_(j, "sites", '[');
	for (uint32_t i = 0; i < m->nsites; i++) {
		const struct fw_site *s = &m->sites[i];

		open_(j, NULL, '{');
		u64(j, "site", s->id);
		i64(j, "device", s->dev);
		cstr(j, "function", s->function);
		cstr(j, "file", s->file);
		u64(j, "line", s->line);
		boolean(j, "user", s->user);
		u64(j, "allocs", s->allocs);
		u64(j, "bytes", s->bytes);
		u64(j, "peak_bytes", s->max);
		u64(j, "exit_bytes", s->exit_bytes);
		u64(j, "exit_count", s->exit_count);
		fw_frames(j, r, s);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "leaks", '[');
	for (uint32_t i = 0; i < m->nleaks; i++) {
		const struct fw_site *s = &m->sites[m->leaks[i]];

		open_(j, NULL, '{');
		u64(j, "site", s->id);
		open_(j, "reasons", '[');
		if (s->exit_bytes)
			cstr(j, NULL, "live_at_exit");
		if (s->growing)
			cstr(j, NULL, "growing");
		close_(j, ']');
		boolean(j, "interrupted", s->interrupted);
		i64(j, "device", s->dev);
		u64(j, "bytes", s->exit_bytes);
		u64(j, "count", s->exit_count);
		u64(j, "peak_bytes", s->max);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "cache_at_exit", '[');
	for (int i = 0; i < m->ndevs; i++) {
		const struct fw_dev *d = &m->devs[i];

		if (d->proc < 0 || !d->end.cached)
			continue;
		open_(j, NULL, '{');
		u64(j, "pid", rep_pid(a, d->proc));
		i64(j, "device", d->dev);
		u64(j, "bytes", d->end.cached);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "ooms", '[');
	for (uint32_t i = 0; i < m->nooms; i++) {
		const struct fw_oom *o = &m->ooms[i];

		open_(j, NULL, '{');
		u64(j, "pid", rep_pid(a, o->proc));
		i64(j, "device", o->dev);
		u64(j, "requested_bytes", o->requested);
		u64(j, "device_free_bytes", o->device_free);
		if (o->has_total) {
			u64(j, "device_total_bytes", o->device_total);
			i64(j, "outside_framework_bytes", o->outside);
		} else {
			null(j, "device_total_bytes");
			null(j, "outside_framework_bytes");
		}
		if (o->has_cuda)
			u64(j, "cuda_reserved_bytes", o->cuda_reserved);
		else
			null(j, "cuda_reserved_bytes");
		cstr(j, "verdict", fw_verdict_name(o->verdict));
		fw_state(j, "state", &o->st);
		close_(j, '}');
		open_(j, "top_holders", '[');
		fw_held(j, o->top, o->ntop);
		close_(j, ']');
		close_(j, '}');
	}
	close_(j, ']');
	close_(j, '}');
}

/* The ranks table of a run of many processes: the same rows and flags as
   the text's, by host, device and rank; "processes" has the rest. */
static void ranks(struct jw *j, const struct report *r)
{
	static const struct { int flag; const char *name; } flags[] = {
		{ REP_RANK_TOP_PEAK, "highest_peak" }, { REP_RANK_FAILED, "failed" },
		{ REP_RANK_KILLED, "killed" },
	};

	open_(j, "ranks", '{');
	if (r->top_peak_proc >= 0)
		u64(j, "highest_peak_pid", rep_pid(r->a, r->top_peak_proc));
	else
		null(j, "highest_peak_pid");
	u64(j, "highest_peak_reserved_bytes", r->top_peak);
	u64(j, "highest_peak_processes", (uint64_t)r->top_peak_shared);
	u64(j, "median_peak_reserved_bytes", r->median_peak);
	u64(j, "full_sections", REP_RANKS_FULL);
	open_(j, "table", '[');
	for (int i = 0; i < r->nranks; i++) {
		const struct rep_rank *k = &r->ranks[i];

		open_(j, NULL, '{');
		if (k->rank >= 0)
			i64(j, "rank", k->rank);
		else
			null(j, "rank");
		u64(j, "pid", rep_pid(r->a, k->proc));
		str(j, "hostname", k->host.p ? k->host.p : "", k->host.len);
		if (k->dev >= 0)
			i64(j, "device", k->dev);
		else
			null(j, "device");
		u64(j, "peak_reserved_bytes", k->peak);
		u64(j, "failed", k->failed);
		open_(j, "flags", '[');
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
			if (k->flags & flags[f].flag)
				cstr(j, NULL, flags[f].name);
		close_(j, ']');
		boolean(j, "full_section", !!(k->flags & REP_RANK_FULL));
		close_(j, '}');
	}
	close_(j, ']');
	close_(j, '}');
}

/* "ranges": the program's units of time (model/ranges.h, docs/units.md). */
#define RG_JSON_INSTANCES 1000      /* step and test instances listed */
/* "step", "phase", "module" of where something happened (null: none). */
static void rg_at_json(struct jw *j, const struct rg_model *m, const struct rg_at *at)
{
	if (at->step >= 0)
		u64(j, "step", m->inst[at->step].step_no);
	else
		null(j, "step");
	if (at->phase >= 0)
		cstr(j, "phase", m->names[at->phase].name);
	else
		null(j, "phase");
	if (at->module >= 0)
		cstr(j, "module", m->names[at->module].name);
	else
		null(j, "module");
}

/* "categories": the framework's memory at a moment (model/categories.h);
   the three named categories null without a categories note. */
static void rg_split_json(struct jw *j, const struct rg_model *m, const struct cat_split *s)
{
	if (!s->has) {
		null(j, "categories");
		return;
	}
	open_(j, "categories", '{');
	for (int c = 0; c < CAT_N; c++)
		if (m->cats.notes || c >= CAT_ACTIVATIONS)
			u64(j, cat_key(c), c == CAT_TEMPORARIES && !m->cats.notes ?
			    s->allocated - s->bytes[CAT_ACTIVATIONS] : s->bytes[c]);
		else
			null(j, cat_key(c));
	u64(j, "allocated", s->allocated);
	u64(j, "reserved", s->reserved);
	u64(j, "cache", s->reserved > s->allocated ? s->reserved - s->allocated : 0);
	close_(j, '}');
}

static void rg_inst_json(struct jw *j, const struct rg_model *m, const struct report *r, int i)
{
	const struct rg_inst *in = &m->inst[i];
	char buf[512];

	open_(j, NULL, '{');
	cstr(j, "range", rg_group_name(buf, sizeof buf, &m->groups[in->group]));
	cstr(j, "name", in->name);
	u64(j, "pid", rep_pid(r->a, in->proc));
	u64(j, "tid", in->tid);
	u64(j, "start_ns", in->t0);
	u64(j, "end_ns", in->t1);
	boolean(j, "open_at_exit", in->open);
	u64(j, "reserved_at_start", in->res0);
	u64(j, "peak_reserved", in->res_peak);
	u64(j, "peak_time_ns", in->res_peak_t);
	u64(j, "reserved_at_end", in->res1);
	if (m->has_fw) {
		u64(j, "framework_allocated_at_start", in->fw0);
		u64(j, "framework_peak_allocated", in->fw_peak);
		u64(j, "framework_allocated_at_end", in->fw1);
	}
	if (in->step >= 0)
		u64(j, "step", m->inst[in->step].step_no);
	else
		null(j, "step");
	if (m->has_fw && in->is_step) {
		u64(j, "framework_peak_time_ns", in->fw_peak_t);
		rg_split_json(j, m, &in->split);
	}
	close_(j, '}');
}

/* "nvtx_pools": pools announced by NVTX (model/nvtxmem.h, docs/units.md). */
static void nm_state_json(struct jw *j, const char *k, const struct nm_state *s)
{
	open_(j, k, '{');
	u64(j, "time_ns", s->t);
	u64(j, "heaps", s->heaps);
	u64(j, "size_bytes", s->size);
	u64(j, "regions", s->regions);
	u64(j, "live_bytes", s->live);
	u64(j, "free_bytes", s->size - s->live);
	if (s->counted) {
		u64(j, "holes", s->holes);
		u64(j, "largest_hole_bytes", s->largest);
	} else {
		null(j, "holes");
		null(j, "largest_hole_bytes");
	}
	close_(j, '}');
}

static void nvtx_pools_json(struct jw *j, const struct report *r)
{
	static const char *const keys[NM_NMISUSE] = {
		[NM_OUTSIDE_HEAP] = "outside_heap", [NM_UNKNOWN_HEAP] = "unknown_heap",
		[NM_UNKNOWN_REGION] = "unknown_region", [NM_OVERLAP] = "overlap",
	};
	const struct nm_model *m = r->a->nvmem;

	if (!m)
		return;     /* no NVTX_MEM record: no key */
	open_(j, "nvtx_pools", '{');
	open_(j, "pools", '[');
	for (uint32_t i = 0; i < m->npools; i++) {
		const struct nm_pool *q = &m->pools[i];

		open_(j, NULL, '{');
		u64(j, "pid", rep_pid(r->a, q->proc));
		cstr(j, "name", nvmem_pool_name(q));
		if (q->domain)
			cstr(j, "domain", q->domain);
		else
			null(j, "domain");
		u64(j, "heaps_registered", q->heaps_registered);
		key(j, "first_heap_addr");
		fprintf(j->f, "\"0x%" PRIx64 "\"", q->addr);
		u64(j, "regions_registered", q->regions_registered);
		u64(j, "resets", q->resets);
		nm_state_json(j, "peak", &q->peak);
		open_(j, "failures", '[');
		for (uint32_t k = 0; k < q->nfail && k < NM_FAILURES; k++) {
			const struct an_failure *fl = report_nvtxmem_failure(r->a, q->proc, q->fail[k].t);

			open_(j, NULL, '{');
			nm_state_json(j, "state", &q->fail[k]);
			if (fl) {
				cstr(j, "api", trace_api_name(fl->api));
				u64(j, "requested_bytes", fl->requested);
			}
			close_(j, '}');
		}
		close_(j, ']');
		u64(j, "failures_total", q->nfail);
		nm_state_json(j, "at_end", &q->now);
		open_(j, "sites", '[');
		for (uint32_t k = 0; k < q->nsites; k++) {
			const struct nm_site *s = &q->sites[k];
			const struct sym_stack *st = sym_stack(r->sy, r->a->s, q->proc, s->stack);
			char b[4096];

			open_(j, NULL, '{');
			cstr(j, "name", rep_stack_name(b, sizeof b, st, SITE_NAME_FRAMES, NULL));
			u64(j, "peak_live_bytes", s->max);
			u64(j, "regions_registered", s->registered);
			u64(j, "live_bytes_at_end", s->live);
			u64(j, "regions_at_end", s->count);
			frames(j, st);
			close_(j, '}');
		}
		close_(j, ']');
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "misuse", '{');
	for (int k = 0; k < NM_NMISUSE; k++)
		u64(j, keys[k], m->misuse[k]);
	close_(j, '}');
	u64(j, "process_wide_regions", m->process_wide);
	u64(j, "other_type", m->other_type);
	close_(j, '}');
}

static void ranges_json(struct jw *j, const struct report *r)
{
	const struct rg_model *m = r->a->ranges;
	char buf[512];
	uint32_t n = 0;

	if (!m)
		return;     /* no range record: no key (older reports had none) */
	open_(j, "ranges", '{');
	u64(j, "instances", m->instances);
	u64(j, "marks", m->marks);
	u64(j, "thread_names", m->thread_names);
	open_(j, "peaks", '[');
	for (int i = 0; m->peaks && i < m->nprocs; i++) {
		const struct rg_peak *pk = &m->peaks[i];
		if (!pk->reserved)
			continue;
		open_(j, NULL, '{');
		u64(j, "pid", rep_pid(r->a, i));
		u64(j, "reserved_bytes", pk->reserved);
		u64(j, "time_ns", pk->t);
		if (pk->group >= 0) {
			cstr(j, "range", rg_group_name(buf, sizeof buf, &m->groups[pk->group]));
			cstr(j, "name", m->names[pk->nm].name);
		} else {
			null(j, "range");
		}
		rg_at_json(j, m, &pk->at);
		boolean(j, "run_peak", i == m->peak_proc);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "framework_peaks", '[');
	for (int i = 0; m->peaks && i < m->nprocs; i++) {
		const struct rg_peak *pk = &m->peaks[i];
		if (!pk->has_fw)
			continue;
		open_(j, NULL, '{');
		u64(j, "pid", rep_pid(r->a, i));
		u64(j, "allocated_bytes", pk->fw);
		u64(j, "time_ns", pk->fw_t);
		if (pk->fw_group >= 0) {
			cstr(j, "range", rg_group_name(buf, sizeof buf, &m->groups[pk->fw_group]));
			cstr(j, "name", m->names[pk->fw_nm].name);
		} else {
			null(j, "range");
		}
		rg_at_json(j, m, &pk->fw_at);
		rg_split_json(j, m, &pk->fw_split);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "ooms", '[');
	for (uint32_t i = 0; i < m->nooms; i++) {
		const struct fw_oom *o = &r->a->fw->ooms[i];
		open_(j, NULL, '{');
		u64(j, "pid", rep_pid(r->a, o->proc));
		i64(j, "device", o->dev);
		u64(j, "requested_bytes", o->requested);
		u64(j, "time_ns", o->st.t);
		rg_at_json(j, m, &o->at);
		rg_split_json(j, m, &m->ooms[i].split);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "modules", '[');
	for (uint32_t i = 0; i < m->nnames; i++) {
		const struct rg_name *e = &m->names[i];
		if (e->kind != RG_MODULE || !e->has_peak || !m->has_fw)
			continue;
		open_(j, NULL, '{');
		cstr(j, "module", e->name);
		u64(j, "pid", rep_pid(r->a, e->peak_proc));
		u64(j, "peak_allocated", e->fw_peak);
		u64(j, "peak_time_ns", e->fw_peak_t);
		if (e->peak_step >= 0)
			u64(j, "peak_step", m->inst[e->peak_step].step_no);
		else
			null(j, "peak_step");
		u64(j, "own_bytes", e->split.own);
		rg_split_json(j, m, &e->split);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "categories_notes", '{');
	u64(j, "notes", m->cats.notes);
	u64(j, "entries", m->cats.entries);
	u64(j, "unmatched", m->cats.unmatched);
	u64(j, "unreadable", m->cats.bad);
	u64(j, "cut", m->cats.bad_notes);
	close_(j, '}');
	open_(j, "ranges", '[');
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct rg_group *gr = &m->groups[g];
		const struct rg_inst *in = &m->inst[gr->peak_inst];
		open_(j, NULL, '{');
		cstr(j, "range", rg_group_name(buf, sizeof buf, gr));
		if (gr->domain)
			cstr(j, "domain", gr->domain);
		else
			null(j, "domain");
		cstr(j, "name", gr->name);
		boolean(j, "step", gr->is_step && (int)g == m->step_group);
		u64(j, "instances", gr->count);
		u64(j, "left_open", gr->open);
		u64(j, "total_ns", gr->total_ns);
		u64(j, "peak_reserved", in->res_peak);
		u64(j, "peak_pid", rep_pid(r->a, in->proc));
		u64(j, "peak_time_ns", in->res_peak_t);
		if (in->step >= 0)
			u64(j, "peak_step", m->inst[in->step].step_no);
		else
			null(j, "peak_step");
		if (m->has_fw && gr->fw_peak_inst >= 0)
			u64(j, "framework_peak_allocated", m->inst[gr->fw_peak_inst].fw_peak);
		close_(j, '}');
	}
	close_(j, ']');
	open_(j, "steps", '[');
	for (uint32_t k = 0; k < m->nsteps && n < RG_JSON_INSTANCES; k++, n++)
		rg_inst_json(j, m, r, (int)m->steps[k]);
	close_(j, ']');
	if (m->has_growth) {
		open_(j, "growth", '{');
		i64(j, "reserved_per_step", m->growth);
		if (m->has_fw)
			i64(j, "framework_allocated_per_step", m->fw_growth);
		i64(j, "first_step_peak_vs_median", m->first_vs_steady);
		if (m->growth_site >= 0 && m->growth_site_bytes > 0) {
			const struct site *st = site_of(&r->sites, (uint32_t)m->growth_site);
			u64(j, "site", st->id);
			cstr(j, "site_name", rep_site_name(buf, sizeof buf, st, NULL));
			i64(j, "site_bytes_per_step", m->growth_site_bytes);
			u64(j, "from_step", m->growth_from);
			u64(j, "to_step", m->growth_to);
		} else {
			null(j, "site");
		}
		close_(j, '}');
	} else {
		null(j, "growth");
	}
	open_(j, "tests", '[');
	for (uint32_t i = 0; i < m->ninst && n < 2 * RG_JSON_INSTANCES; i++)
		if (m->inst[i].origin == MT_ORIGIN_PYTEST) {
			rg_inst_json(j, m, r, (int)i);
			n++;
		}
	close_(j, ']');
	open_(j, "misuse", '{');
	u64(j, "pops_unmatched", m->pops_unmatched);
	u64(j, "ends_unmatched", m->ends_unmatched);
	u64(j, "left_open", m->left_open);
	u64(j, "ended_on_another_thread", m->ends_other_thread);
	u64(j, "not_followed", m->not_followed);
	close_(j, '}');
	close_(j, '}');
}

int report_json(const struct report *r, FILE *f)
{
	const struct analysis *a = r->a;
	struct jw j;
	const char *path, *why;

	memset(&j, 0, sizeof(j));
	j.f = f;
	putc('{', f);
	j.depth = 1;
	j.first[1] = 1;
	u64(&j, "format_version", REP_FORMAT_VERSION);
	u64(&j, "duration_ns", a->duration);
	u64(&j, "start_wall_ns", stream_origin_wall(a->s));
	if (r->db_path)
		cstr(&j, "database", r->db_path);
	open_(&j, "processes", '[');
	for (int i = 0; i < a->nprocs; i++)
		process(&j, r, i);
	close_(&j, ']');
	if (r->nranks)
		ranks(&j, r);

	open_(&j, "events", '{');
	u64(&j, "total", a->events);
	u64(&j, "failed", a->failed);
	by_api(&j, "by_api", a->by_api);
	by_api(&j, "failed_by_api", a->failed_by_api);
	close_(&j, '}');

	open_(&j, "devices", '[');
	for (int i = 0; i < r->ngdevs; i++)
		device(&j, r, r->gdevs[i]);
	close_(&j, ']');
	ranges_json(&j, r);
	nvtx_pools_json(&j, r);
	open_(&j, "peak_all_devices", '{');
	u64(&j, "reserved_bytes", a->gpeak_all);
	u64(&j, "time_ns", a->gpeak_all_time);
	close_(&j, '}');

	open_(&j, "peak_sites", '[');
	for (int i = 0; i < r->ngdevs; i++) {
		const struct rep_list *l = &r->dev_sites[r->gdevs[i]];

		for (int k = 0; k < l->n; k++)
			entry(&j, &l->v[k], 0);
	}
	close_(&j, ']');

	open_(&j, "leaks", '[');
	for (int k = 0; k < r->leaks.n; k++)
		entry(&j, &r->leaks.v[k], 1);
	close_(&j, ']');
	open_(&j, "cache_at_exit", '[');
	for (int k = 0; k < r->cache_exit.n; k++)
		entry(&j, &r->cache_exit.v[k], 0);
	close_(&j, ']');

	open_(&j, "fragmentation", '[');
	for (int i = 0; i < r->ngdevs; i++)
		fragmentation(&j, r, r->gdevs[i]);
	close_(&j, ']');

	open_(&j, "oom_retries", '[');
	for (uint32_t i = 0; i < a->noomsigs; i++) {
		const struct an_oomsig *s = &a->oomsigs[i];

		open_(&j, NULL, '{');
		u64(&j, "time_ns", s->time);
		u64(&j, "pid", rep_pid(a, s->proc));
		u64(&j, "tid", s->tid);
		i64(&j, "device", s->dev);
		u64(&j, "requested_bytes", s->requested);
		u64(&j, "frees", s->nfrees);
		u64(&j, "freed_bytes", s->freed);
		u64(&j, "retry_bytes", s->retry_bytes);
		u64(&j, "retry_result", s->retry_result);
		u64(&j, "retry_time_ns", s->retry_time);
		close_(&j, '}');
	}
	close_(&j, ']');

	u64(&j, "failures_total", a->failures_total);
	open_(&j, "failures", '[');
	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *fl = &a->failures[i];
		const char *api = trace_api_name(fl->api), *en = rep_error_name(fl->error, fl->runtime);

		open_(&j, NULL, '{');
		u64(&j, "time_ns", fl->time);
		u64(&j, "pid", rep_pid(a, fl->proc));
		u64(&j, "tid", fl->tid);
		cstr(&j, "api", api ? api : "unknown");
		i64(&j, "device", fl->dev);
		u64(&j, "requested_bytes", fl->requested);
		u64(&j, "error", fl->error);
		if (en)
			cstr(&j, "error_name", en);
		else
			null(&j, "error_name");
		cstr(&j, "error_api", fl->runtime ? "runtime" : "driver");
		u64(&j, "reserved_bytes", fl->reserved);
		if (fl->has_free_after)
			u64(&j, "device_free_bytes", fl->free_after);
		else
			null(&j, "device_free_bytes");
		frames(&j, sym_stack(r->sy, a->s, fl->proc, fl->stack));
		open_(&j, "top_holders", '[');
		for (int k = 0; k < fl->ntop; k++) {
			const struct an_site *s = &a->sites[fl->top[k].site];

			open_(&j, NULL, '{');
			u64(&j, "bytes", fl->top[k].bytes);
			u64(&j, "count", fl->top[k].count);
			boolean(&j, "caching_allocator", s->caching);
			frames(&j, sym_stack(r->sy, a->s, s->proc, s->stack));
			close_(&j, '}');
		}
		close_(&j, ']');
		close_(&j, '}');
	}
	close_(&j, ']');

	open_(&j, "caching_allocator", '{');
	boolean(&j, "seen", r->caching_seen);
	if (r->caching_seen && a->fw)
		cstr(&j, "note", "at the CUDA API a caching allocator's segments count as cached; "
		     "\"framework\" splits them into tensors and cache");
	else if (r->caching_seen)
		cstr(&j, "note", "a caching allocator's split of its segments into buffers is not "
		     "visible at the CUDA API, and these traces hold no framework records "
		     "(MEMTRACE_TORCH=0, python -I/-E/-S, another backend: docs/torch.md)");
	close_(&j, '}');

	framework(&j, r);

	key(&j, "shm");
	shm_render_json(f, &r->shm);        /* one line: docs/report-json.md */

	open_(&j, "symbols", '{');
	u64(&j, "unresolved_frames", sym_unresolved(r->sy));
	open_(&j, "modules_unavailable", '[');
	for (unsigned i = 0; sym_problem(r->sy, i, &path, &why) == 0; i++) {
		open_(&j, NULL, '{');
		cstr(&j, "path", path);
		cstr(&j, "problem", why);
		close_(&j, '}');
	}
	close_(&j, ']');
	close_(&j, '}');
	j.depth = 0;
	fputs("\n}\n", f);
	return ferror(f) ? -1 : 0;
}
