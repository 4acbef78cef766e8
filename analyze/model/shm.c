/*
 * shm.c - POSIX shared memory of a run (shm.h says what every number
 * means).
 *
 * One pass over the records in time order, with the ends of the processes
 * merged in as events. State: the segments, a map from name to the segment
 * that holds it now, and maps from (process, descriptor) and (process,
 * mapping address) to a segment; the maps are records of 64-bit keys in
 * the one hash table (htab.h; names by their 64-bit hash, checked against
 * the segment's name). A segment's contribution to the totals is its size while it holds
 * memory (it has a name, or a traced process has it open or mapped), so
 * every change is "take it out, change, put it back".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/htab.h"
#include "model/shm.h"
#include "trace/stream.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif

/* A map of 64-bit keys to segment numbers: records of the one hash table. */
struct map_rec {
	uint32_t hash;
	int val;
	uint64_t key;
};

struct map {
	struct htab t;
};

#define MAP_INIT { HTAB_INIT(struct map_rec) }

static struct map_rec *map_rec(const struct map *m, uint64_t key)
{
	struct htab_probe pr;

	for (struct map_rec *r = htab_find(&m->t, hash_mix(key), &pr); r; r = htab_more(&m->t, &pr))
		if (r->key == key)
			return r;
	return NULL;
}

static int map_get(const struct map *m, uint64_t key)
{
	const struct map_rec *r = map_rec(m, key);

	return r ? r->val : -1;
}

static int map_put(struct map *m, uint64_t key, int val)
{
	struct map_rec *r = map_rec(m, key);

	if (!r) {
		if (!(r = htab_add(&m->t, hash_mix(key))))
			return -1;
		r->key = key;
	}
	r->val = val;
	return 0;
}

/* Removes key; returns its value, or -1. */
static int map_del(struct map *m, uint64_t key)
{
	struct map_rec *r = map_rec(m, key);
	int v;

	if (!r)
		return -1;
	v = r->val;
	htab_del(&m->t, r);
	return v;
}

static void map_free(struct map *m)
{
	htab_free(&m->t);
}

struct state {
	struct shm_result *r;
	struct map names, fds, maps;
	uint32_t cap;
};

static uint64_t name_key(const char *p, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3u;
	return h;
}

static uint64_t fd_key(int proc, int32_t fd) { return (uint64_t)(uint32_t)proc << 32 | (uint32_t)fd; }
static uint64_t addr_key(int proc, uint64_t addr) { return (uint64_t)(uint32_t)proc << 48 ^ addr; }

/* The segment that holds name now, or -1. */
static int by_name(const struct state *st, const char *name, uint32_t len)
{
	int s = map_get(&st->names, name_key(name, len));
	if (s >= 0 && (st->r->segs[s].name_len != len || memcmp(st->r->segs[s].name, name, len)))
		return -1;
	return s;
}

/* Take a segment's bytes out of the totals (before a change) or put them back. */
static void account(struct shm_result *r, struct shm_seg *s, int add, uint64_t t)
{
	struct shm_totals *tot[2] = { &r->all, &r->per_proc[s->proc] };

	if (!add) {
		if (s->holds)
			for (int i = 0; i < 2; i++)
				tot[i]->now -= s->size;
		return;
	}
	s->holds = !s->attached && (!s->unlinked || s->fds > 0 || s->maps > 0);
	if (!s->holds)
		return;
	for (int i = 0; i < 2; i++) {
		tot[i]->now += s->size;
		if (tot[i]->now > tot[i]->peak) {
			tot[i]->peak = tot[i]->now;
			tot[i]->peak_t = t;
		}
	}
}

static int new_seg(struct state *st, const struct shm_op *o, int attached)
{
	struct shm_result *r = st->r;

	if (r->nsegs == st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 64;
		struct shm_seg *p = realloc(r->segs, cap * sizeof *p);
		if (!p)
			return -1;
		r->segs = p;
		st->cap = cap;
	}
	struct shm_seg *s = &r->segs[r->nsegs];
	memset(s, 0, sizeof *s);
	s->proc = o->proc;
	s->stack = o->stack;
	s->name = o->name;
	s->name_len = o->name_len;
	s->created_t = o->t;
	s->attached = attached;
	s->unlink_proc = -1;
	s->creator_fd = -1;
	if (map_put(&st->names, name_key(o->name, o->name_len), (int)r->nsegs) < 0)
		return -1;
	if (attached)
		r->all.attached++, r->per_proc[o->proc].attached++;
	else
		r->all.created++, r->per_proc[o->proc].created++;
	return (int)r->nsegs++;
}

/* The segment a descriptor of proc refers to: its own open, else the name. */
static int by_fd(const struct state *st, const struct shm_op *o)
{
	int s = map_get(&st->fds, fd_key(o->proc, o->fd));
	return s >= 0 ? s : by_name(st, o->name, o->name_len);
}

static void close_fd(struct state *st, int proc, int32_t fd, int s, uint64_t t)
{
	struct shm_seg *g = &st->r->segs[s];

	account(st->r, g, 0, t);
	g->fds--;
	if (proc == g->proc && fd == g->creator_fd)
		g->creator_open = 0;
	account(st->r, g, 1, t);
}

static int apply(struct state *st, const struct shm_op *o)
{
	struct shm_result *r = st->r;
	struct shm_seg *g;
	int s, old;

	r->ops++;
	if (o->err) {
		if (o->op < 8)
			r->failed[o->op]++;
		if (o->err == ENOSPC)
			r->failed_nospc++;
		return 0;
	}
	switch (o->op) {
	case MT_SHM_OPEN:
		if (o->fd < 0)
			return 0;
		s = by_name(st, o->name, o->name_len);
		if (s < 0) {
			if ((s = new_seg(st, o, !(o->flags & O_CREAT))) < 0)
				return -1;
			r->segs[s].creator_fd = o->fd;
			r->segs[s].creator_open = 1;
		}
		/* A number reused without a close we saw: the old one is gone. */
		old = map_get(&st->fds, fd_key(o->proc, o->fd));
		if (old >= 0)
			close_fd(st, o->proc, o->fd, old, o->t);
		if (map_put(&st->fds, fd_key(o->proc, o->fd), s) < 0)
			return -1;
		account(r, &r->segs[s], 0, o->t);
		r->segs[s].fds++;
		account(r, &r->segs[s], 1, o->t);
		return 0;
	case MT_SHM_TRUNCATE: case MT_SHM_FALLOCATE:
		if ((s = by_fd(st, o)) < 0)
			return 0;
		g = &r->segs[s];
		account(r, g, 0, o->t);
		if (o->op == MT_SHM_TRUNCATE)
			g->size = o->size;
		else if (!(o->flags & FALLOC_FL_KEEP_SIZE) && o->size > g->size)
			g->size = o->size;
		if (g->size > g->max_size)
			g->max_size = g->size;
		account(r, g, 1, o->t);
		return 0;
	case MT_SHM_MMAP:
		if ((s = by_fd(st, o)) < 0 || !o->addr)
			return 0;
		if (map_get(&st->maps, addr_key(o->proc, o->addr)) >= 0)
			return 0;   /* MAP_FIXED over a mapping we know: keep the first */
		if (map_put(&st->maps, addr_key(o->proc, o->addr), s) < 0)
			return -1;
		account(r, &r->segs[s], 0, o->t);
		r->segs[s].maps++;
		account(r, &r->segs[s], 1, o->t);
		return 0;
	case MT_SHM_MUNMAP:
		if ((s = map_del(&st->maps, addr_key(o->proc, o->addr))) < 0)
			return 0;
		account(r, &r->segs[s], 0, o->t);
		r->segs[s].maps--;
		account(r, &r->segs[s], 1, o->t);
		return 0;
	case MT_SHM_CLOSE:
		if ((s = map_del(&st->fds, fd_key(o->proc, o->fd))) >= 0)
			close_fd(st, o->proc, o->fd, s, o->t);
		return 0;
	case MT_SHM_UNLINK:
		if ((s = by_name(st, o->name, o->name_len)) < 0) {
			r->unknown_unlinks++;
			return 0;
		}
		map_del(&st->names, name_key(o->name, o->name_len));
		g = &r->segs[s];
		account(r, g, 0, o->t);
		g->unlinked = 1;
		g->unlink_proc = o->proc;
		g->unlinked_t = o->t;
		g->at_once = !g->attached && o->proc == g->proc && g->creator_open;
		account(r, g, 1, o->t);
		return 0;
	}
	return 0;
}

/* Process proc ended: its descriptors and mappings are gone. */
static void proc_end(struct state *st, int proc, uint64_t t)
{
	struct map *ms[2] = { &st->fds, &st->maps };

	for (int k = 0; k < 2; k++) {
		struct htab *tab = &ms[k]->t;
		for (size_t i = 0; tab->rec && i <= tab->mask;) {
			struct map_rec *r = htab_at(tab, (uint32_t)i);
			int owner = k == 0 ? (int)(r->key >> 32) : (int)(r->key >> 48);
			if (!r->hash || owner != proc) {
				i++;
				continue;
			}
			int s = r->val;
			int32_t fd = (int32_t)(uint32_t)r->key;
			htab_del(tab, r);       /* slot i may now hold a shifted entry */
			if (k == 0) {
				close_fd(st, proc, fd, s, t);
			} else {
				account(st->r, &st->r->segs[s], 0, t);
				st->r->segs[s].maps--;
				account(st->r, &st->r->segs[s], 1, t);
			}
		}
	}
}

struct keyed { struct shm_op o; size_t i; };

/* By time, then by input position: a total order, so qsort is stable. */
static int cmp_op(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	if (a->o.t != b->o.t)
		return a->o.t < b->o.t ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int sort_ops(struct shm_op *ops, size_t n)
{
	struct keyed *tmp = malloc((n ? n : 1) * sizeof *tmp);

	if (!tmp)
		return -1;
	for (size_t i = 0; i < n; i++) {
		tmp[i].o = ops[i];
		tmp[i].i = i;
	}
	qsort(tmp, n, sizeof *tmp, cmp_op);
	for (size_t i = 0; i < n; i++)
		ops[i] = tmp[i].o;
	free(tmp);
	return 0;
}

int shm_analyze(struct shm_result *out, struct shm_op *ops, size_t n, int nprocs,
		const uint32_t *pids, const uint64_t *end, char *err, size_t errlen)
{
	struct state st = { out, MAP_INIT, MAP_INIT, MAP_INIT, 0 };
	uint64_t *ends = NULL;
	int *order = NULL;

	memset(out, 0, sizeof *out);
	out->nprocs = nprocs;
	out->pids = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof *out->pids);
	out->per_proc = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof *out->per_proc);
	ends = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof *ends);
	order = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof *order);
	if (!out->pids || !out->per_proc || !ends || !order || sort_ops(ops, n) < 0)
		goto nomem;
	for (int p = 0; p < nprocs; p++) {
		out->pids[p] = pids ? pids[p] : 0;
		order[p] = p;
		ends[p] = end ? end[p] : 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (ops[i].proc < 0 || ops[i].proc >= nprocs) {
			snprintf(err, errlen, "shm record of process %d, not in 0..%d", ops[i].proc, nprocs - 1);
			shm_result_free(out);
			free(ends);
			free(order);
			return -1;
		}
		if (!end && ops[i].t > ends[ops[i].proc])
			ends[ops[i].proc] = ops[i].t;
	}
	for (int i = 1; i < nprocs; i++)        /* by end time; few processes */
		for (int j = i; j > 0 && ends[order[j - 1]] > ends[order[j]]; j--) {
			int x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		while (k < nprocs && ends[order[k]] < ops[i].t)
			proc_end(&st, order[k], ends[order[k]]), k++;
		if (apply(&st, &ops[i]) < 0)
			goto nomem;
	}
	for (; k < nprocs; k++)
		proc_end(&st, order[k], ends[order[k]]);

	for (uint32_t i = 0; i < out->nsegs; i++) {
		const struct shm_seg *s = &out->segs[i];
		struct shm_totals *pt = &out->per_proc[s->proc];
		if (s->attached)
			continue;
		if (s->at_once)
			out->all.at_once++, pt->at_once++;
		else
			out->all.named++, pt->named++;
		if (!s->unlinked) {
			out->all.present++, pt->present++;
			out->all.present_bytes += s->size, pt->present_bytes += s->size;
		}
	}
	map_free(&st.names);
	map_free(&st.fds);
	map_free(&st.maps);
	free(ends);
	free(order);
	return 0;
nomem:
	map_free(&st.names);
	map_free(&st.fds);
	map_free(&st.maps);
	free(ends);
	free(order);
	shm_result_free(out);
	snprintf(err, errlen, "shared memory analysis: %s", strerror(ENOMEM));
	return -1;
}

void shm_op_from_rec(const struct trace_rec *rec, int proc, uint64_t t, struct shm_op *o)
{
	const struct mt_shm *s = rec->p;
	struct trace_bytes name = trace_shm_name(s);

	o->proc = proc;
	o->t = t;
	o->op = s->lh.h.a;
	o->fd = s->fd;
	o->flags = s->flags;
	o->err = s->err;
	o->size = s->size;
	o->addr = s->addr;
	o->stack = s->stack_id;
	o->name = name.p;
	o->name_len = (uint32_t)name.len;
}

int shm_analyze_stream(struct shm_result *out, struct stream *s, char *err, size_t errlen)
{
	int nprocs = stream_nprocs(s);
	struct shm_op *ops = NULL;
	size_t n = 0, cap = 0;
	uint32_t *pids = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof *pids);
	uint64_t *end = calloc(nprocs > 0 ? (size_t)nprocs : 1, sizeof *end);
	struct srec r;
	int rc = -1;

	if (!pids || !end)
		goto out;
	for (int p = 0; p < nprocs; p++) {
		const struct sproc *sp = stream_proc(s, p);
		pids[p] = sp->process ? sp->process->pid : trace_header(sp->t)->pid;
		end[p] = sp->last_t;
	}
	stream_rewind(s);
	/* no shared memory record: nothing to merge in time */
	while (stream_shm_records(s) && stream_next(s, &r)) {
		if (r.rec.type != MT_REC_SHM)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			struct shm_op *p = realloc(ops, c * sizeof *p);
			if (!p)
				goto out;
			ops = p;
			cap = c;
		}
		shm_op_from_rec(&r.rec, r.proc, r.t, &ops[n++]);
	}
	stream_rewind(s);
	rc = shm_analyze(out, ops, n, nprocs, pids, end, err, errlen);
	free(ops);
	free(pids);
	free(end);
	return rc;
out:
	free(ops);
	free(pids);
	free(end);
	memset(out, 0, sizeof *out);
	snprintf(err, errlen, "shared memory analysis: %s", strerror(ENOMEM));
	return -1;
}

void shm_result_free(struct shm_result *r)
{
	free(r->segs);
	free(r->pids);
	free(r->per_proc);
	memset(r, 0, sizeof *r);
}

/* --- rendering ------------------------------------------------------------------ */

static const char *size_str(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

static void put_name(FILE *f, const char *s, uint32_t n, int json)
{
	for (uint32_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f || (json && c >= 0x80))
			fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
		else if (c >= 0x80)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static int cmp_present(const void *x, const void *y)
{
	const struct shm_seg *a = *(const struct shm_seg *const *)x, *b = *(const struct shm_seg *const *)y;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->created_t < b->created_t ? -1 : a->created_t > b->created_t;
}

/* The segments present at exit, largest first; NULL when none (or no memory). */
static const struct shm_seg **present_list(const struct shm_result *r, uint32_t *n)
{
	const struct shm_seg **v = malloc((r->nsegs ? r->nsegs : 1) * sizeof *v);

	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < r->nsegs; i++)
		if (!r->segs[i].attached && !r->segs[i].unlinked)
			v[(*n)++] = &r->segs[i];
	qsort(v, *n, sizeof *v, cmp_present);
	return v;
}

static const char *const op_names[8] = {
	NULL, "open", "truncate", "mmap", "unlink", "close", "fallocate", "munmap"
};

void shm_render_text(FILE *f, const struct shm_result *r, shm_stack_fn stack, void *ctx)
{
	char b1[32], b2[32];
	uint32_t np;

	if (!r->ops)
		return;
	fprintf(f, "POSIX shared memory (/dev/shm)\n");
	fprintf(f, "  segments created: %" PRIu64 " (%" PRIu64 " named, %" PRIu64 " unlinked at once)",
		r->all.created, r->all.named, r->all.at_once);
	if (r->all.attached)
		fprintf(f, ", %" PRIu64 " made elsewhere and opened", r->all.attached);
	fprintf(f, "\n  peak total size: %s at %.3f s\n", size_str(b1, sizeof b1, r->all.peak),
		(double)r->all.peak_t / 1e9);
	fprintf(f, "  still present at exit: %" PRIu64 " segment%s, %s\n", r->all.present,
		r->all.present == 1 ? "" : "s", size_str(b2, sizeof b2, r->all.present_bytes));
	const struct shm_seg **v = present_list(r, &np);
	for (uint32_t i = 0; v && i < np; i++) {
		fputs("    ", f);
		put_name(f, v[i]->name, v[i]->name_len, 0);
		fprintf(f, "  %s  pid %" PRIu32 "  created at %.3f s\n", size_str(b1, sizeof b1, v[i]->size),
			r->pids[v[i]->proc], (double)v[i]->created_t / 1e9);
		if (stack)
			stack(ctx, f, v[i]->proc, v[i]->stack, "      ");
		else
			fprintf(f, "      stack %" PRIu32 "\n", v[i]->stack);
	}
	free(v);
	if (r->nprocs > 1) {
		fputs("  by process:\n", f);
		for (int p = 0; p < r->nprocs; p++) {
			const struct shm_totals *t = &r->per_proc[p];
			if (!t->created && !t->attached)
				continue;
			fprintf(f, "    pid %" PRIu32 ": %" PRIu64 " created (%" PRIu64 " named, %" PRIu64
				" unlinked at once), peak %s, %" PRIu64 " present at exit (%s)\n",
				r->pids[p], t->created, t->named, t->at_once, size_str(b1, sizeof b1, t->peak),
				t->present, size_str(b2, sizeof b2, t->present_bytes));
		}
	}
	uint64_t failed = 0;
	for (int i = 0; i < 8; i++)
		failed += r->failed[i];
	if (failed) {
		fprintf(f, "  failed calls: %" PRIu64 " (", failed);
		const char *sep = "";
		for (int i = 1; i < 8; i++)
			if (r->failed[i])
				fprintf(f, "%s%" PRIu64 " %s", sep, r->failed[i], op_names[i]), sep = ", ";
		fprintf(f, ")");
		if (r->failed_nospc)
			fprintf(f, ", %" PRIu64 " of them out of space (ENOSPC): /dev/shm is full",
				r->failed_nospc);
		fputc('\n', f);
	}
}

static void json_totals(FILE *f, const struct shm_totals *t)
{
	fprintf(f, "\"created\":%" PRIu64 ",\"named\":%" PRIu64 ",\"unlinked_at_once\":%" PRIu64
		",\"attached\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"peak_time_ns\":%" PRIu64
		",\"present_at_exit\":%" PRIu64 ",\"present_bytes\":%" PRIu64,
		t->created, t->named, t->at_once, t->attached, t->peak, t->peak_t, t->present,
		t->present_bytes);
}

void shm_render_json(FILE *f, const struct shm_result *r)
{
	uint32_t np;

	fputc('{', f);
	json_totals(f, &r->all);
	fprintf(f, ",\"records\":%" PRIu64 ",\"failed\":{", r->ops);
	for (int i = 1; i < 8; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i > 1 ? "," : "", op_names[i], r->failed[i]);
	fprintf(f, "},\"failed_nospc\":%" PRIu64 ",\"segments_present\":[", r->failed_nospc);
	const struct shm_seg **v = present_list(r, &np);
	for (uint32_t i = 0; v && i < np; i++) {
		fprintf(f, "%s{\"name\":\"", i ? "," : "");
		put_name(f, v[i]->name, v[i]->name_len, 1);
		fprintf(f, "\",\"pid\":%" PRIu32 ",\"size\":%" PRIu64 ",\"stack\":%" PRIu32
			",\"created_ns\":%" PRIu64 "}", r->pids[v[i]->proc], v[i]->size, v[i]->stack,
			v[i]->created_t);
	}
	free(v);
	fputs("],\"processes\":[", f);
	int first = 1;
	for (int p = 0; p < r->nprocs; p++) {
		const struct shm_totals *t = &r->per_proc[p];
		if (!t->created && !t->attached)
			continue;
		fprintf(f, "%s{\"pid\":%" PRIu32 ",", first ? "" : ",", r->pids[p]);
		json_totals(f, t);
		fputc('}', f);
		first = 0;
	}
	fputs("]}", f);
}
