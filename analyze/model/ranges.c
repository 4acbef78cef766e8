/*
 * ranges.c - the program's units of time (ranges.h; docs/units.md defines
 * every figure). During the pass each process keeps its strings (id to
 * text, from its STRING records) and the instances open now; a change of
 * the process's reserved raises the peak of every open instance (O(open)
 * per change, at most RG_MAX_OPEN of them) and, at a new high of the
 * process, notes the instance and the step it happened in. A pop closes
 * the innermost open push of its thread and domain, an end the latest
 * open start of its id (on any thread). At the end, instances are grouped
 * by domain and name (digit runs read alike), and the step range (the
 * step-named group with most instances) gives the growth per step: the
 * reserved at each step's end, and the site whose live bytes grew most
 * between the end of the first step and the end of the last one followed
 * (site live bytes are copied at each step's end while RG_SNAP_BUDGET
 * copies last).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "model/ranges.h"

struct pstate {
	char **str;                     /* [id]: text, NULL unknown */
	uint32_t nstr;
	uint32_t *open;                 /* open instance indexes, oldest first */
	uint32_t nopen, capopen;
	uint64_t reserved, fw;          /* now */
	uint64_t max;
	int has_max;
};

struct priv {
	struct pstate *ps;
	uint32_t tid;                   /* thread of the event being applied */
	int tid_proc;
	uint64_t *snap_first, *snap_last;   /* site live bytes at step ends */
	uint32_t nsnap;                 /* sites copied */
	uint64_t budget;
	int snap_from, snap_to;         /* step instance indexes */
	int first_step_done;
};

#define P(m) ((struct priv *)(m)->priv)

static struct rg_model *model(struct analysis *a)
{
	struct rg_model *m = a->ranges;

	if (m)
		return m;
	m = calloc(1, sizeof *m);
	struct priv *p = calloc(1, sizeof *p);
	if (!m || !p || !(p->ps = calloc((size_t)(a->nprocs ? a->nprocs : 1), sizeof *p->ps))) {
		free(m);
		if (p)
			free(p->ps);
		free(p);
		return NULL;
	}
	m->priv = p;
	m->nprocs = a->nprocs;
	m->peak_proc = -1;
	m->step_group = -1;
	m->growth_site = -1;
	m->other_thread_inst = m->left_open_inst = -1;
	p->snap_from = p->snap_to = -1;
	p->budget = RG_SNAP_BUDGET;
	p->tid_proc = -1;
	a->ranges = m;
	/* the processes' reserved so far (ranges_mem() follows it from now) */
	for (int i = 0; i < a->nprocs; i++)
		p->ps[i].reserved = a->procs[i].reserved_all;
	return m;
}

/* The processes added since (memtrace top: a job's process that started
   after its first range record): their state, from their reserved now;
   -1 out of memory. */
static int add_procs(struct analysis *a, struct rg_model *m)
{
	struct priv *p = P(m);
	int n = a->nprocs;

	if (n <= m->nprocs)
		return 0;
	struct pstate *ps = realloc(p->ps, (size_t)n * sizeof *ps);
	if (!ps)
		return -1;
	p->ps = ps;
	memset(ps + m->nprocs, 0, (size_t)(n - m->nprocs) * sizeof *ps);
	if (m->peaks) {
		struct rg_peak *pk = realloc(m->peaks, (size_t)n * sizeof *pk);
		if (!pk)
			return -1;
		m->peaks = pk;
		memset(pk + m->nprocs, 0, (size_t)(n - m->nprocs) * sizeof *pk);
	}
	for (int i = m->nprocs; i < n; i++)
		ps[i].reserved = a->procs[i].reserved_all;
	m->nprocs = n;
	return 0;
}

int rg_is_step_name(const char *name, uint32_t *no)
{
	static const char *const words[] = {
		"step", "iter", "iteration", "batch", "train step", "train_step", "training step",
		"training_step", "train iteration", "train_iter", "train batch", "train_batch",
		"trainstep", "train", NULL,
	};
	char low[64];
	size_t n = 0, len = strlen(name);

	*no = 0;
	/* the word: letters, spaces, '_' and '.', then the number */
	while (n < len && n < sizeof low - 1 && !isdigit((unsigned char)name[n])) {
		low[n] = (char)tolower((unsigned char)name[n]);
		n++;
	}
	size_t w = n;
	while (w > 0 && strchr(" #:=_-/", low[w - 1]))
		w--;
	low[w] = 0;
	const char *digits = name + n;
	uint64_t v = 0;
	size_t d = 0;
	while (isdigit((unsigned char)digits[d]) && d < 9)
		v = v * 10 + (uint64_t)(digits[d++] - '0');
	while (digits[d] == ' ')
		d++;
	if (digits[d])
		return 0;   /* something after the number */
	for (int i = 0; words[i]; i++)
		if (!strcmp(low, words[i])) {
			/* "train" alone is a phase; "train 3" a step */
			if (!strcmp(words[i], "train") && !d)
				return 0;
			*no = (uint32_t)v;
			return 1;
		}
	return 0;
}

const char *rg_group_name(char *buf, size_t len, const struct rg_group *g)
{
	if (g->domain)
		snprintf(buf, len, "%s:%s", g->domain, g->name);
	else
		snprintf(buf, len, "%s", g->name);
	return buf;
}

static const char *str_of(struct pstate *ps, uint32_t id)
{
	return id && id < ps->nstr ? ps->str[id] : NULL;
}

static int add_string(struct pstate *ps, const struct mt_string *s)
{
	if (s->id > (16u << 20))
		return 0;       /* larger ids are not kept */
	if (s->id >= ps->nstr) {
		uint32_t n = ps->nstr ? ps->nstr : 64;
		while (n <= s->id)
			n *= 2;
		char **v = realloc(ps->str, n * sizeof *v);
		if (!v)
			return -1;
		memset(v + ps->nstr, 0, (n - ps->nstr) * sizeof *v);
		ps->str = v;
		ps->nstr = n;
	}
	if (ps->str[s->id])
		return 0;
	ps->str[s->id] = strndup((const char *)(s + 1), s->len);
	return ps->str[s->id] ? 0 : -1;
}

/* name = "domain\x1fmessage" while the pass runs; split at the end */
static char *inst_name(struct pstate *ps, uint32_t dom, uint32_t msg)
{
	const char *d = str_of(ps, dom), *n = str_of(ps, msg);
	size_t dl = d ? strlen(d) : 0, nl = n ? strlen(n) : 0;
	char *s = malloc(dl + nl + 2);

	if (!s)
		return NULL;
	memcpy(s, d ? d : "", dl);
	s[dl] = 0x1f;
	memcpy(s + dl + 1, n ? n : "", nl);
	s[dl + nl + 1] = 0;
	return s;
}

static const char *msg_part(const char *name)
{
	const char *s = strchr(name, 0x1f);
	return s ? s + 1 : name;
}

static int open_inst(struct analysis *a, struct rg_model *m, const struct srec *r,
		     const struct mt_range *g, uint64_t id)
{
	struct pstate *ps = &P(m)->ps[r->proc];

	if (ps->nopen >= RG_MAX_OPEN) {
		m->not_followed++;
		return 0;
	}
	if (m->ninst == m->cap) {
		uint32_t c = m->cap ? m->cap * 2 : 256;
		void *v = realloc(m->inst, c * sizeof *m->inst);
		if (!v)
			return -1;
		m->inst = v;
		m->cap = c;
	}
	if (ps->nopen == ps->capopen) {
		uint32_t c = ps->capopen ? ps->capopen * 2 : 16;
		void *v = realloc(ps->open, c * sizeof *ps->open);
		if (!v)
			return -1;
		ps->open = v;
		ps->capopen = c;
	}
	struct rg_inst *in = &m->inst[m->ninst];
	memset(in, 0, sizeof *in);
	in->proc = r->proc;
	in->tid = in->end_tid = r->rec.tid;
	in->op = g->h.a;
	in->origin = (uint8_t)g->h.b;
	in->id = id;
	in->t0 = in->t1 = in->res_peak_t = r->t;
	in->res0 = in->res_peak = in->res1 = ps->reserved;
	in->fw0 = in->fw_peak = in->fw1 = ps->fw;
	in->parent = in->step = -1;
	in->name = inst_name(ps, g->domain, g->message);
	if (!in->name)
		return -1;
	in->is_step = (uint8_t)rg_is_step_name(msg_part(in->name), &in->step_no);
	/* nesting: the innermost open push of the same thread and domain */
	for (uint32_t k = ps->nopen; k-- > 0;) {
		struct rg_inst *o = &m->inst[ps->open[k]];
		if (g->h.a == MT_RANGE_PUSH && o->op == MT_RANGE_PUSH && o->tid == in->tid &&
		    !strncmp(o->name, in->name, (size_t)(strchr(in->name, 0x1f) - in->name + 1))) {
			in->parent = (int)ps->open[k];
			in->depth = (uint16_t)(o->depth + 1);
			break;
		}
	}
	if (in->is_step) {
		in->step = (int)m->ninst;
	} else {
		for (uint32_t k = ps->nopen; k-- > 0;)
			if (m->inst[ps->open[k]].is_step) {
				in->step = (int)ps->open[k];
				break;
			}
	}
	ps->open[ps->nopen++] = m->ninst++;
	(void)a;
	return 0;
}

/* Copies the live bytes of every site (for the growth's site). */
static void snap_sites(struct analysis *a, struct rg_model *m, int inst)
{
	struct priv *p = P(m);

	if (!a->nsites || p->budget < a->nsites)
		return;
	uint64_t **dst = p->first_step_done ? &p->snap_last : &p->snap_first;
	uint64_t *v = realloc(*dst, a->nsites * sizeof(uint64_t));
	if (!v)
		return;
	*dst = v;
	for (uint32_t i = 0; i < a->nsites; i++)
		v[i] = a->sites[i].live;
	if (!p->first_step_done) {
		p->snap_from = inst;
		p->nsnap = a->nsites;
		p->first_step_done = 1;
	} else {
		p->snap_to = inst;
	}
	p->budget -= a->nsites;
}

static void close_inst(struct analysis *a, struct rg_model *m, struct pstate *ps, uint32_t k,
		       const struct srec *r)
{
	uint32_t i = ps->open[k];
	struct rg_inst *in = &m->inst[i];

	in->t1 = r->t;
	in->end_tid = r->rec.tid;
	in->res1 = ps->reserved;
	in->fw1 = ps->fw;
	memmove(ps->open + k, ps->open + k + 1, (ps->nopen - k - 1) * sizeof *ps->open);
	ps->nopen--;
	if (in->op == MT_RANGE_START && in->end_tid != in->tid && !m->ends_other_thread++)
		m->other_thread_inst = (int)i;
	if (in->is_step)
		snap_sites(a, m, (int)i);
}

/* The first RG_MAX_MARKS marks, with their time (the exports' instants);
   m->marks counts them all. */
static int keep_mark(struct rg_model *m, struct pstate *ps, const struct srec *r,
		     const struct mt_range *g)
{
	if (m->nmark >= RG_MAX_MARKS)
		return 0;
	if (!(m->nmark & (m->nmark - 1))) {     /* 0, 1, 2, 4...: full */
		void *v = realloc(m->mark, (m->nmark ? 2 * m->nmark : 1) * sizeof *m->mark);
		if (!v)
			return -1;
		m->mark = v;
	}
	struct rg_mark *k = &m->mark[m->nmark];
	char *n = inst_name(ps, g->domain, g->message);
	if (!n)
		return -1;
	k->proc = r->proc;
	k->tid = r->rec.tid;
	k->t = r->t;
	k->name = malloc(strlen(n) + 1);        /* the \x1f becomes ':' */
	if (!k->name) {
		free(n);
		return -1;
	}
	const char *msg = msg_part(n);
	if (msg - 1 > n)
		sprintf(k->name, "%.*s:%s", (int)(msg - 1 - n), n, msg);
	else
		strcpy(k->name, msg);
	free(n);
	m->nmark++;
	return 0;
}

int ranges_record(struct analysis *a, const struct srec *r)
{
	struct rg_model *m = model(a);

	if (!m)
		return -1;
	if (r->proc >= m->nprocs && add_procs(a, m))
		return -1;
	if (r->proc < 0 || r->proc >= m->nprocs)
		return 0;
	struct pstate *ps = &P(m)->ps[r->proc];

	if (r->rec.type == MT_REC_STRING)
		return add_string(ps, r->rec.p);
	const struct mt_range *g = r->rec.p;
	uint64_t id = r->rec.size >= sizeof(struct mt_range_id) ? ((const struct mt_range_id *)g)->id : 0;

	m->records++;
	switch (g->h.a) {
	case MT_RANGE_PUSH:
	case MT_RANGE_START:
		return open_inst(a, m, r, g, id);
	case MT_RANGE_POP:
		for (uint32_t k = ps->nopen; k-- > 0;) {
			struct rg_inst *o = &m->inst[ps->open[k]];
			const char *sep = strchr(o->name, 0x1f);
			const char *d = str_of(ps, g->domain);
			size_t dl = (size_t)(sep - o->name);

			if (o->op == MT_RANGE_PUSH && o->tid == r->rec.tid &&
			    dl == (d ? strlen(d) : 0) && (!dl || !memcmp(o->name, d, dl))) {
				close_inst(a, m, ps, k, r);
				return 0;
			}
		}
		if (!m->pops_unmatched++)
			m->pop_tid = r->rec.tid;
		return 0;
	case MT_RANGE_END:
		for (uint32_t k = ps->nopen; k-- > 0;)
			if (m->inst[ps->open[k]].op == MT_RANGE_START && m->inst[ps->open[k]].id == id) {
				close_inst(a, m, ps, k, r);
				return 0;
			}
		m->ends_unmatched++;
		return 0;
	case MT_RANGE_MARK:
		m->marks++;
		return keep_mark(m, ps, r, g);
	case MT_RANGE_NAME_THREAD:
		m->thread_names++;
		return 0;
	}
	return 0;       /* an op this analyzer does not know */
}

void ranges_thread(struct analysis *a, uint32_t tid)
{
	if (a->ranges)
		P(a->ranges)->tid = tid;
}

static void note_peak(struct rg_model *m, struct pstate *ps, int proc, uint64_t t)
{
	struct rg_peak *pk = &m->peaks[proc];
	uint32_t tid = P(m)->tid;

	pk->proc = proc;
	pk->reserved = ps->reserved;
	pk->t = t;
	pk->inst = pk->step = -1;
	for (uint32_t k = ps->nopen; k-- > 0;)
		if (m->inst[ps->open[k]].tid == tid) {
			pk->inst = (int)ps->open[k];
			break;
		}
	if (pk->inst < 0 && ps->nopen)
		pk->inst = (int)ps->open[ps->nopen - 1];
	for (uint32_t k = ps->nopen; k-- > 0;)
		if (m->inst[ps->open[k]].is_step) {
			pk->step = (int)ps->open[k];
			break;
		}
}

void ranges_mem(struct analysis *a, int proc, uint64_t t, uint64_t reserved)
{
	struct rg_model *m = a->ranges;

	if (m && proc >= m->nprocs && add_procs(a, m))
		return;         /* out of memory: that process is not followed */
	if (!m || proc < 0 || proc >= m->nprocs)
		return;
	struct pstate *ps = &P(m)->ps[proc];
	int up = reserved > ps->reserved;

	ps->reserved = reserved;
	if (!up)
		return;
	for (uint32_t k = 0; k < ps->nopen; k++) {
		struct rg_inst *in = &m->inst[ps->open[k]];
		if (reserved > in->res_peak) {
			in->res_peak = reserved;
			in->res_peak_t = t;
		}
	}
	if (!m->peaks && !(m->peaks = calloc((size_t)m->nprocs, sizeof *m->peaks)))
		return;
	if (!ps->has_max || reserved > ps->max) {
		ps->max = reserved;
		ps->has_max = 1;
		note_peak(m, ps, proc, t);
	}
}

void ranges_fw(struct analysis *a, int proc, uint64_t t)
{
	struct rg_model *m = a->ranges;
	uint64_t sum = 0;

	if (m && proc >= m->nprocs && add_procs(a, m))
		return;
	if (!m || !a->fw || proc < 0 || proc >= m->nprocs)
		return;
	for (int i = 0; i < a->fw->ndevs; i++)
		if (a->fw->devs[i].proc == proc)
			sum += a->fw->devs[i].allocated;
	struct pstate *ps = &P(m)->ps[proc];
	m->has_fw = 1;
	ps->fw = sum;
	for (uint32_t k = 0; k < ps->nopen; k++) {
		struct rg_inst *in = &m->inst[ps->open[k]];
		if (sum > in->fw_peak)
			in->fw_peak = sum;
	}
	(void)t;
}

/* The group key: domain \x1f name with digit runs as "N". */
static char *group_key(const char *name)
{
	size_t n = strlen(name);
	char *k = malloc(n + 1), *q = k;

	if (!k)
		return NULL;
	for (const char *s = name; *s;) {
		if (isdigit((unsigned char)*s)) {
			*q++ = 'N';
			while (isdigit((unsigned char)*s))
				s++;
		} else {
			*q++ = *s++;
		}
	}
	*q = 0;
	return k;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int group_all(struct rg_model *m)
{
	char **keys = calloc(m->ninst ? m->ninst : 1, sizeof *keys);
	uint32_t *first = calloc(m->ninst ? m->ninst : 1, sizeof *first);   /* per group */

	if (!keys || !first)
		goto oom;
	m->groups = calloc(m->ninst ? m->ninst : 1, sizeof *m->groups);
	if (!m->groups)
		goto oom;
	/* quadratic in the number of groups, not of instances: a small
	   hash on the key */
	uint32_t hsize = 1;
	while (hsize < m->ninst * 2 + 2)
		hsize <<= 1;
	int *hash = malloc(hsize * sizeof *hash);
	if (!hash)
		goto oom;
	for (uint32_t i = 0; i < hsize; i++)
		hash[i] = -1;
	for (uint32_t i = 0; i < m->ninst; i++) {
		struct rg_inst *in = &m->inst[i];
		char *k = group_key(in->name);
		if (!k) {
			free(hash);
			goto oom;
		}
		uint64_t h = 0xcbf29ce484222325ull;
		for (const char *s = k; *s; s++)
			h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
		uint32_t slot = (uint32_t)h & (hsize - 1);
		while (hash[slot] >= 0 && strcmp(keys[hash[slot]], k))
			slot = (slot + 1) & (hsize - 1);
		if (hash[slot] < 0) {
			uint32_t gi = m->ngroups++;
			hash[slot] = (int)gi;
			keys[gi] = k;
			first[gi] = i;
			struct rg_group *g = &m->groups[gi];
			g->peak_inst = (int)i;
			g->fw_peak_inst = -1;
			g->origin = in->origin;
			g->is_step = in->is_step;
		} else {
			free(k);
		}
		struct rg_group *g = &m->groups[hash[slot]];
		in->group = (uint32_t)hash[slot];
		g->count++;
		g->open += in->open;
		g->total_ns += in->t1 - in->t0;
		if (in->res_peak > m->inst[g->peak_inst].res_peak)
			g->peak_inst = (int)i;
		if (m->has_fw && (g->fw_peak_inst < 0 || in->fw_peak > m->inst[g->fw_peak_inst].fw_peak))
			g->fw_peak_inst = (int)i;
	}
	free(hash);
	/* names: the instances' own when they agree, else the key */
	for (uint32_t gi = 0; gi < m->ngroups; gi++) {
		struct rg_group *g = &m->groups[gi];
		const char *own = m->inst[first[gi]].name;
		int same = 1;

		for (uint32_t i = first[gi]; i < m->ninst && same; i++)
			if (m->inst[i].group == gi && strcmp(m->inst[i].name, own))
				same = 0;
		const char *use = same ? own : keys[gi];
		const char *sep = strchr(use, 0x1f);
		g->domain = sep != use ? strndup(use, (size_t)(sep - use)) : NULL;
		g->name = strdup(sep + 1);
		if ((sep != use && !g->domain) || !g->name)
			goto oom;
	}
	for (uint32_t i = 0; i < m->ngroups; i++)
		free(keys[i]);
	free(keys);
	free(first);
	return 0;
oom:
	if (keys)
		for (uint32_t i = 0; i < m->ngroups; i++)
			free(keys[i]);
	free(keys);
	free(first);
	return -1;
}

static int steps(struct analysis *a, struct rg_model *m)
{
	struct priv *p = P(m);

	for (uint32_t gi = 0; gi < m->ngroups; gi++)
		if (m->groups[gi].is_step &&
		    (m->step_group < 0 || m->groups[gi].count > m->groups[m->step_group].count))
			m->step_group = (int)gi;
	if (m->step_group < 0)
		return 0;
	m->nsteps = m->groups[m->step_group].count;
	m->steps = malloc(m->nsteps * sizeof *m->steps);
	if (!m->steps)
		return -1;
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->ninst; i++)
		if ((int)m->inst[i].group == m->step_group) {
			m->steps[n] = i;
			if (!m->inst[i].step_no)
				m->inst[i].step_no = n + 1;
			n++;
		}
	/* an instance of another step-named group is no step of the run */
	for (uint32_t i = 0; i < m->ninst; i++) {
		struct rg_inst *in = &m->inst[i];
		if (in->step >= 0 && (int)m->inst[in->step].group != m->step_group)
			in->step = -1;
	}
	for (int i = 0; m->peaks && i < m->nprocs; i++)
		if (m->peaks[i].step >= 0 && (int)m->inst[m->peaks[i].step].group != m->step_group)
			m->peaks[i].step = -1;
	if (m->nsteps < 2)
		return 0;
	const struct rg_inst *f = &m->inst[m->steps[0]], *l = &m->inst[m->steps[m->nsteps - 1]];
	m->has_growth = 1;
	m->growth = ((int64_t)l->res1 - (int64_t)f->res1) / (int64_t)(m->nsteps - 1);
	m->fw_growth = ((int64_t)l->fw1 - (int64_t)f->fw1) / (int64_t)(m->nsteps - 1);
	uint64_t *others = malloc((m->nsteps - 1) * sizeof *others);
	if (!others)
		return -1;
	for (uint32_t i = 1; i < m->nsteps; i++)
		others[i - 1] = m->inst[m->steps[i]].res_peak;
	qsort(others, m->nsteps - 1, sizeof *others, cmp_u64);
	m->first_vs_steady = (int64_t)f->res_peak - (int64_t)others[(m->nsteps - 1) / 2];
	free(others);
	/* the site that grows: between the first step's end and the last
	   one copied, of the same process as the first step */
	if (p->snap_first && p->snap_last && p->snap_from >= 0 && p->snap_to > p->snap_from &&
	    (int)m->inst[p->snap_from].group == m->step_group &&
	    (int)m->inst[p->snap_to].group == m->step_group) {
		const struct rg_inst *sf = &m->inst[p->snap_from], *st = &m->inst[p->snap_to];
		int64_t best = 0;
		int span = 0;

		for (uint32_t i = 0; i < m->nsteps; i++) {
			if ((int)m->steps[i] == p->snap_from)
				span = -(int)i;
			if ((int)m->steps[i] == p->snap_to)
				span += (int)i;
		}
		if (span <= 0)
			span = 1;
		for (uint32_t i = 0; i < p->nsnap && i < a->nsites; i++) {
			int64_t d = (int64_t)p->snap_last[i] - (int64_t)p->snap_first[i];
			if (a->sites[i].proc == sf->proc && d > best) {
				best = d;
				m->growth_site = (int)i;
			}
		}
		m->growth_site_bytes = best / span;
		m->growth_from = sf->step_no;
		m->growth_to = st->step_no;
	}
	return 0;
}

int ranges_end(struct analysis *a)
{
	struct rg_model *m = a->ranges;

	if (!m)
		return 0;
	struct priv *p = P(m);
	/* what is still open ends with its process */
	for (int i = 0; i < m->nprocs; i++) {
		struct pstate *ps = &p->ps[i];
		for (uint32_t k = 0; k < ps->nopen; k++) {
			struct rg_inst *in = &m->inst[ps->open[k]];
			in->open = 1;
			in->t1 = a->procs[i].end_time > in->t0 ? a->procs[i].end_time : in->t0;
			in->res1 = ps->reserved;
			in->fw1 = ps->fw;
			if (!m->left_open++)
				m->left_open_inst = (int)ps->open[k];
		}
		ps->nopen = 0;
	}
	if (group_all(m) || steps(a, m))
		return -1;
	for (int i = 0; m->peaks && i < m->nprocs; i++)
		if (m->peaks[i].reserved &&
		    (m->peak_proc < 0 || m->peaks[i].reserved > m->peaks[m->peak_proc].reserved))
			m->peak_proc = i;
	/* the names as shown: "domain\x1fname" stays inside; each instance
	   gets its message part for the views */
	for (uint32_t i = 0; i < m->ninst; i++) {
		char *s = strdup(msg_part(m->inst[i].name));
		if (!s)
			return -1;
		free(m->inst[i].name);
		m->inst[i].name = s;
	}
	return 0;
}

void ranges_free(struct rg_model *m)
{
	if (!m)
		return;
	struct priv *p = P(m);
	if (p) {
		for (int i = 0; i < m->nprocs; i++) {
			for (uint32_t k = 0; k < p->ps[i].nstr; k++)
				free(p->ps[i].str[k]);
			free(p->ps[i].str);
			free(p->ps[i].open);
		}
		free(p->ps);
		free(p->snap_first);
		free(p->snap_last);
		free(p);
	}
	for (uint32_t i = 0; i < m->ninst; i++)
		free(m->inst[i].name);
	for (uint32_t i = 0; i < m->ngroups; i++) {
		free(m->groups[i].domain);
		free(m->groups[i].name);
	}
	for (uint32_t i = 0; i < m->nmark; i++)
		free(m->mark[i].name);
	free(m->mark);
	free(m->inst);
	free(m->groups);
	free(m->peaks);
	free(m->steps);
	free(m);
}

/* --- during the pass: where a process is now (ranges.h) -------------------- */

/* "domain:name" of an instance during the pass ("domain\x1fname" inside) */
static void now_name(char *buf, size_t len, const char *name)
{
	const char *sep = strchr(name, 0x1f);

	if (sep && sep != name)
		snprintf(buf, len, "%.*s:%s", (int)(sep - name), name, sep + 1);
	else
		snprintf(buf, len, "%s", msg_part(name));
}

void ranges_now(const struct analysis *a, int proc, struct rg_now *now)
{
	const struct rg_model *m = a->ranges;

	memset(now, 0, sizeof *now);
	if (!m || proc < 0 || proc >= m->nprocs || !m->priv)
		return;
	const struct pstate *ps = &P(m)->ps[proc];
	for (uint32_t k = ps->nopen; k-- > 0;) {
		const struct rg_inst *in = &m->inst[ps->open[k]];

		if (in->is_step && !now->step)
			now->step = in;
		else if (!in->is_step && !now->range)
			now->range = in;
	}
	/* the last step closed: the latest step instance not open */
	for (uint32_t i = m->ninst; i-- > 0 && !now->last_step;) {
		const struct rg_inst *in = &m->inst[i];
		int open = 0;

		if (in->proc != proc || !in->is_step)
			continue;
		for (uint32_t k = 0; k < ps->nopen && !open; k++)
			open = ps->open[k] == i;
		if (!open)
			now->last_step = in;
	}
	for (int w = 0; w < 2; w++) {
		const struct rg_inst *st = w ? now->last_step : now->step;
		uint32_t no = st ? st->step_no : 0;

		for (uint32_t i = 0; st && !no && &m->inst[i] != st; i++)
			no += m->inst[i].proc == proc && m->inst[i].is_step;
		*(w ? &now->last_step_no : &now->step_no) = st && !st->step_no ? no + 1 : no;
	}
	if (now->step)
		now_name(now->step_name, sizeof now->step_name, now->step->name);
	if (now->range)
		now_name(now->range_name, sizeof now->range_name, now->range->name);
}
