/*
 * sites.c - groups the stacks the pass counted into the sites every view
 * shows (sites.h).
 *
 * How it works: every stack with an allocation is resolved and turned into
 * a key, its frames as text (function@file:line, or module+offset where no
 * symbol is known); stacks with the same key, device and caching flag are
 * one site. A hash of the keys keeps this linear in the number of stacks.
 * Sites are numbered in the order of their first stack, which is the order
 * of the run's first allocation at each (account.c numbers stacks so).
 * Each site's name shows its frames from the main one outward: at least
 * SITE_NAME_FRAMES, and as many as tell it from every other site (sites
 * sorted by those frames: a site's neighbours share its longest prefix).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/metrics.h"
#include "model/report.h"
#include "model/sites.h"

static size_t frames_key(const struct sym_stack *st, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; st && i < st->nframes && n < len; i++) {
		const struct sym_frame *f = &st->frames[i];

		if (f->function || f->file)
			n += (size_t)snprintf(buf + n, len - n, "%s@%s:%d|", f->function ? f->function : "",
					      f->file ? f->file : "", f->line);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s+%" PRIx64 "|", f->module, f->offset);
	}
	return n < len ? n : len - 1;
}

struct member { uint32_t site; int proc; };

static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

static uint64_t hash(const char *s, int dev, int caching)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(dev + 2) ^ (uint64_t)caching << 16;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The main frame's index (the user's, else the innermost), -1: none. */
static int main_of(const struct sym_stack *st)
{
	const struct sym_frame *m = rep_main_frame(st);

	return m ? (int)(m - st->frames) : -1;
}

static int cmp_frame(const struct sym_frame *x, const struct sym_frame *y)
{
	int c;

	if (!x->function != !y->function)
		return x->function ? 1 : -1;
	if (x->function) {
		if ((c = strcmp(x->function, y->function)))
			return c;
		if ((c = strcmp(x->file ? x->file : "", y->file ? y->file : "")))
			return c;
		return x->line < y->line ? -1 : x->line > y->line;
	}
	if ((c = strcmp(x->module, y->module)))
		return c;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Frames from the main frame that two stacks share. */
static int shared(const struct sym_stack *a, const struct sym_stack *b)
{
	int ma = main_of(a), mb = main_of(b), k = 0;

	if (ma < 0 || mb < 0)
		return 0;
	while (ma + k < a->nframes && mb + k < b->nframes &&
	       !cmp_frame(&a->frames[ma + k], &b->frames[mb + k]))
		k++;
	return k;
}

static int cmp_named(const void *x, const void *y)
{
	const struct sym_stack *a = (*(const struct site *const *)x)->st;
	const struct sym_stack *b = (*(const struct site *const *)y)->st;
	int ma = main_of(a), mb = main_of(b);

	if (ma < 0 || mb < 0)
		return (ma >= 0) - (mb >= 0);
	for (int k = 0;; k++) {
		int c;

		if (ma + k >= a->nframes || mb + k >= b->nframes)
			return (ma + k < a->nframes) - (mb + k < b->nframes);
		if ((c = cmp_frame(&a->frames[ma + k], &b->frames[mb + k])))
			return c;
	}
}

/* name_frames of every site. 0, or -1 when out of memory. */
static int name_sites(struct sites *out)
{
	const struct site **v = malloc((out->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	for (uint32_t i = 0; i < out->n; i++)
		v[i] = &out->v[i];
	qsort(v, out->n, sizeof(*v), cmp_named);
	for (uint32_t i = 0; i < out->n; i++) {
		int k = 0, n;

		if (i > 0 && (n = shared(v[i]->st, v[i - 1]->st)) > k)
			k = n;
		if (i + 1 < out->n && (n = shared(v[i]->st, v[i + 1]->st)) > k)
			k = n;
		k = k + 1 < SITE_NAME_FRAMES ? SITE_NAME_FRAMES : k + 1;
		((struct site *)v[i])->name_frames = k > SITE_NAME_MAX ? SITE_NAME_MAX : k;
	}
	free(v);
	return 0;
}

int sites_build(struct sites *out, const struct analysis *a, struct symbols *sy, char *err,
		size_t errlen)
{
	size_t cap = 16;
	uint32_t *tab = NULL;           /* site index + 1, 0 empty */
	struct member *m = NULL;
	char key[4096];

	memset(out, 0, sizeof(*out));
	while (cap < (size_t)a->nsites * 2)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	out->v = calloc((size_t)a->nsites + 1, sizeof(*out->v));
	out->of = calloc((size_t)a->nsites + 1, sizeof(*out->of));
	m = calloc((size_t)a->nsites + 1, sizeof(*m));
	if (!tab || !out->v || !out->of || !m)
		goto nomem;
	for (uint32_t i = 0; i < a->nsites; i++) {
		const struct an_site *s = &a->sites[i];
		const struct sym_stack *st = sym_stack(sy, a->s, s->proc, s->stack);
		struct site *g = NULL;
		uint64_t h;
		size_t j;

		if (!st)
			goto nomem;
		frames_key(st, key, sizeof(key));
		h = hash(key, s->dev, s->caching);
		for (j = h & (cap - 1); tab[j]; j = (j + 1) & (cap - 1)) {
			struct site *c = &out->v[tab[j] - 1];

			if (c->dev == s->dev && c->caching == s->caching && !strcmp(c->key, key)) {
				g = c;
				break;
			}
		}
		if (!g) {
			g = &out->v[out->n];
			if (!(g->key = strdup(key)))
				goto nomem;
			g->id = ++out->n;
			g->dev = s->dev;
			g->caching = s->caching;
			g->proc = s->proc;
			g->stack = s->stack;
			g->st = st;
			tab[j] = g->id;
		}
		out->of[i] = g->id - 1;
		m[i].site = g->id - 1;
		m[i].proc = s->proc;
		g->allocs += s->total_count;
		g->bytes += s->total_bytes;
		g->exit_bytes += s->live;
		g->exit_count += s->count;
		g->growing |= leaks_is_growing(a, s);
		if (s->live && a->procs[s->proc].end == AN_END_KILLED)
			g->interrupted = 1;
	}
	/* processes per site: distinct (site, process) pairs */
	qsort(m, a->nsites, sizeof(*m), cmp_member);
	for (uint32_t i = 0; i < a->nsites; i++)
		if (!i || m[i].site != m[i - 1].site || m[i].proc != m[i - 1].proc)
			out->v[m[i].site].nprocs++;
	if (name_sites(out))
		goto nomem;
	free(tab);
	free(m);
	return 0;
nomem:
	free(tab);
	free(m);
	sites_free(out);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void sites_free(struct sites *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		free(s->v[i].key);
	free(s->v);
	free(s->of);
	memset(s, 0, sizeof(*s));
}
