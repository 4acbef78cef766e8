/*
 * pipeline.c - the steps shared by `memtrace report` and `memtrace plot`,
 * in order: open and validate every trace (the reader refuses a bad one
 * with one message; a file or a process named twice is read once, with a
 * note), merge them in time, open or reuse the database, run
 * the analysis pass (which also feeds the loader), one more pass over the
 * stream for the POSIX shared memory section (shm.c) while the loader
 * commits and indexes on its thread, wait for the load, then build the
 * report, symbolizing only what it shows, and save those results in the
 * database.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/pipeline.h"
#include "cli/progress.h"

/* Two names of one file (a path with "..", a hard link, a symlink): -1,
   or the index of the earlier name of the same file. st[0..i] are the
   names' stat results (an earlier name that could not be stat'ed stopped
   the opening before name i). */
static int same_file(const struct stat *st, int i)
{
	for (int j = 0; j < i; j++)
		if (st[j].st_dev == st[i].st_dev && st[j].st_ino == st[i].st_ino)
			return j;
	return -1;
}

/* Two traces of one process (a copy of the file): the same run id, pid
   and start. -1, or the index in p->t of the one opened before. */
static int same_process(const struct pipeline *p, const struct trace *t)
{
	const struct mt_file_header *h = trace_header(t), *o;

	for (int j = 0; j < p->n; j++) {
		o = trace_header(p->t[j]);
		if (o->run_id == h->run_id && o->pid == h->pid && o->start_wall_ns == h->start_wall_ns &&
		    o->start_mono_ns == h->start_mono_ns)
			return j;
	}
	return -1;
}

/*
 * Opens each distinct trace once into p->t and names it in uniq: a file
 * named twice, or two copies of one process's trace, would count every
 * event twice. Of two copies the one with more records stays (a copy made
 * while the process ran may stop short). Each one left out gets a note.
 */
static int open_traces(struct pipeline *p, char **files, int n, char **uniq,
		       void (*warn)(const char *msg), int *status, char *err, size_t errlen)
{
	char msg[1024];
	struct stat *st = calloc((size_t)n, sizeof(*st));

	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int j = stat(files[i], &st[i]) == 0 ? same_file(st, i) : -1;
		if (j >= 0) {
			snprintf(msg, sizeof(msg), "'%s' is the same file as '%s': counted once",
				 files[i], files[j]);
			warn(msg);
			continue;
		}
		struct trace *t = trace_open(files[i], err, errlen);
		if (!t) {
			if (errno == ENOENT || errno == ENOTDIR)
				*status = 2;
			free(st);
			return -1;
		}
		if ((j = same_process(p, t)) >= 0) {
			int keep_new = trace_stats(t)->records > trace_stats(p->t[j])->records;
			snprintf(msg, sizeof(msg), "'%s' and '%s' are traces of the same process (pid %u): "
				 "counted once, from '%s'", uniq[j], files[i], (unsigned)trace_header(t)->pid,
				 keep_new ? files[i] : uniq[j]);
			warn(msg);
			if (keep_new) {
				trace_close(p->t[j]);
				p->t[j] = t;
				uniq[j] = files[i];
			} else {
				trace_close(t);
			}
			continue;
		}
		p->t[p->n] = t;
		uniq[p->n++] = files[i];
		for (unsigned w = 0; trace_warning(t, w, msg, sizeof(msg)) == 0; w++)
			warn(msg);
	}
	free(st);
	return 0;
}

static int caching_cb(void *ctx, int proc, uint32_t stack)
{
	struct pipeline *p = ctx;

	return sym_is_caching(p->sy, p->s, proc, stack);
}

static int run(struct pipeline *p, char **files, int n, const struct pipeline_opts *o,
	       void (*warn)(const char *msg), int *status, char *err, size_t errlen)
{
	struct shm_result shm;

	memset(p, 0, sizeof(*p));
	*status = 1;
	progress_start();
	p->t = calloc((size_t)n, sizeof(*p->t));
	p->files = calloc((size_t)n, sizeof(*p->files));
	if (!p->t || !p->files)
		goto nomem;
	if (open_traces(p, files, n, p->files, warn, status, err, errlen))
		return -1;
	files = p->files;
	n = p->n;
	p->s = stream_open(p->t, n, err, errlen);
	if (!p->s)
		return -1;
	if (o->out_dir && mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", o->out_dir, strerror(errno));
		return -1;
	}
	if (!o->no_db) {
		size_t len = strlen(files[0]) + 4;

		if (o->db_path) {
			p->db_path = strdup(o->db_path);
		} else if ((p->db_path = malloc(len))) {
			snprintf(p->db_path, len, "%s.db", files[0]);
		}
		if (!p->db_path)
			goto nomem;
		p->db = db_open(p->db_path, (const char *const *)files, p->t, n, p->s, &p->db_fresh,
				err, errlen);
		if (!p->db)
			return -1;
	}
	p->sy = sym_open(&o->sym, p->db ? db_handle(p->db) : NULL, err, errlen);
	if (!p->sy)
		return -1;
	progress_phase(p->s, p->db_fresh ? "loading" : "analyzing", "replaying to the peak");
	p->a = analysis_run(p->s, p->db ? db_sink(p->db) : o->sink,
			    o->devices_only ? NULL : caching_cb, p, err, errlen);
	if (!p->a)
		return -1;
	if (o->devices_only) {
		if (report_devices(&p->r, p->a, err, errlen))
			return -1;
		p->have_report = 1;
		progress_end();
		*status = 0;
		return 0;
	}
	progress_phase(p->s, "shared memory", NULL);
	if (shm_analyze_stream(&shm, p->s, err, errlen))
		return -1;
	if ((p->db && db_finish(p->db, err, errlen)) ||
	    report_build(&p->r, p->a, p->sy, err, errlen)) {
		shm_result_free(&shm);
		return -1;
	}
	p->have_report = 1;
	p->r.db_path = p->db_path;
	p->r.shm = shm;
	if (p->db && db_save_model(p->db, &p->r, err, errlen))
		return -1;
	progress_end();
	*status = 0;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int pipeline_run(struct pipeline *p, char **files, int n, const struct pipeline_opts *o,
		 void (*warn)(const char *msg), int *status, char *err, size_t errlen)
{
	if (run(p, files, n, o, warn, status, err, errlen)) {
		pipeline_free(p); /* what the steps before the failing one built */
		return -1;
	}
	return 0;
}

void pipeline_free(struct pipeline *p)
{
	if (p->have_report)
		report_free(&p->r);
	analysis_free(p->a);
	sym_close(p->sy);
	db_close(p->db);
	stream_close(p->s);
	for (int i = 0; i < p->n; i++)
		trace_close(p->t[i]);
	free(p->t);
	free(p->files);
	free(p->db_path);
	memset(p, 0, sizeof(*p));
}
