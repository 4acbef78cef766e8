/*
 * ranges.c - the program's units of time (ranges.h; docs/units.md defines
 * every figure). During the pass each process keeps its strings (id to
 * text, from its STRING records) and the instances open now, by value; a
 * change of the process's reserved raises the peak of every open instance
 * (O(open) per change, at most RG_MAX_OPEN of them) and, at a new high of
 * the process, notes the range, step, phase and module it happened in;
 * the framework's allocated the same. A pop closes the innermost open
 * push of its thread and domain, an end the latest open start of its id
 * (on any thread).
 *
 * Bounded memory: each distinct (domain, name) is a name, found by its
 * text in the one hash table (htab.h) and given its range (domain and
 * name, digit runs read alike) when first seen; an instance that closes is folded into its
 * range (count, time, and a copy of it when it is the range's highest:
 * the first instance in open order among equals, as a pass over every
 * instance would pick) and forgotten, except steps and tests, which are
 * kept (a slot in inst[] from their start, so what opens inside them can
 * name its step). So memory is O(open + names + ranges + steps + tests),
 * whatever the number of instances.
 *
 * The log (ranges_keep_log(), for the views that draw every instance): a
 * closed instance is also copied, without strings, into slices[] while
 * RG_MAX_SLICES last, with the range of the push it was nested in (to
 * tell the outer ones); marks into mark[] while RG_MAX_MARKS last. Added
 * processes (memtrace top: a worker that starts after the first range
 * record) get their state when their first record comes (add_procs).
 *
 * At the end the step range (the step-named range with most instances)
 * gives the growth per step: the reserved at each step's end, and the
 * site whose live bytes grew most between the end of the first step and
 * the end of the last one followed (site live bytes are copied at each
 * step's end while RG_SNAP_BUDGET copies last).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "model/htab.h"
#include "model/ranges.h"

/* An instance open now; slot: its place in inst[] when kept, else -1;
   parent_group: the range of the push it is nested in (the log's), -1. */
struct open {
	struct rg_inst in;
	int slot;
	int parent_group;
};

/* ranges_keep_log(): read by each model when it is made. */
static int keep_log;

void ranges_keep_log(int on)
{
	keep_log = on;
}

struct pstate {
	char **str;                     /* [id]: text, NULL unknown */
	uint32_t nstr;
	struct open *open;              /* oldest first */
	uint32_t nopen, capopen;
	uint64_t reserved, fw;          /* now */
	uint64_t max, fw_max;
	int has_max, has_fw_max;
};

/* A range during the pass. */
struct gpriv {
	char *key;                      /* "domain\x1fname", digit runs as N */
	uint32_t first;                 /* its first name */
	int mixed;                      /* another name joined */
	int own_res, own_fw;            /* its slots for copies, -1 */
};

struct priv {
	struct pstate *ps;
	uint32_t tid;                   /* thread of the event being applied */
	struct htab name_tab, group_tab;    /* of htab_ref: names[], gp[] by key */
	struct gpriv *gp;
	char *key;                      /* scratch for a name's key */
	size_t keycap;
	uint64_t *snap_first, *snap_last;   /* site live bytes at step ends */
	uint32_t nsnap;                 /* sites copied */
	uint64_t budget;
	int snap_from, snap_to;         /* step instance indexes */
	int first_step_done;
};

#define P(m) ((struct priv *)(m)->priv)

/* The framework's allocated of process proc now, over its devices. */
static uint64_t fw_sum(const struct analysis *a, int proc)
{
	uint64_t sum = 0;

	for (int i = 0; a->fw && i < a->fw->ndevs; i++)
		if (a->fw->devs[i].proc == proc)
			sum += a->fw->devs[i].allocated;
	return sum;
}

/* Process i's peak before any: nowhere (step, phase, module, range -1). */
static void peak_none(struct rg_peak *pk, int i)
{
	memset(pk, 0, sizeof *pk);
	pk->proc = i;
	pk->group = pk->nm = pk->fw_group = pk->fw_nm = -1;
	pk->at.step = pk->at.phase = pk->at.module = -1;
	pk->fw_at = pk->at;
}

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
	p->name_tab = p->group_tab = HTAB_INIT(struct htab_ref);
	m->peak_proc = -1;
	m->step_group = -1;
	m->growth_site = -1;
	m->other_thread_nm = m->left_open_nm = -1;
	m->logged = keep_log;
	p->snap_from = p->snap_to = -1;
	p->budget = RG_SNAP_BUDGET;
	a->ranges = m;
	/* the processes' reserved and allocated so far (ranges_mem() and
	   ranges_fw() follow them from now) */
	for (int i = 0; i < a->nprocs; i++) {
		p->ps[i].reserved = a->procs[i].reserved_all;
		p->ps[i].fw = fw_sum(a, i);
	}
	return m;
}

/* The processes added since (memtrace top: a job's process that started
   after its first range record): their state from their reserved and
   allocated now, their peaks none as peaks_get makes them; -1 out of
   memory. */
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
		for (int i = m->nprocs; i < n; i++)
			peak_none(&pk[i], i);
	}
	for (int i = m->nprocs; i < n; i++) {
		ps[i].reserved = a->procs[i].reserved_all;
		ps[i].fw = fw_sum(a, i);
	}
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

/* --- names and ranges, by their text ------------------------------------ */

static uint64_t str_hash(const char *s)
{
	return hash_bytes(s, strlen(s), 0);
}

typedef const char *(*key_fn)(const struct rg_model *m, uint32_t i);

static const char *name_key(const struct rg_model *m, uint32_t i)
{
	return m->names[i].key;
}

static const char *group_key_of(const struct rg_model *m, uint32_t i)
{
	return P(m)->gp[i].key;
}

/* The index whose text (of) is key, in t (hash h of key); -1 when none. */
static int stab_get(const struct rg_model *m, const struct htab *t, const char *key, uint64_t h,
		    key_fn of)
{
	struct htab_probe pr;

	for (const struct htab_ref *r = htab_find(t, h, &pr); r; r = htab_more(t, &pr))
		if (!strcmp(of(m, r->i), key))
			return (int)r->i;
	return -1;
}

/* The range key of a name's key: digit runs as "N". */
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

static int group_of(struct rg_model *m, uint32_t nm, int origin)
{
	struct priv *p = P(m);
	char *k = group_key(m->names[nm].key);

	if (!k)
		return -1;
	uint64_t h = str_hash(k);
	int found = stab_get(m, &p->group_tab, k, h, group_key_of);
	if (found >= 0) {
		free(k);
		struct gpriv *g = &p->gp[found];
		if (g->first != nm)
			g->mixed = 1;
		return found;
	}
	if (m->ngroups == m->cap_groups) {
		uint32_t c = m->cap_groups ? m->cap_groups * 2 : 16;
		void *v = realloc(m->groups, c * sizeof *m->groups), *w;
		if (v)
			m->groups = v;
		if (!v || !(w = realloc(p->gp, c * sizeof *p->gp))) {
			free(k);
			return -1;
		}
		p->gp = w;
		m->cap_groups = c;
	}
	struct htab_ref *r = htab_add(&p->group_tab, h);
	if (!r) {
		free(k);
		return -1;
	}
	uint32_t gi = m->ngroups++;
	r->i = gi;
	struct rg_group *g = &m->groups[gi];
	memset(g, 0, sizeof *g);
	g->origin = origin;
	g->is_step = m->names[nm].is_step;
	g->peak_inst = g->fw_peak_inst = -1;
	p->gp[gi] = (struct gpriv){ k, nm, 0, -1, -1 };
	return (int)gi;
}

/* The name of (domain, message) string ids of a process, made when first
   seen; -1 when out of memory. */
static int name_of(struct rg_model *m, struct pstate *ps, uint32_t dom, uint32_t msg, int origin)
{
	struct priv *p = P(m);
	const char *d = str_of(ps, dom), *n = str_of(ps, msg);
	size_t dl = d ? strlen(d) : 0, nl = n ? strlen(n) : 0;

	if (dl + nl + 2 > p->keycap) {
		char *k = realloc(p->key, dl + nl + 64);
		if (!k)
			return -1;
		p->key = k;
		p->keycap = dl + nl + 64;
	}
	memcpy(p->key, d ? d : "", dl);
	p->key[dl] = 0x1f;
	memcpy(p->key + dl + 1, n ? n : "", nl);
	p->key[dl + nl + 1] = 0;
	uint64_t h = str_hash(p->key);
	int found = stab_get(m, &p->name_tab, p->key, h, name_key);
	if (found >= 0)
		return found;
	if (m->nnames == m->cap_names) {
		uint32_t c = m->cap_names ? m->cap_names * 2 : 64;
		void *v = realloc(m->names, c * sizeof *m->names);
		if (!v)
			return -1;
		m->names = v;
		m->cap_names = c;
	}
	struct rg_name *e = &m->names[m->nnames];
	struct htab_ref *r;
	memset(e, 0, sizeof *e);
	if (!(e->key = strdup(p->key)) || (dl && !(e->domain = strndup(p->key, dl))) ||
	    !(r = htab_add(&p->name_tab, h))) {
		free(e->key);
		free(e->domain);
		return -1;
	}
	e->name = e->key + dl + 1;
	e->is_step = (uint8_t)rg_is_step_name(e->name, &e->step_no);
	e->kind = !e->domain ? 0 : !strcmp(e->domain, "torch") ? RG_PHASE :
		  !strcmp(e->domain, "torch.module") ? RG_MODULE : 0;
	e->peak_step = -1;
	for (int k = 0; k < RG_NBEST; k++)
		e->best[k] = e->own[k] = -1;
	m->has_modules |= e->kind == RG_MODULE;
	uint32_t nm = m->nnames++;
	r->i = nm;
	int g = group_of(m, nm, origin);
	if (g < 0)
		return -1;
	e->group = (uint32_t)g;
	return (int)nm;
}

/* --- instances ---------------------------------------------------------- */

/* A new slot in inst[]; -1 when out of memory. */
static int kept_new(struct rg_model *m)
{
	if (m->ninst == m->cap) {
		uint32_t c = m->cap ? m->cap * 2 : 64;
		void *v = realloc(m->inst, c * sizeof *m->inst);
		if (!v)
			return -1;
		m->inst = v;
		m->cap = c;
	}
	memset(&m->inst[m->ninst], 0, sizeof *m->inst);
	return (int)m->ninst++;
}

static int dom_eq(const char *x, const char *y)
{
	return !strcmp(x ? x : "", y ? y : "");
}

static int open_inst(struct analysis *a, struct rg_model *m, const struct srec *r,
		     const struct mt_range *g, uint64_t id)
{
	struct pstate *ps = &P(m)->ps[r->proc];

	if (ps->nopen >= RG_MAX_OPEN) {
		m->not_followed++;
		return 0;
	}
	if (ps->nopen == ps->capopen) {
		uint32_t c = ps->capopen ? ps->capopen * 2 : 16;
		void *v = realloc(ps->open, c * sizeof *ps->open);
		if (!v)
			return -1;
		ps->open = v;
		ps->capopen = c;
	}
	int nm = name_of(m, ps, g->domain, g->message, g->h.b);
	if (nm < 0)
		return -1;
	struct open *o = &ps->open[ps->nopen];
	struct rg_inst *in = &o->in;
	const struct rg_name *e = &m->names[nm];
	memset(o, 0, sizeof *o);
	in->proc = r->proc;
	in->tid = in->end_tid = r->rec.tid;
	in->nm = (uint32_t)nm;
	in->name = e->name;
	in->group = e->group;
	in->op = g->h.a;
	in->origin = (uint8_t)g->h.b;
	in->id = id;
	in->seq = m->instances++;
	in->t0 = in->t1 = in->res_peak_t = in->fw_peak_t = r->t;
	in->res0 = in->res_peak = in->res1 = ps->reserved;
	in->fw0 = in->fw_peak = in->fw1 = ps->fw;
	in->fw_peak_seq = a->fw ? a->fw->events : 0;
	in->is_step = e->is_step;
	in->step_no = e->step_no;
	in->step = o->slot = o->parent_group = -1;
	/* nesting, for the log: the innermost open push of its thread and
	   domain */
	for (uint32_t k = ps->nopen; m->logged && in->op == MT_RANGE_PUSH && k-- > 0;) {
		const struct rg_inst *p = &ps->open[k].in;

		if (p->op == MT_RANGE_PUSH && p->tid == in->tid &&
		    dom_eq(m->names[p->nm].domain, e->domain)) {
			o->parent_group = (int)p->group;
			break;
		}
	}
	if (in->is_step || in->origin == MT_ORIGIN_PYTEST) {
		if ((o->slot = kept_new(m)) < 0)
			return -1;
	}
	if (in->is_step) {
		in->step = o->slot;
	} else {
		for (uint32_t k = ps->nopen; k-- > 0;)
			if (ps->open[k].in.is_step) {
				in->step = ps->open[k].slot;
				break;
			}
	}
	ps->nopen++;
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

/* The slot that shows instance o as a range's highest: its own when kept,
   else the range's copy slot *own (made when first needed). */
static int show_slot(struct rg_model *m, const struct open *o, int *own)
{
	if (o->slot >= 0)
		return o->slot;
	if (*own < 0 && (*own = kept_new(m)) < 0)
		return -1;
	m->inst[*own] = o->in;
	return *own;
}

/* An instance's figure that rg_name.best[k] is the highest of. */
uint64_t rg_best_value(const struct rg_inst *in, int k)
{
	switch (k) {
	case RG_BEST_RES:
		return in->res_peak;
	case RG_BEST_FW:
		return in->fw_peak;
	case RG_BEST_RES_KEPT:
		return in->res1 > in->res0 ? in->res1 - in->res0 : 0;
	default:
		return in->fw1 > in->fw0 ? in->fw1 - in->fw0 : 0;
	}
}

/* The log's copy of a closed (or left open) instance, while there is
   room. */
static int log_slice(struct rg_model *m, const struct open *o)
{
	const struct rg_inst *in = &o->in;

	if (!m->logged || m->nslices >= RG_MAX_SLICES)
		return 0;
	if (m->nslices == m->cap_slices) {
		uint32_t c = m->cap_slices ? 2 * m->cap_slices : 256;
		void *v = realloc(m->slices, (c < RG_MAX_SLICES ? c : RG_MAX_SLICES) * sizeof *m->slices);
		if (!v)
			return -1;
		m->slices = v;
		m->cap_slices = c < RG_MAX_SLICES ? c : RG_MAX_SLICES;
	}
	m->slices[m->nslices++] = (struct rg_slice){
		.t0 = in->t0, .t1 = in->t1, .res0 = in->res0, .res_peak = in->res_peak,
		.res1 = in->res1, .fw0 = in->fw0, .fw_peak = in->fw_peak, .fw1 = in->fw1,
		.proc = in->proc, .tid = in->tid, .end_tid = in->end_tid, .nm = in->nm,
		.group = in->group, .step = in->step, .parent_group = o->parent_group,
		.op = in->op, .origin = in->origin, .open = in->open,
	};
	return 0;
}

/* Folds a closed (or left open) instance into its range and name. */
static int fold(struct rg_model *m, const struct open *o)
{
	const struct rg_inst *in = &o->in;
	struct rg_group *g = &m->groups[in->group];
	struct gpriv *gp = &P(m)->gp[in->group];
	struct rg_name *e = &m->names[in->nm];

	g->count++;
	g->open += in->open;
	g->total_ns += in->t1 - in->t0;
	if (log_slice(m, o))
		return -1;
	if (o->slot >= 0)
		m->inst[o->slot] = *in;
	if (g->peak_inst < 0 || in->res_peak > m->inst[g->peak_inst].res_peak ||
	    (in->res_peak == m->inst[g->peak_inst].res_peak && in->seq < m->inst[g->peak_inst].seq))
		if ((g->peak_inst = show_slot(m, o, &gp->own_res)) < 0)
			return -1;
	if (g->fw_peak_inst < 0 || in->fw_peak > m->inst[g->fw_peak_inst].fw_peak ||
	    (in->fw_peak == m->inst[g->fw_peak_inst].fw_peak && in->seq < m->inst[g->fw_peak_inst].seq))
		if ((g->fw_peak_inst = show_slot(m, o, &gp->own_fw)) < 0)
			return -1;
	for (int k = 0; k < RG_NBEST; k++) {
		uint64_t v = rg_best_value(in, k), w;

		if (e->best[k] >= 0 && ((w = rg_best_value(&m->inst[e->best[k]], k)) > v ||
					(w == v && m->inst[e->best[k]].seq < in->seq)))
			continue;
		if ((e->best[k] = show_slot(m, o, &e->own[k])) < 0)
			return -1;
	}
	if (!e->has_peak || in->res_peak > e->res_peak)
		e->res_peak = in->res_peak;
	if (!e->has_peak || in->fw_peak > e->fw_peak) {
		e->has_peak = 1;
		e->peak_proc = in->proc;
		e->fw_peak = in->fw_peak;
		e->fw_peak_t = in->fw_peak_t;
		e->fw_peak_seq = in->fw_peak_seq;
		e->peak_step = in->step;
	}
	return 0;
}

static int close_inst(struct analysis *a, struct rg_model *m, struct pstate *ps, uint32_t k,
		      const struct srec *r)
{
	struct open o = ps->open[k];
	struct rg_inst *in = &o.in;

	in->t1 = r->t;
	in->end_tid = r->rec.tid;
	in->res1 = ps->reserved;
	in->fw1 = ps->fw;
	memmove(ps->open + k, ps->open + k + 1, (ps->nopen - k - 1) * sizeof *ps->open);
	ps->nopen--;
	if (in->op == MT_RANGE_START && in->end_tid != in->tid && !m->ends_other_thread++)
		m->other_thread_nm = (int)in->nm;
	if (in->is_step)
		snap_sites(a, m, o.slot);
	return fold(m, &o);
}

/* The log's copy of a mark, while there is room. */
static int keep_mark(struct rg_model *m, struct pstate *ps, const struct srec *r,
		     const struct mt_range *g)
{
	if (!m->logged || m->nmark >= RG_MAX_MARKS)
		return 0;
	if (!(m->nmark & (m->nmark - 1))) {     /* 0, 1, 2, 4...: full */
		void *v = realloc(m->mark, (m->nmark ? 2 * m->nmark : 1) * sizeof *m->mark);
		if (!v)
			return -1;
		m->mark = v;
	}
	const char *d = str_of(ps, g->domain), *n = str_of(ps, g->message);
	struct rg_mark *k = &m->mark[m->nmark];

	if (!n)
		n = "";
	k->proc = r->proc;
	k->tid = r->rec.tid;
	k->t = r->t;
	if (d && *d ? asprintf(&k->name, "%s:%s", d, n) < 0 : !(k->name = strdup(n)))
		return -1;
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
	case MT_RANGE_POP: {
		const char *d = str_of(ps, g->domain);

		for (uint32_t k = ps->nopen; k-- > 0;) {
			const struct rg_inst *o = &ps->open[k].in;

			if (o->op == MT_RANGE_PUSH && o->tid == r->rec.tid &&
			    dom_eq(m->names[o->nm].domain, d))
				return close_inst(a, m, ps, k, r);
		}
		if (!m->pops_unmatched++)
			m->pop_tid = r->rec.tid;
		return 0;
	}
	case MT_RANGE_END:
		for (uint32_t k = ps->nopen; k-- > 0;)
			if (ps->open[k].in.op == MT_RANGE_START && ps->open[k].in.id == id)
				return close_inst(a, m, ps, k, r);
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

/* The innermost open instance of kind (0: any) on thread tid, else the
   latest opened in the process; -1 none. */
static int innermost(const struct rg_model *m, const struct pstate *ps, uint32_t tid, int kind)
{
	int any = -1;

	for (uint32_t k = ps->nopen; k-- > 0;) {
		const struct rg_inst *in = &ps->open[k].in;

		if (kind && (m->names[in->nm].kind != kind || in->op != MT_RANGE_PUSH))
			continue;
		if (in->tid == tid)
			return (int)k;
		if (any < 0)
			any = (int)k;
	}
	return any;
}

void ranges_at(const struct analysis *a, int proc, uint32_t tid, struct rg_at *at)
{
	const struct rg_model *m = a->ranges;

	at->step = at->phase = at->module = -1;
	if (!m || proc < 0 || proc >= m->nprocs)
		return;
	const struct pstate *ps = &P(m)->ps[proc];
	for (uint32_t k = ps->nopen; k-- > 0;)
		if (ps->open[k].in.is_step) {
			at->step = ps->open[k].slot;
			break;
		}
	int k = innermost(m, ps, tid, RG_PHASE);
	if (k >= 0)
		at->phase = (int)ps->open[k].in.nm;
	if ((k = innermost(m, ps, tid, RG_MODULE)) >= 0)
		at->module = (int)ps->open[k].in.nm;
}

/* Where a new high of process proc happened: the innermost open
   instance's range and name, the step, phase and module. */
static void note_where(const struct analysis *a, const struct rg_model *m, int proc, int *group,
		       int *nm, struct rg_at *at)
{
	const struct pstate *ps = &P(m)->ps[proc];
	int k = innermost(m, ps, P(m)->tid, 0);

	*group = k >= 0 ? (int)ps->open[k].in.group : -1;
	*nm = k >= 0 ? (int)ps->open[k].in.nm : -1;
	ranges_at(a, proc, P(m)->tid, at);
}

/* The processes' peaks, made at the first change: none where yet. */
static int peaks_get(struct rg_model *m)
{
	if (m->peaks)
		return 0;
	if (!(m->peaks = calloc((size_t)m->nprocs, sizeof *m->peaks)))
		return -1;
	for (int i = 0; i < m->nprocs; i++)
		peak_none(&m->peaks[i], i);
	return 0;
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
		struct rg_inst *in = &ps->open[k].in;
		if (reserved > in->res_peak) {
			in->res_peak = reserved;
			in->res_peak_t = t;
		}
	}
	if (peaks_get(m))
		return;
	if (!ps->has_max || reserved > ps->max) {
		struct rg_peak *pk = &m->peaks[proc];

		ps->max = reserved;
		ps->has_max = 1;
		pk->proc = proc;
		pk->reserved = reserved;
		pk->t = t;
		note_where(a, m, proc, &pk->group, &pk->nm, &pk->at);
	}
}

void ranges_fw(struct analysis *a, int proc, uint64_t t)
{
	struct rg_model *m = a->ranges;

	if (m && proc >= m->nprocs && add_procs(a, m))
		return;
	if (!m || !a->fw || proc < 0 || proc >= m->nprocs)
		return;
	uint64_t sum = fw_sum(a, proc);
	struct pstate *ps = &P(m)->ps[proc];
	m->has_fw = 1;
	ps->fw = sum;
	for (uint32_t k = 0; k < ps->nopen; k++) {
		struct rg_inst *in = &ps->open[k].in;
		if (sum > in->fw_peak) {
			in->fw_peak = sum;
			in->fw_peak_t = t;
			in->fw_peak_seq = a->fw->events;
		}
	}
	if (peaks_get(m) || (ps->has_fw_max && sum <= ps->fw_max))
		return;
	struct rg_peak *pk = &m->peaks[proc];
	ps->fw_max = sum;
	ps->has_fw_max = 1;
	pk->proc = proc;
	pk->has_fw = 1;
	pk->fw = sum;
	pk->fw_t = t;
	pk->fw_seq = a->fw->events;
	note_where(a, m, proc, &pk->fw_group, &pk->fw_nm, &pk->fw_at);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* A range's name: its instances' own when they agree, else its key. */
static int name_groups(struct rg_model *m)
{
	for (uint32_t gi = 0; gi < m->ngroups; gi++) {
		struct rg_group *g = &m->groups[gi];
		const struct gpriv *gp = &P(m)->gp[gi];
		const char *use = gp->mixed ? gp->key : m->names[gp->first].key;
		const char *sep = strchr(use, 0x1f);

		g->domain = sep != use ? strndup(use, (size_t)(sep - use)) : NULL;
		g->name = strdup(sep + 1);
		if ((sep != use && !g->domain) || !g->name)
			return -1;
		if (!m->has_fw)
			g->fw_peak_inst = -1;
	}
	return 0;
}

/* Each module's parent: its path cut at its last '.', as far as a module
   of that name is found. */
static void parents(struct rg_model *m)
{
	struct priv *p = P(m);

	for (uint32_t i = 0; i < m->nnames; i++) {
		struct rg_name *e = &m->names[i];

		e->parent = -1;
		if (e->kind != RG_MODULE)
			continue;
		strcpy(p->key, e->key);         /* keycap holds every key */
		for (char *dot; e->parent < 0 && (dot = strrchr(p->key, '.')) &&
		     dot > p->key + strlen(e->domain) + 1;) {
			*dot = 0;
			e->parent = stab_get(m, &p->name_tab, p->key, str_hash(p->key), name_key);
		}
	}
}

/* A step slot of another step-named range is no step of the run. */
static int run_step(const struct rg_model *m, int step)
{
	return step >= 0 && (int)m->inst[step].group == m->step_group ? step : -1;
}

static int steps(struct analysis *a, struct rg_model *m)
{
	struct priv *p = P(m);

	for (uint32_t gi = 0; gi < m->ngroups; gi++)
		if (m->groups[gi].is_step &&
		    (m->step_group < 0 || m->groups[gi].count > m->groups[m->step_group].count))
			m->step_group = (int)gi;
	for (uint32_t i = 0; i < m->ninst; i++)
		m->inst[i].step = run_step(m, m->inst[i].step);
	for (int i = 0; m->peaks && i < m->nprocs; i++) {
		m->peaks[i].at.step = run_step(m, m->peaks[i].at.step);
		m->peaks[i].fw_at.step = run_step(m, m->peaks[i].fw_at.step);
	}
	for (uint32_t i = 0; i < m->nnames; i++)
		m->names[i].peak_step = run_step(m, m->names[i].peak_step);
	for (uint32_t i = 0; i < m->nslices; i++)
		m->slices[i].step = run_step(m, m->slices[i].step);
	if (a->fw) {
		for (uint64_t i = 0; i < a->fw->nblocks; i++)
			a->fw->blocks[i].at.step = run_step(m, a->fw->blocks[i].at.step);
		for (uint32_t i = 0; i < a->fw->nooms; i++)
			a->fw->ooms[i].at.step = run_step(m, a->fw->ooms[i].at.step);
	}
	if (m->step_group < 0)
		return 0;
	m->nsteps = m->groups[m->step_group].count;
	m->steps = malloc(m->nsteps * sizeof *m->steps);
	if (!m->steps)
		return -1;
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->ninst && n < m->nsteps; i++)
		if ((int)m->inst[i].group == m->step_group && m->inst[i].is_step) {
			m->steps[n] = i;
			if (!m->inst[i].step_no)
				m->inst[i].step_no = n + 1;
			n++;
		}
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
	if (p->snap_first && p->snap_last && p->snap_from >= 0 && p->snap_to >= 0 &&
	    m->inst[p->snap_to].seq > m->inst[p->snap_from].seq &&
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
			struct rg_inst *in = &ps->open[k].in;
			in->open = 1;
			in->t1 = a->procs[i].end_time > in->t0 ? a->procs[i].end_time : in->t0;
			in->res1 = ps->reserved;
			in->fw1 = ps->fw;
			if (!m->left_open++)
				m->left_open_nm = (int)in->nm;
			if (fold(m, &ps->open[k]))
				return -1;
		}
		ps->nopen = 0;
	}
	if (name_groups(m) || steps(a, m))
		return -1;
	parents(m);
	for (int i = 0; m->peaks && i < m->nprocs; i++)
		if (m->peaks[i].reserved &&
		    (m->peak_proc < 0 || m->peaks[i].reserved > m->peaks[m->peak_proc].reserved))
			m->peak_proc = i;
	if (a->fw && a->fw->nooms) {
		if (!(m->ooms = calloc(a->fw->nooms, sizeof *m->ooms)))
			return -1;
		m->nooms = a->fw->nooms;
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
		for (uint32_t i = 0; i < m->ngroups; i++)
			free(p->gp[i].key);
		free(p->gp);
		free(p->ps);
		htab_free(&p->name_tab);
		htab_free(&p->group_tab);
		free(p->key);
		free(p->snap_first);
		free(p->snap_last);
		free(p);
	}
	for (uint32_t i = 0; i < m->nnames; i++) {
		free(m->names[i].key);
		free(m->names[i].domain);
	}
	for (uint32_t i = 0; i < m->ngroups; i++) {
		free(m->groups[i].domain);
		free(m->groups[i].name);
	}
	for (uint32_t i = 0; i < m->nmark; i++)
		free(m->mark[i].name);
	free(m->mark);
	free(m->slices);
	free(m->names);
	free(m->inst);
	free(m->groups);
	free(m->peaks);
	free(m->ooms);
	free(m->steps);
	free(m);
}

/* --- during the pass: where a process is now (ranges.h) ------------------ */

/* "domain:name" of name nm ("name" in the default domain) into buf. */
static void now_name(char *buf, size_t len, const struct rg_name *e)
{
	if (e->domain)
		snprintf(buf, len, "%s:%s", e->domain, e->name);
	else
		snprintf(buf, len, "%s", e->name);
}

/* The number of step instance in (kept at slot) of process proc: from its
   name, else its place among the process's step instances kept before. */
static uint32_t now_step_no(const struct rg_model *m, int proc, const struct rg_inst *in, int slot)
{
	uint32_t no = 1;

	if (in->step_no)
		return in->step_no;
	for (int i = 0; i < slot; i++)
		no += m->inst[i].proc == proc && m->inst[i].is_step;
	return no;
}

void ranges_now(const struct analysis *a, int proc, struct rg_now *now)
{
	const struct rg_model *m = a->ranges;
	int step_slot = -1;

	memset(now, 0, sizeof *now);
	if (!m || proc < 0 || proc >= m->nprocs || !m->priv)
		return;
	const struct pstate *ps = &P(m)->ps[proc];
	for (uint32_t k = ps->nopen; k-- > 0;) {
		const struct open *o = &ps->open[k];

		if (o->in.is_step && !now->step) {
			now->step = &o->in;
			step_slot = o->slot;
		} else if (!o->in.is_step && !now->range) {
			now->range = &o->in;
		}
	}
	/* the last step closed: the latest kept step of the process not open
	   (an open one's slot is filled when it closes) */
	for (uint32_t i = m->ninst; i-- > 0 && !now->last_step;) {
		const struct rg_inst *in = &m->inst[i];
		int open = 0;

		if (in->proc != proc || !in->is_step)
			continue;
		for (uint32_t k = 0; k < ps->nopen && !open; k++)
			open = ps->open[k].slot == (int)i;
		if (!open) {
			now->last_step = in;
			now->last_step_no = now_step_no(m, proc, in, (int)i);
		}
	}
	if (now->step) {
		now->step_no = now_step_no(m, proc, now->step, step_slot);
		now_name(now->step_name, sizeof now->step_name, &m->names[now->step->nm]);
	}
	if (now->range)
		now_name(now->range_name, sizeof now->range_name, &m->names[now->range->nm]);
}
