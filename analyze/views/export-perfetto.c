/*
 * export-perfetto.c - the run as Chrome trace-event JSON, which
 * ui.perfetto.dev and chrome://tracing open (docs/export.md): per process
 * and device, counter tracks ("ph":"C") of reserved, allocated and cached
 * from the model's timeline rows (and the framework's when the run has its
 * records); per device of the run, the same and the device used of each
 * memory sample, under pid 0; an instant event ("ph":"i") for each failed
 * allocation and each OOM retry with its stack, and for each of the
 * framework's OOMs with its verdict and top holders; process and thread names
 * ("ph":"M"); the program's ranges (model/ranges.h) as slices on their
 * thread's track ("ph":"X" for a push/pop pair; an async pair "b"/"e" for
 * a start/end, which NVTX lets end on another thread), its marks as
 * instants ("ph":"i") on their thread and its steps as a counter track
 * per process ("step": the step's number while it runs, 0
 * between steps). The ranges and marks are the model's log (the first
 * RG_MAX_SLICES instances that ended, RG_MAX_MARKS marks): when it left
 * some out, a global instant at the run's start says how many were shown
 * (export_ranges_cut, the line cmd-export.c also warns). Times are
 * microseconds since the run's start, to the nanosecond.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "model/ranges.h"
#include "views/export.h"
#include "views/format.h"

size_t export_frame_text(const struct sym_frame *fr, char *buf, size_t len)
{
	int n;

	if (!len)
		return 0;
	if (fr->function)
		n = snprintf(buf, len, "%s (%s:%d)", fr->function, fr->file ? fr->file : "?",
			     fr->line);
	else
		n = snprintf(buf, len, "%s+0x%" PRIx64, fr->module[0] ? fr->module : "?",
			     fr->offset);
	if (n < 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

struct pw {
	FILE *f;
	int first;
};

/* Starts the next event: the separator and the fields every event has. */
static void ev(struct pw *w, const char *ph, uint64_t t_ns, uint32_t pid, uint32_t tid)
{
	fprintf(w->f, "%s\n{\"ph\": \"%s\", \"ts\": %" PRIu64 ".%03u, \"pid\": %" PRIu32
		", \"tid\": %" PRIu32, w->first ? "" : ",", ph, t_ns / 1000, (unsigned)(t_ns % 1000),
		pid, tid);
	w->first = 0;
}

static void counter(struct pw *w, uint32_t pid, const char *dev, const char *what,
		    uint64_t t, uint64_t bytes)
{
	ev(w, "C", t, pid, 0);
	fputs(", \"name\": ", w->f);
	{
		char n[320];

		snprintf(n, sizeof(n), "%s %s", dev, what);
		rep_json_str(w->f, n, strlen(n));
	}
	fprintf(w->f, ", \"args\": {\"bytes\": %" PRIu64 "}}", bytes);
}

static void meta(struct pw *w, const char *what, uint32_t pid, uint32_t tid, const char *s,
		 size_t len)
{
	ev(w, "M", 0, pid, tid);
	fprintf(w->f, ", \"name\": \"%s\", \"args\": {\"name\": ", what);
	rep_json_str(w->f, s, len);
	fputs("}}", w->f);
}

/* "stack": ["frame", ...], innermost first */
static void stack_arg(struct pw *w, const struct sym_stack *st)
{
	char b[1024];

	fputs("\"stack\": [", w->f);
	for (int i = 0; st && i < st->nframes; i++) {
		size_t n = export_frame_text(&st->frames[i], b, sizeof(b));

		if (i)
			fputs(", ", w->f);
		rep_json_str(w->f, b, n);
	}
	fputc(']', w->f);
}

/* The process's name: its command line, then its pid. */
static void proc_name(struct pw *w, const struct analysis *a, int p)
{
	size_t cap = 256, n = 0;
	char *s = malloc(cap);
	int ai = 0;
	struct trace_bytes x;

	if (!s)
		return;
	while ((x = rep_command_arg(a, p, &ai)).p) {
		if (n + x.len + 40 > cap) {
			char *g = realloc(s, cap = n + x.len + 256);

			if (!g)
				break;
			s = g;
		}
		if (n)
			s[n++] = ' ';
		memcpy(s + n, x.p, x.len);
		n += x.len;
	}
	if (n + 40 > cap) {
		char *g = realloc(s, cap = n + 64);

		if (g)
			s = g;
	}
	if (n + 40 <= cap)
		n += (size_t)snprintf(s + n, cap - n, "%spid %" PRIu32, n ? " - " : "",
				      rep_pid(a, p));
	meta(w, "process_name", rep_pid(a, p), 0, s, n);
	free(s);
}

/* The CUDA-level tracks of device d up to time end; at a replayed moment
   (at not NULL), a last value of each at end: the state then. */
static void dev_counters(struct pw *w, const struct report *r, const struct an_dev *d,
			 uint32_t pid, uint64_t end, const struct an_at *at)
{
	char dn[256];
	uint32_t n = 0;

	rep_dev_name(r, d, dn, sizeof(dn));
	while (n < d->ntl && d->tl[n].t <= end)
		n++;
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "reserved", d->tl[i].t, d->tl[i].reserved);
	if (at)
		counter(w, pid, dn, "reserved", end, at->reserved);
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "allocated", d->tl[i].t, d->tl[i].allocated);
	if (at)
		counter(w, pid, dn, "allocated", end, at->allocated);
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "cached", d->tl[i].t, d->tl[i].reserved - d->tl[i].allocated);
	if (at)
		counter(w, pid, dn, "cached", end, at->reserved - at->allocated);
	for (uint32_t i = 0; i < d->nsamples && d->samples[i].t <= end; i++)
		counter(w, pid, dn, "device used", d->samples[i].t, d->samples[i].used);
}

static void fw_dev_name(const struct report *r, const struct fw_dev *fd, char *dn, size_t len)
{
	const struct analysis *a = r->a;

	if (a->nhosts > 1 && fd->proc >= 0) {
		const char *h;
		size_t hl;

		an_hostname(a, fd->proc, &h, &hl);
		snprintf(dn, len, "%.*s:%d", (int)(hl < 200 ? hl : 200), h, fd->dev);
	} else {
		snprintf(dn, len, "device %d", fd->dev);
	}
}

/* The framework's tracks of fd up to time end: its timeline rows
   (fw_dev.tl, tl_req); at a moment between rows (st not NULL), a last
   value of each at end, the state then. */
static void fw_counters(struct pw *w, const struct report *r, const struct fw_dev *fd,
			uint64_t end, const struct fw_state *st)
{
	const struct analysis *a = r->a;
	uint32_t pid = fd->proc >= 0 ? rep_pid(a, fd->proc) : 0, n = 0;
	char dn[256];

	fw_dev_name(r, fd, dn, sizeof(dn));
	while (n < fd->ntl && fd->tl[n].t <= end)
		n++;
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "tensors reserved", fd->tl[i].t, fd->tl[i].reserved);
	if (st)
		counter(w, pid, dn, "tensors reserved", end, st->reserved);
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "tensors allocated", fd->tl[i].t, fd->tl[i].allocated);
	if (st)
		counter(w, pid, dn, "tensors allocated", end, st->allocated);
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "tensors requested", fd->tl[i].t, fd->tl_req[i]);
	if (st)
		counter(w, pid, dn, "tensors requested", end, st->requested);
	for (uint32_t i = 0; i < n; i++)
		counter(w, pid, dn, "tensors cached", fd->tl[i].t,
			fd->tl[i].reserved - fd->tl[i].allocated);
	if (st)
		counter(w, pid, dn, "tensors cached", end, st->cached);
}

static void failure(struct pw *w, const struct report *r, const struct an_failure *fl)
{
	const struct analysis *a = r->a;
	const char *api = trace_api_name(fl->api), *en = rep_error_name(fl->error, fl->runtime);
	char name[160];

	snprintf(name, sizeof(name), "%s failed: %s", api ? api : "allocation",
		 en ? en : "error");
	ev(w, "i", fl->time, rep_pid(a, fl->proc), fl->tid);
	fprintf(w->f, ", \"s\": \"p\", \"cat\": \"failure\", \"name\": \"%s\", \"args\": {"
		"\"device\": %d, \"requested_bytes\": %" PRIu64 ", \"error\": %u, "
		"\"reserved_bytes\": %" PRIu64 ", ", name, fl->dev, fl->requested,
		(unsigned)fl->error, fl->reserved);
	if (fl->has_free_after)
		fprintf(w->f, "\"device_free_bytes\": %" PRIu64 ", ", fl->free_after);
	stack_arg(w, sym_stack(r->sy, a->s, fl->proc, fl->stack));
	fputs("}}", w->f);
}

/* An OOM retry: its stack is the failure's that started it. */
static void oomsig(struct pw *w, const struct report *r, const struct an_oomsig *s)
{
	const struct analysis *a = r->a;
	const struct sym_stack *st = NULL;

	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *fl = &a->failures[i];

		if (fl->time == s->time && fl->proc == s->proc && fl->tid == s->tid) {
			st = sym_stack(r->sy, a->s, fl->proc, fl->stack);
			break;
		}
	}
	ev(w, "i", s->time, rep_pid(a, s->proc), s->tid);
	fprintf(w->f, ", \"s\": \"p\", \"cat\": \"oom_retry\", \"name\": \"OOM retry\", "
		"\"args\": {\"device\": %d, \"requested_bytes\": %" PRIu64 ", \"frees\": %" PRIu32
		", \"freed_bytes\": %" PRIu64 ", \"retry_bytes\": %" PRIu64 ", \"retry_result\": %u, "
		"\"retry_time_ns\": %" PRIu64 ", ", s->dev, s->requested, s->nfrees, s->freed,
		s->retry_bytes, (unsigned)s->retry_result, s->retry_time);
	stack_arg(w, st);
	fputs("}}", w->f);
}

/* "function (file:line)" of a framework frame or site; "?" when unknown */
static void fw_frame_str(struct pw *w, const char *fn, size_t fnl, const char *file,
			 size_t filel, uint32_t line)
{
	char b[1024];
	int n;

	if (!fn)
		fn = "?", fnl = 1;
	if (!file)
		file = "?", filel = 1;
	n = snprintf(b, sizeof(b), "%.*s (%.*s:%" PRIu32 ")", (int)(fnl < 400 ? fnl : 400), fn,
		     (int)(filel < 400 ? filel : 400), file, line);

	rep_json_str(w->f, b, n < 0 ? 0 : (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}

/* The framework's OOM: its verdict, the request, the allocator's state and
   the tensor sites that held the most then, each by its main frame. */
static void fw_oom_event(struct pw *w, const struct report *r, const struct fw_oom *o)
{
	const struct analysis *a = r->a;
	const struct fw_model *m = a->fw;
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;

	ev(w, "i", o->st.t, rep_pid(a, o->proc), 0);
	fprintf(w->f, ", \"s\": \"p\", \"cat\": \"framework_oom\", "
		"\"name\": \"framework OOM: %s\", \"args\": {\"device\": %d, ",
		fw_verdict_name(o->verdict), o->dev);
	fprintf(w->f, "\"requested_bytes\": %" PRIu64 ", \"device_free_bytes\": %" PRIu64
		", \"verdict\": \"%s\", ", o->requested, o->device_free,
		fw_verdict_name(o->verdict));
	fprintf(w->f, "\"reserved_bytes\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64
		", \"cached_bytes\": %" PRIu64 ", \"largest_free_bytes\": %" PRIu64
		", \"top_holders\": [", o->st.reserved, o->st.allocated, o->st.cached,
		o->st.largest_free);
	for (int k = 0; k < o->ntop; k++) {
		const struct fw_site *s = &m->sites[o->top[k].site];

		fprintf(w->f, "%s{\"site\": %" PRIu32 ", \"bytes\": %" PRIu64 ", \"count\": %"
			PRIu64 ", \"frame\": ", k ? ", " : "", o->top[k].site + 1, o->top[k].bytes,
			o->top[k].count);
		if (s->function || s->file)
			fw_frame_str(w, s->function, s->function ? strlen(s->function) : 0, s->file,
				     s->file ? strlen(s->file) : 0, s->line);
		else
			fputs("null", w->f);
		fputc('}', w->f);
	}
	fputs("], \"stack\": [", w->f);
	if (o->stack)
		nf = trace_fw_stack_frames(stream_proc(a->s, o->proc)->t, o->stack, fr, 64);
	for (uint32_t i = 0; i < nf && i < 64; i++) {
		if (i)
			fputs(", ", w->f);
		fw_frame_str(w, fr[i].function, fr[i].function_len, fr[i].file, fr[i].file_len,
			     fr[i].line);
	}
	fputs("]}}", w->f);
}

/* The moment's marker on the run's track: the figures of device di then,
   as the model holds them. */
static void dev_marker(struct pw *w, const struct report *r, const struct export_moment *m, int di)
{
	const struct an_dev *d = &r->a->devs[di];
	uint64_t t, res, al;
	char dn[256], name[400];

	if (m->at.when == EXPORT_PEAK) {
		t = d->peak.time, res = d->peak.reserved, al = d->peak.allocated;
	} else if (m->at.when == EXPORT_EXIT) {
		t = r->a->duration;
		res = d->ntl ? d->tl[d->ntl - 1].reserved : 0;
		al = d->ntl ? d->tl[d->ntl - 1].allocated : 0;
	} else {
		t = m->t, res = m->cuda[di].reserved, al = m->cuda[di].allocated;
	}
	rep_dev_name(r, d, dn, sizeof(dn));
	snprintf(name, sizeof(name), "%s: at %s", dn, m->label);
	ev(w, "i", t, 0, 0);
	fputs(", \"s\": \"g\", \"cat\": \"memtrace_at\", \"name\": ", w->f);
	rep_json_str(w->f, name, strlen(name));
	fprintf(w->f, ", \"args\": {\"at\": \"%s\", \"device\": ", m->label);
	rep_json_str(w->f, dn, strlen(dn));
	fprintf(w->f, ", \"reserved_bytes\": %" PRIu64 ", \"allocated_bytes\": %" PRIu64
		", \"cached_bytes\": %" PRIu64 "}}", res, al, res - al);
}

/* The framework's state of fw device fdi at the moment: *st, and 1 when
   it falls between timeline rows (oom, TIME), 0 when a row holds it. */
static int fw_moment_state(const struct report *r, const struct export_moment *m, int fdi,
			   struct fw_state *st, uint64_t *t)
{
	const struct fw_model *fw = r->a->fw;
	const struct fw_dev *d = &fw->devs[fdi];
	uint64_t seq;

	export_fw_at(r, m, fdi, &seq, t);
	if (m->at.when == EXPORT_PEAK && d->proc < 0) {
		*st = d->peak_alloc.st;
		return 0;
	}
	if (m->at.when == EXPORT_EXIT) {
		*st = d->end;
		*t = r->a->duration;
		return 0;
	}
	if (fw_state_at(fw, fdi, seq, *t, st, NULL, NULL))
		return -1;
	return 1;
}

static void fw_marker(struct pw *w, const struct report *r, const struct export_moment *m,
		      const struct fw_dev *d, const struct fw_state *st, uint64_t t)
{
	char dn[256], name[400];

	fw_dev_name(r, d, dn, sizeof(dn));
	snprintf(name, sizeof(name), "%s tensors: at %s", dn, m->label);
	ev(w, "i", t, 0, 0);
	fputs(", \"s\": \"g\", \"cat\": \"memtrace_at\", \"name\": ", w->f);
	rep_json_str(w->f, name, strlen(name));
	fprintf(w->f, ", \"args\": {\"at\": \"%s\", \"device\": ", m->label);
	rep_json_str(w->f, dn, strlen(dn));
	fprintf(w->f, ", \"tensors_reserved_bytes\": %" PRIu64 ", \"tensors_allocated_bytes\": %"
		PRIu64 ", \"tensors_requested_bytes\": %" PRIu64 ", \"tensors_cached_bytes\": %"
		PRIu64 ", \"awaiting_free_bytes\": %" PRIu64 ", \"inactive_split_bytes\": %" PRIu64
		", \"largest_free_block_bytes\": %" PRIu64 "}}", st->reserved, st->allocated,
		st->requested, st->cached, st->awaiting, st->inactive_split, st->largest_free);
}

/* The moment of process proc's device dev (its gdev's), UINT64_MAX when
   the device is not known. */
static uint64_t proc_dev_t(const struct report *r, const struct export_moment *m, int proc,
			   int dev)
{
	int pd = dev >= 0 && dev < AN_MAX_DEV ? r->a->procs[proc].pdev[dev] : -1;

	if (pd < 0)
		return m->at.when == EXPORT_EXIT || m->at.when == EXPORT_PEAK ? UINT64_MAX : m->t;
	return export_dev_t(r, m, pd);
}

/* The moment of process proc: the latest of its devices' (its ranges are
   the process's, over all its devices); UINT64_MAX at exit. */
static uint64_t proc_t(const struct report *r, const struct export_moment *m, int proc)
{
	uint64_t t = 0;
	int any = 0;

	for (int d = 0; d < AN_MAX_DEV; d++)
		if (r->a->procs[proc].pdev[d] >= 0) {
			uint64_t x = proc_dev_t(r, m, proc, d);

			t = x > t ? x : t;
			any = 1;
		}
	return any ? t : proc_dev_t(r, m, proc, -1);
}

/* One range instance (slice i of the log) up to the moment t: a slice on
   its thread's track; one still open then ends at t and carries only what
   was known at its start (its peak and its end are later). */
static void range_event(struct pw *w, const struct report *r, const struct rg_model *m, uint32_t i,
			uint64_t t)
{
	static const char *const origin[] = { "range", "nvtx", "markers", "python", "pytest" };
	const struct rg_slice *in = &m->slices[i];
	const struct rg_name *e = &m->names[in->nm];
	uint32_t pid = rep_pid(r->a, in->proc);
	int cut = in->t1 > t, async = in->op == MT_RANGE_START;
	char name[600], gn[512];
	const char *cat = in->origin < sizeof origin / sizeof *origin ? origin[in->origin] : "range";

	if (e->domain)
		snprintf(name, sizeof name, "%s:%s", e->domain, e->name);
	else
		snprintf(name, sizeof name, "%s", e->name);
	ev(w, async ? "b" : "X", in->t0, pid, in->tid);
	if (!async) {
		uint64_t d = (cut ? t : in->t1) - in->t0;

		fprintf(w->f, ", \"dur\": %" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
	} else {
		fprintf(w->f, ", \"id\": \"0x%" PRIx32 "\"", i);
	}
	fprintf(w->f, ", \"cat\": \"%s\", \"name\": ", cat);
	rep_json_str(w->f, name, strlen(name));
	fputs(", \"args\": {\"range\": ", w->f);
	rg_group_name(gn, sizeof gn, &m->groups[in->group]);
	rep_json_str(w->f, gn, strlen(gn));
	if (in->step >= 0)
		fprintf(w->f, ", \"step\": %" PRIu32, m->inst[in->step].step_no);
	fprintf(w->f, ", \"reserved_at_start\": %" PRIu64, in->res0);
	if (m->has_fw)
		fprintf(w->f, ", \"framework_allocated_at_start\": %" PRIu64, in->fw0);
	if (cut) {
		fputs(", \"open_at_moment\": true}}", w->f);
	} else {
		fprintf(w->f, ", \"peak_reserved\": %" PRIu64 ", \"reserved_at_end\": %" PRIu64,
			in->res_peak, in->res1);
		if (m->has_fw)
			fprintf(w->f, ", \"framework_peak_allocated\": %" PRIu64
				", \"framework_allocated_at_end\": %" PRIu64, in->fw_peak, in->fw1);
		fprintf(w->f, ", \"open_at_exit\": %s}}", in->open ? "true" : "false");
	}
	if (async) {
		ev(w, "e", cut ? t : in->t1, pid, cut ? in->tid : in->end_tid);
		fprintf(w->f, ", \"id\": \"0x%" PRIx32 "\", \"cat\": \"%s\", \"name\": ", i, cat);
		rep_json_str(w->f, name, strlen(name));
		fputc('}', w->f);
	}
}

/* What the ranges model's log left out (export_ranges_cut()), as a global
   instant at the run's start, so the trace says it is cut. */
static void cut_event(struct pw *w, const struct rg_model *m)
{
	char msg[256];

	if (!export_ranges_cut(m, msg, sizeof msg))
		return;
	ev(w, "i", 0, 0, 0);
	fputs(", \"s\": \"g\", \"cat\": \"memtrace\", \"name\": ", w->f);
	rep_json_str(w->f, msg, strlen(msg));
	fputc('}', w->f);
}

int export_ranges_cut(const struct rg_model *m, char *buf, size_t len)
{
	uint64_t ni = m ? m->instances - m->nslices : 0, nk = m ? m->marks - m->nmark : 0;
	int n = 0;

	if (!ni && !nk)
		return 0;
	buf[0] = 0;
	if (ni)
		n = snprintf(buf, len, "%" PRIu32 " of %" PRIu64 " range instances shown (the first %u that ended)",
			     m->nslices, m->instances, RG_MAX_SLICES);
	if (nk && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s%" PRIu32 " of %" PRIu64 " marks shown (the first %u)",
			 ni ? ", " : "", m->nmark, m->marks, RG_MAX_MARKS);
	return 1;
}

static void step_counter(struct pw *w, uint32_t pid, uint64_t t, uint32_t no)
{
	ev(w, "C", t, pid, 0);
	fprintf(w->f, ", \"name\": \"step\", \"args\": {\"step\": %" PRIu32 "}}", no);
}

/* A mark: an instant on its thread's track. */
static void mark_event(struct pw *w, const struct report *r, const struct rg_mark *k)
{
	ev(w, "i", k->t, rep_pid(r->a, k->proc), k->tid);
	fputs(", \"s\": \"t\", \"cat\": \"mark\", \"name\": ", w->f);
	rep_json_str(w->f, k->name, strlen(k->name));
	fputc('}', w->f);
}

/* Every range instance and mark of the log and every step, up to each
   process's moment. */
static void ranges(struct pw *w, const struct report *r, const struct export_moment *em)
{
	const struct rg_model *m = r->a->ranges;

	if (!m)
		return;
	cut_event(w, m);
	for (uint32_t i = 0; i < m->nslices; i++) {
		uint64_t t = proc_t(r, em, m->slices[i].proc);

		if (m->slices[i].t0 <= t)
			range_event(w, r, m, i, t);
	}
	for (uint32_t i = 0; i < m->nmark; i++)
		if (m->mark[i].t <= proc_t(r, em, m->mark[i].proc))
			mark_event(w, r, &m->mark[i]);
	for (uint32_t k = 0; k < m->nsteps; k++) {
		const struct rg_inst *in = &m->inst[m->steps[k]];
		uint64_t t = proc_t(r, em, in->proc);
		uint32_t pid = rep_pid(r->a, in->proc);

		if (in->t0 > t)
			continue;
		step_counter(w, pid, in->t0, in->step_no);
		/* 0 between steps: unless the process's next step starts then */
		int next = 0;
		for (uint32_t j = k + 1; j < m->nsteps && !next; j++)
			if (m->inst[m->steps[j]].proc == in->proc)
				next = m->inst[m->steps[j]].t0 == in->t1 ? 1 : -1;
		if (in->t1 <= t && next <= 0)
			step_counter(w, pid, in->t1, 0);
	}
}

int export_perfetto(const struct report *r, const struct export_moment *m, FILE *f, char *err,
		    size_t errlen)
{
	const struct analysis *a = r->a;
	const struct fw_model *fw = a->fw;
	struct pw w = { f, 1 };
	static const char run[] = "memtrace: every process, per device";
	int between = m->at.when == EXPORT_OOM || m->at.when == EXPORT_TIME;

	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", f);
	meta(&w, "process_name", 0, 0, run, sizeof(run) - 1);
	meta(&w, "thread_name", 0, 0, "memory", 6);
	for (int p = 0; p < a->nprocs; p++) {
		proc_name(&w, a, p);
		meta(&w, "thread_name", rep_pid(a, p), 0, "memory", 6);
	}
	for (int g = 0; g < r->ngdevs; g++) {
		int di = r->gdevs[g];

		dev_counters(&w, r, &a->devs[di], 0, export_dev_t(r, m, di),
			     between ? &m->cuda[di] : NULL);
	}
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		if (d->proc >= 0 && d->used)
			dev_counters(&w, r, d, rep_pid(a, d->proc), export_dev_t(r, m, i),
				     between ? &m->cuda[i] : NULL);
	}
	for (int i = 0; fw && i < fw->ndevs; i++) {
		struct fw_state st;
		uint64_t t;
		int rc = fw_moment_state(r, m, i, &st, &t);

		if (rc < 0)
			goto oom;
		fw_counters(&w, r, &fw->devs[i], t, rc ? &st : NULL);
	}
	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *fl = &a->failures[i];

		if (fl->time <= proc_dev_t(r, m, fl->proc, fl->dev))
			failure(&w, r, fl);
	}
	for (uint32_t i = 0; i < a->noomsigs; i++) {
		const struct an_oomsig *o = &a->oomsigs[i];

		if (o->time <= proc_dev_t(r, m, o->proc, o->dev))
			oomsig(&w, r, o);
	}
	for (uint32_t i = 0; fw && i < fw->nooms; i++) {
		uint64_t seq, t;

		export_fw_at(r, m, fw->ooms[i].fdev, &seq, &t);
		if (fw->ooms[i].st.seq <= seq)
			fw_oom_event(&w, r, &fw->ooms[i]);
	}
	ranges(&w, r, m);
	for (int g = 0; g < r->ngdevs; g++)
		dev_marker(&w, r, m, r->gdevs[g]);
	for (int i = 0; fw && i < fw->ndevs; i++) {
		struct fw_state st;
		uint64_t t;

		if (fw->devs[i].proc >= 0 || fw->devs[i].ntl == 0)
			continue;
		if (fw_moment_state(r, m, i, &st, &t) < 0)
			goto oom;
		fw_marker(&w, r, m, &fw->devs[i], &st, t);
	}
	fputs("\n]}\n", f);
	if (ferror(f)) {
		snprintf(err, errlen, "cannot write the trace-event JSON");
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}
