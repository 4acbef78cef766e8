/*
 * db-model.c - the run model's tables: what a report computed, stored so
 * that SQL gets the same numbers as the text, JSON and plots (schema in
 * docs/schema.md). Each report drops and writes them again in one
 * transaction, so they always describe the last report of these traces.
 *
 *   peaks          each device's peak (per process, and over the run)
 *   peak_sites     what every device held at its peak, by site
 *   sites          the report's sites: id, device, totals, leak reasons
 *   site_stacks    which site each (trace, stack, device) belongs to
 *   stack_frames   every recorded stack, resolved as the report shows it
 *   timeline       reserved/allocated over time, the rows the plots draw
 *   device_used    cuMemGetInfo samples per device of the run
 *   process_ends   how each process ended
 *   fw_blocks      every tensor block of a framework's allocator (FW events)
 *   fw_sites       its tensor sites: totals, peak, exit, leak reasons
 *   fw_device      its reserved/allocated/cached/... per device at the peak
 *                  of allocated, of reserved, at exit and at each OOM
 *   fw_timeline    its reserved/allocated over time
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "store/db.h"

static const char model_schema[] =
	"DROP TABLE IF EXISTS peaks; DROP TABLE IF EXISTS peak_sites;"
	" DROP TABLE IF EXISTS sites; DROP TABLE IF EXISTS site_stacks;"
	" DROP TABLE IF EXISTS stack_frames; DROP TABLE IF EXISTS timeline;"
	" DROP TABLE IF EXISTS device_used; DROP TABLE IF EXISTS process_ends;"
	" DROP TABLE IF EXISTS fw_blocks; DROP TABLE IF EXISTS fw_sites;"
	" DROP TABLE IF EXISTS fw_device; DROP TABLE IF EXISTS fw_timeline;\n"
	"CREATE TABLE peaks(trace INTEGER, device INTEGER, host TEXT, time_ns INTEGER,"
	" reserved INTEGER, allocated INTEGER, device_used INTEGER, sample_ns INTEGER,"
	" left_at_exit INTEGER, live_at_end INTEGER);\n"
	"CREATE TABLE peak_sites(trace INTEGER, device INTEGER, host TEXT, site INTEGER,"
	" bytes INTEGER, count INTEGER, processes INTEGER);\n"
	"CREATE TABLE sites(id INTEGER PRIMARY KEY, device INTEGER, caching INTEGER,"
	" function TEXT, file TEXT, line INTEGER, trace INTEGER, stack INTEGER,"
	" processes INTEGER, allocs INTEGER, bytes INTEGER, exit_bytes INTEGER,"
	" exit_count INTEGER, leak_at_exit INTEGER, leak_growing INTEGER,"
	" interrupted INTEGER);\n"
	"CREATE TABLE site_stacks(trace INTEGER, stack INTEGER, device INTEGER, site INTEGER,"
	" PRIMARY KEY(trace, stack, device)) WITHOUT ROWID;\n"
	"CREATE TABLE stack_frames(trace INTEGER, stack INTEGER, level INTEGER,"
	" function TEXT, file TEXT, line INTEGER, module TEXT, offset INTEGER,"
	" PRIMARY KEY(trace, stack, level)) WITHOUT ROWID;\n"
	"CREATE TABLE timeline(trace INTEGER, device INTEGER, host TEXT, time_ns INTEGER,"
	" reserved INTEGER, allocated INTEGER, cached INTEGER);\n"
	"CREATE TABLE device_used(device INTEGER, host TEXT, time_ns INTEGER, trace INTEGER,"
	" used INTEGER, total INTEGER);\n"
	"CREATE TABLE process_ends(trace INTEGER PRIMARY KEY, how TEXT, status INTEGER,"
	" time_ns INTEGER);\n"
	"CREATE TABLE fw_blocks(trace INTEGER, device INTEGER, addr INTEGER, size INTEGER,"
	" stream INTEGER, alloc_ns INTEGER, free_requested_ns INTEGER,"
	" free_completed_ns INTEGER, site INTEGER, stack INTEGER, requested INTEGER);\n"
	"CREATE TABLE fw_sites(id INTEGER PRIMARY KEY, device INTEGER, function TEXT, file TEXT,"
	" line INTEGER, user INTEGER, frames TEXT, trace INTEGER, stack INTEGER, allocs INTEGER,"
	" bytes INTEGER, peak_bytes INTEGER, exit_bytes INTEGER, exit_count INTEGER,"
	" leak_at_exit INTEGER, leak_growing INTEGER, interrupted INTEGER);\n"
	"CREATE TABLE fw_device(trace INTEGER, device INTEGER, host TEXT, moment TEXT,"
	" time_ns INTEGER, reserved INTEGER, allocated INTEGER, cached INTEGER,"
	" awaiting_free INTEGER, inactive_split INTEGER, largest_free INTEGER,"
	" requested INTEGER, device_free INTEGER, device_total INTEGER,"
	" cuda_reserved INTEGER, verdict TEXT, requested_bytes INTEGER);\n"
	"CREATE TABLE fw_timeline(trace INTEGER, device INTEGER, host TEXT, time_ns INTEGER,"
	" reserved INTEGER, allocated INTEGER, cached INTEGER);\n";

struct w {
	sqlite3 *h;
	sqlite3_stmt *st;
	char *err;
	size_t errlen;
};

static int prep(struct w *w, const char *sql)
{
	sqlite3_finalize(w->st);
	w->st = NULL;
	if (sqlite3_prepare_v2(w->h, sql, -1, &w->st, NULL) == SQLITE_OK)
		return 0;
	snprintf(w->err, w->errlen, "%s", sqlite3_errmsg(w->h));
	return -1;
}

static int step(struct w *w)
{
	int rc = sqlite3_step(w->st);

	sqlite3_reset(w->st);
	sqlite3_clear_bindings(w->st);
	if (rc == SQLITE_DONE)
		return 0;
	snprintf(w->err, w->errlen, "%s", sqlite3_errmsg(w->h));
	return -1;
}

static void i64(struct w *w, int col, uint64_t v)
{
	sqlite3_bind_int64(w->st, col, (sqlite3_int64)v);
}

/* trace (NULL for a device of the run), device, host of a device */
static void dev_cols(struct w *w, const struct analysis *a, const struct an_dev *d, int col)
{
	const char *h;
	size_t hl;

	if (d->proc >= 0)
		sqlite3_bind_int(w->st, col, d->proc + 1);
	sqlite3_bind_int(w->st, col + 1, d->dev);
	an_hostname(a, d->proc >= 0 ? d->proc : d->host_proc, &h, &hl);
	sqlite3_bind_text(w->st, col + 2, h, (int)hl, SQLITE_TRANSIENT);
}

static int save_peaks(struct w *w, const struct report *r)
{
	const struct analysis *a = r->a;

	if (prep(w, "INSERT INTO peaks VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"))
		return -1;
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		if (!d->peak.reserved)
			continue;
		dev_cols(w, a, d, 1);
		i64(w, 4, d->peak.time);
		i64(w, 5, d->peak.reserved);
		i64(w, 6, d->peak.allocated);
		if (d->peak.has_sample) {
			i64(w, 7, d->peak.used);
			i64(w, 8, d->peak.sample_time);
		}
		i64(w, 9, d->left_at_exit);
		i64(w, 10, d->live_at_end);
		if (step(w))
			return -1;
	}
	if (prep(w, "INSERT INTO peak_sites VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))
		return -1;
	for (int i = 0; i < a->ndevs; i++) {
		const struct rep_list *l = &r->dev_sites[i];

		for (int k = 0; k < l->total; k++) {
			dev_cols(w, a, &a->devs[i], 1);
			i64(w, 4, l->v[k].site->id);
			i64(w, 5, l->v[k].bytes);
			i64(w, 6, l->v[k].count);
			i64(w, 7, (uint64_t)l->v[k].nprocs);
			if (step(w))
				return -1;
		}
	}
	return 0;
}

static int save_sites(struct w *w, const struct report *r)
{
	const struct analysis *a = r->a;

	if (prep(w, "INSERT INTO sites VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
		 " ?13, ?14, ?15, ?16)"))
		return -1;
	for (uint32_t i = 0; i < r->sites.n; i++) {
		const struct site *s = &r->sites.v[i];
		const struct sym_frame *f = rep_main_frame(s->st);

		i64(w, 1, s->id);
		sqlite3_bind_int(w->st, 2, s->dev);
		sqlite3_bind_int(w->st, 3, s->caching);
		if (f) {
			sqlite3_bind_text(w->st, 4, f->function, -1, SQLITE_STATIC);
			sqlite3_bind_text(w->st, 5, f->file, -1, SQLITE_STATIC);
			if (f->line)
				sqlite3_bind_int(w->st, 6, f->line);
		}
		sqlite3_bind_int(w->st, 7, s->proc + 1);
		i64(w, 8, s->stack);
		sqlite3_bind_int(w->st, 9, s->nprocs);
		i64(w, 10, s->allocs);
		i64(w, 11, s->bytes);
		i64(w, 12, s->exit_bytes);
		i64(w, 13, s->exit_count);
		sqlite3_bind_int(w->st, 14, !s->caching && s->exit_bytes);
		sqlite3_bind_int(w->st, 15, !s->caching && s->growing);
		sqlite3_bind_int(w->st, 16, s->interrupted);
		if (step(w))
			return -1;
	}
	if (prep(w, "INSERT INTO site_stacks VALUES (?1, ?2, ?3, ?4)"))
		return -1;
	for (uint32_t i = 0; i < a->nsites; i++) {
		sqlite3_bind_int(w->st, 1, a->sites[i].proc + 1);
		i64(w, 2, a->sites[i].stack);
		sqlite3_bind_int(w->st, 3, a->sites[i].dev);
		i64(w, 4, site_of(&r->sites, i)->id);
		if (step(w))
			return -1;
	}
	return 0;
}

/* Every stack of every process, as the report resolves and trims it. */
static int save_stacks(struct w *w, const struct report *r)
{
	const struct analysis *a = r->a;

	if (prep(w, "INSERT INTO stack_frames VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"))
		return -1;
	for (int p = 0; p < a->nprocs; p++) {
		const struct sproc *sp = stream_proc(a->s, p);

		for (uint32_t id = 0; id < sp->nstacks; id++) {
			const struct sym_stack *ss;

			if (!sp->stacks[id])
				continue;
			if (!(ss = sym_stack(r->sy, a->s, p, id))) {
				snprintf(w->err, w->errlen, "out of memory");
				return -1;
			}
			for (int i = 0; i < ss->nframes; i++) {
				const struct sym_frame *f = &ss->frames[i];

				sqlite3_bind_int(w->st, 1, p + 1);
				i64(w, 2, id);
				sqlite3_bind_int(w->st, 3, i);
				sqlite3_bind_text(w->st, 4, f->function, -1, SQLITE_STATIC);
				sqlite3_bind_text(w->st, 5, f->file, -1, SQLITE_STATIC);
				sqlite3_bind_int(w->st, 6, f->line);
				sqlite3_bind_text(w->st, 7, f->module, -1, SQLITE_STATIC);
				i64(w, 8, f->offset);
				if (step(w))
					return -1;
			}
		}
	}
	return 0;
}

static int save_timelines(struct w *w, const struct analysis *a)
{
	if (prep(w, "INSERT INTO timeline VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))
		return -1;
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		for (uint32_t k = 0; k < d->ntl; k++) {
			dev_cols(w, a, d, 1);
			i64(w, 4, d->tl[k].t);
			i64(w, 5, d->tl[k].reserved);
			i64(w, 6, d->tl[k].allocated);
			i64(w, 7, d->tl[k].reserved - d->tl[k].allocated);
			if (step(w))
				return -1;
		}
	}
	if (prep(w, "INSERT INTO device_used VALUES (?2, ?3, ?4, ?5, ?6, ?7)"))
		return -1;
	for (int i = 0; i < a->ndevs; i++) {
		const struct an_dev *d = &a->devs[i];

		for (uint32_t k = 0; k < d->nsamples; k++) {
			dev_cols(w, a, d, 1);
			i64(w, 4, d->samples[k].t);
			sqlite3_bind_int(w->st, 5, d->samples[k].proc + 1);
			i64(w, 6, d->samples[k].used);
			i64(w, 7, d->samples[k].total);
			if (step(w))
				return -1;
		}
	}
	return 0;
}

static int save_ends(struct w *w, const struct analysis *a)
{
	if (prep(w, "INSERT INTO process_ends VALUES (?1, ?2, ?3, ?4)"))
		return -1;
	for (int p = 0; p < a->nprocs; p++) {
		const struct an_proc *pr = &a->procs[p];

		sqlite3_bind_int(w->st, 1, p + 1);
		sqlite3_bind_text(w->st, 2, rep_end_name(pr->end), -1, SQLITE_STATIC);
		if (pr->end == AN_END_EXIT || pr->end == AN_END_UNDERSCORE_EXIT)
			sqlite3_bind_int(w->st, 3, pr->exit_status);
		i64(w, 4, pr->end_time);
		if (step(w))
			return -1;
	}
	return 0;
}

/* --- the framework's allocator (framework.h) ----------------------------- */

static void fw_dev_cols(struct w *w, const struct analysis *a, const struct fw_dev *d)
{
	const char *h;
	size_t hl;

	if (d->proc >= 0)
		sqlite3_bind_int(w->st, 1, d->proc + 1);
	sqlite3_bind_int(w->st, 2, d->dev);
	an_hostname(a, d->proc >= 0 ? d->proc : 0, &h, &hl);
	sqlite3_bind_text(w->st, 3, h, (int)hl, SQLITE_TRANSIENT);
}

static void fw_state_cols(struct w *w, const char *moment, const struct fw_state *st)
{
	sqlite3_bind_text(w->st, 4, moment, -1, SQLITE_STATIC);
	i64(w, 5, st->t);
	i64(w, 6, st->reserved);
	i64(w, 7, st->allocated);
	i64(w, 8, st->cached);
	i64(w, 9, st->awaiting);
	i64(w, 10, st->inactive_split);
	i64(w, 11, st->largest_free);
	i64(w, 17, st->requested);
}

/* The frames of a tensor site, "file:line function" joined with " < ". */
static char *fw_frames_text(const struct analysis *a, const struct fw_site *s)
{
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);

	if (!f)
		return NULL;
	if (s->stack)
		nf = trace_fw_stack_frames(stream_proc(a->s, s->proc)->t, s->stack, fr, 64);
	for (uint32_t i = 0; i < nf && i < 64; i++)
		fprintf(f, "%s%.*s:%u %.*s", i ? " < " : "", (int)fr[i].file_len, fr[i].file,
			fr[i].line, (int)fr[i].function_len, fr[i].function);
	if (fclose(f)) {
		free(p);
		return NULL;
	}
	return p;
}

static int save_framework(struct w *w, const struct analysis *a)
{
	const struct fw_model *m = a->fw;

	if (!m)
		return 0;
	if (prep(w, "INSERT INTO fw_blocks VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"))
		return -1;
	for (uint64_t i = 0; i < m->nblocks; i++) {
		const struct fw_block *b = &m->blocks[i];

		sqlite3_bind_int(w->st, 1, b->proc + 1);
		sqlite3_bind_int(w->st, 2, m->devs[b->fdev].dev);
		i64(w, 3, b->addr);
		i64(w, 4, b->size);
		i64(w, 5, b->stream);
		i64(w, 6, b->t_alloc);
		if (b->t_freq != FW_NEVER)
			i64(w, 7, b->t_freq);
		if (b->t_fdone != FW_NEVER)
			i64(w, 8, b->t_fdone);
		i64(w, 9, b->site + 1);
		i64(w, 10, b->stack);
		i64(w, 11, b->req);
		if (step(w))
			return -1;
	}
	if (prep(w, "INSERT INTO fw_sites VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		 " ?12, ?13, ?14, ?15, ?16, ?17)"))
		return -1;
	for (uint32_t i = 0; i < m->nsites; i++) {
		const struct fw_site *s = &m->sites[i];
		char *fr = fw_frames_text(a, s);

		if (!fr) {
			snprintf(w->err, w->errlen, "out of memory");
			return -1;
		}
		i64(w, 1, s->id);
		sqlite3_bind_int(w->st, 2, s->dev);
		sqlite3_bind_text(w->st, 3, s->function, -1, SQLITE_STATIC);
		sqlite3_bind_text(w->st, 4, s->file, -1, SQLITE_STATIC);
		if (s->file)
			i64(w, 5, s->line);
		sqlite3_bind_int(w->st, 6, s->user);
		sqlite3_bind_text(w->st, 7, fr, -1, free);
		sqlite3_bind_int(w->st, 8, s->proc + 1);
		i64(w, 9, s->stack);
		i64(w, 10, s->allocs);
		i64(w, 11, s->bytes);
		i64(w, 12, s->max);
		i64(w, 13, s->exit_bytes);
		i64(w, 14, s->exit_count);
		sqlite3_bind_int(w->st, 15, s->exit_bytes != 0);
		sqlite3_bind_int(w->st, 16, s->growing);
		sqlite3_bind_int(w->st, 17, s->interrupted);
		if (step(w))
			return -1;
	}
	if (prep(w, "INSERT INTO fw_device VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		 " ?12, ?13, ?14, ?15, ?16, ?17)"))
		return -1;
	for (int i = 0; i < m->ndevs; i++) {
		const struct fw_dev *d = &m->devs[i];
		static const char *const moment[] = {
			"peak_allocated", "peak_reserved", "exit", "peak_requested"
		};
		const struct fw_state *st[] = {
			&d->peak_alloc.st, &d->peak_res.st, &d->end, &d->peak_req.st
		};

		for (int k = 0; k < 4; k++) {
			fw_dev_cols(w, a, d);
			fw_state_cols(w, moment[k], st[k]);
			if (d->has_cuda && k == 1)
				i64(w, 15, d->cuda_at_peak_res);
			if (step(w))
				return -1;
		}
	}
	for (uint32_t i = 0; i < m->nooms; i++) {
		const struct fw_oom *o = &m->ooms[i];

		fw_dev_cols(w, a, &m->devs[o->fdev]);
		fw_state_cols(w, "oom", &o->st);
		i64(w, 12, o->requested);
		i64(w, 13, o->device_free);
		if (o->has_total)
			i64(w, 14, o->device_total);
		if (o->has_cuda)
			i64(w, 15, o->cuda_reserved);
		sqlite3_bind_text(w->st, 16, fw_verdict_name(o->verdict), -1, SQLITE_STATIC);
		if (step(w))
			return -1;
	}
	if (prep(w, "INSERT INTO fw_timeline VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))
		return -1;
	for (int i = 0; i < m->ndevs; i++) {
		const struct fw_dev *d = &m->devs[i];

		for (uint32_t k = 0; k < d->ntl; k++) {
			fw_dev_cols(w, a, d);
			i64(w, 4, d->tl[k].t);
			i64(w, 5, d->tl[k].reserved);
			i64(w, 6, d->tl[k].allocated);
			i64(w, 7, d->tl[k].reserved > d->tl[k].allocated ?
			    d->tl[k].reserved - d->tl[k].allocated : 0);
			if (step(w))
				return -1;
		}
	}
	return 0;
}

int db_save_model(struct db *d, const struct report *r, char *err, size_t errlen)
{
	struct w w = { db_handle(d), NULL, err, errlen };
	char *msg = NULL;
	int rc = -1;

	if (sqlite3_exec(w.h, "BEGIN", NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(w.h, model_schema, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(w.h));
		sqlite3_free(msg);
		goto out;
	}
	if (save_peaks(&w, r) || save_sites(&w, r) || save_stacks(&w, r) ||
	    save_timelines(&w, r->a) || save_ends(&w, r->a) ||
	    save_framework(&w, r->a))
		goto out;
	sqlite3_finalize(w.st);
	w.st = NULL;
	if (sqlite3_exec(w.h, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(w.h));
		sqlite3_free(msg);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(w.st);
	if (rc)
		sqlite3_exec(w.h, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
