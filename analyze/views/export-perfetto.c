/*
 * export-perfetto.c - the run as Chrome trace-event JSON, which
 * ui.perfetto.dev and chrome://tracing open (docs/export.md): per process
 * and device, counter tracks ("ph":"C") of reserved, allocated and cached
 * from the model's timeline rows (and the framework's when the run has its
 * records); per device of the run, the same and the device used of each
 * memory sample, under pid 0; an instant event ("ph":"i") for each failed
 * allocation and each OOM retry with its stack, and for each of the
 * framework's OOMs with its verdict and top holders; process and thread names
 * ("ph":"M"). Times are microseconds since the run's start, to the
 * nanosecond.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
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

static void dev_counters(struct pw *w, const struct report *r, const struct an_dev *d,
			 uint32_t pid)
{
	char dn[256];

	rep_dev_name(r, d, dn, sizeof(dn));
	for (uint32_t i = 0; i < d->ntl; i++)
		counter(w, pid, dn, "reserved", d->tl[i].t, d->tl[i].reserved);
	for (uint32_t i = 0; i < d->ntl; i++)
		counter(w, pid, dn, "allocated", d->tl[i].t, d->tl[i].allocated);
	for (uint32_t i = 0; i < d->ntl; i++)
		counter(w, pid, dn, "cached", d->tl[i].t, d->tl[i].reserved - d->tl[i].allocated);
	for (uint32_t i = 0; i < d->nsamples; i++)
		counter(w, pid, dn, "device used", d->samples[i].t, d->samples[i].used);
}

static void fw_counters(struct pw *w, const struct report *r, const struct fw_dev *fd)
{
	const struct analysis *a = r->a;
	uint32_t pid = fd->proc >= 0 ? rep_pid(a, fd->proc) : 0;
	char dn[256];

	if (a->nhosts > 1 && fd->proc >= 0) {
		const char *h;
		size_t hl;

		an_hostname(a, fd->proc, &h, &hl);
		snprintf(dn, sizeof(dn), "%.*s:%d", (int)(hl < 200 ? hl : 200), h, fd->dev);
	} else {
		snprintf(dn, sizeof(dn), "device %d", fd->dev);
	}
	for (uint32_t i = 0; i < fd->ntl; i++)
		counter(w, pid, dn, "tensors reserved", fd->tl[i].t, fd->tl[i].reserved);
	for (uint32_t i = 0; i < fd->ntl; i++)
		counter(w, pid, dn, "tensors allocated", fd->tl[i].t, fd->tl[i].allocated);
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

int export_perfetto(const struct report *r, FILE *f, char *err, size_t errlen)
{
	const struct analysis *a = r->a;
	struct pw w = { f, 1 };
	static const char run[] = "memtrace: every process, per device";

	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", f);
	meta(&w, "process_name", 0, 0, run, sizeof(run) - 1);
	meta(&w, "thread_name", 0, 0, "memory", 6);
	for (int p = 0; p < a->nprocs; p++) {
		proc_name(&w, a, p);
		meta(&w, "thread_name", rep_pid(a, p), 0, "memory", 6);
	}
	for (int g = 0; g < r->ngdevs; g++)
		dev_counters(&w, r, &a->devs[r->gdevs[g]], 0);
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		if (d->proc >= 0 && d->used)
			dev_counters(&w, r, d, rep_pid(a, d->proc));
	}
	for (int i = 0; a->fw && i < a->fw->ndevs; i++)
		fw_counters(&w, r, &a->fw->devs[i]);
	for (uint32_t i = 0; i < a->nfailures; i++)
		failure(&w, r, &a->failures[i]);
	for (uint32_t i = 0; i < a->noomsigs; i++)
		oomsig(&w, r, &a->oomsigs[i]);
	for (uint32_t i = 0; a->fw && i < a->fw->nooms; i++)
		fw_oom_event(&w, r, &a->fw->ooms[i]);
	fputs("\n]}\n", f);
	if (ferror(f)) {
		snprintf(err, errlen, "cannot write the trace-event JSON");
		return -1;
	}
	return 0;
}
