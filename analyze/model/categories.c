/*
 * categories.c - what the framework's allocated memory is at the moments
 * the report names (categories.h; docs/units.md).
 *
 * How it works, after the pass (the framework model keeps every block with
 * the FW event numbers and times of its alloc and free, and the step,
 * phase and module open at its alloc):
 *
 * 1. Classify every block for its whole life. Each "categories=" note
 *    (one FW_INFO record: "parameters=", "gradients=", "optimizer_state="
 *    lines of DEV:0xADDR:BYTES entries, one per CUDA storage) names the
 *    blocks of its process and device live at the note's time (alloc <=
 *    t < free requested) whose extent holds ADDR: found by binary search
 *    in the blocks sorted by (process, device, address, alloc time). A
 *    block named by several notes keeps the first category in the order
 *    of enum cat. A block no note names is an activation when the
 *    innermost phase open at its alloc was "forward", else a temporary.
 *    So a gradient named at the step's end is a gradient from its alloc
 *    on: the split at any moment is exact, however late the note.
 * 2. The moments (each process's peak of allocated, each step's, each
 *    module's, each OOM) are sorted by (process, event number); each block
 *    adds its bytes to its category from the first moment inside its life
 *    to the first one after it (a difference array over the sorted
 *    moments), each segment its bytes to reserved the same way.
 *
 * Cost: one byte per block (its category), an index of 8 bytes per block
 * while the notes are read (only when the run has notes), and O(blocks x
 * log(moments) + moments) time for the sweep.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "model/categories.h"
#include "model/framework.h"
#include "model/ranges.h"
#include "trace/trace-read.h"

static const char *const names[CAT_N] = {
	"parameters", "gradients", "optimizer state", "activations", "temporaries",
};
static const char *const keys[CAT_N] = {
	"parameters", "gradients", "optimizer_state", "activations", "temporaries",
};

const char *cat_name(int c)
{
	return c >= 0 && c < CAT_N ? names[c] : "?";
}

const char *cat_key(int c)
{
	return c >= 0 && c < CAT_N ? keys[c] : "?";
}

/* --- 1. the notes ------------------------------------------------------- */

struct key { int proc, dev; uint64_t addr, t; };

static struct key key_of(const struct fw_model *fw, uint64_t i)
{
	const struct fw_block *b = &fw->blocks[i];

	return (struct key){ b->proc, fw->devs[b->fdev].dev, b->addr, b->t_alloc };
}

static int cmp_key(struct key x, struct key y)
{
	if (x.proc != y.proc)
		return x.proc < y.proc ? -1 : 1;
	if (x.dev != y.dev)
		return x.dev < y.dev ? -1 : 1;
	if (x.addr != y.addr)
		return x.addr < y.addr ? -1 : 1;
	return x.t < y.t ? -1 : x.t > y.t;
}

static int cmp_block(const void *x, const void *y, void *ctx)
{
	return cmp_key(key_of(ctx, *(const uint64_t *)x), key_of(ctx, *(const uint64_t *)y));
}

/* The first index of idx whose key is greater than k. */
static uint64_t upper(const struct fw_model *fw, const uint64_t *idx, uint64_t n, struct key k)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (cmp_key(key_of(fw, idx[mid]), k) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The block of (proc, dev) live at time t whose extent holds addr, or
 * UINT64_MAX. Candidates start at or below addr: at each start address
 * from addr down, the latest block allocated by t (older ones at the same
 * address ended before it began), while a block that large could still
 * reach addr.
 */
static uint64_t find(const struct fw_model *fw, const uint64_t *idx, uint64_t n, uint64_t maxsize,
		     int proc, int dev, uint64_t addr, uint64_t t)
{
	uint64_t j = upper(fw, idx, n, (struct key){ proc, dev, addr, t });

	while (j-- > 0) {
		const struct fw_block *b = &fw->blocks[idx[j]];

		if (b->proc != proc || fw->devs[b->fdev].dev != dev || b->addr + maxsize <= addr)
			break;
		if (b->t_alloc <= t && (b->t_freq == FW_NEVER || t < b->t_freq) &&
		    addr < b->addr + b->size)
			return idx[j];
		if (!b->addr)
			break;
		/* the latest block by t at the next lower start address */
		j = upper(fw, idx, n, (struct key){ proc, dev, b->addr - 1, t });
	}
	return UINT64_MAX;
}

static uint64_t num(const char **s, const char *end, int base)
{
	uint64_t v = 0;

	for (; *s < end; (*s)++) {
		int c = **s, d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ?
			c - 'a' + 10 : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			break;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	return v;
}

/* One line's entries "DEV:0xADDR:BYTES,..." of category c at time t. */
static void entries(struct cat_model *cm, struct fw_model *fw, const uint64_t *idx, uint64_t maxsize,
		    int proc, struct trace_bytes v, int c, uint64_t t)
{
	const char *s = v.p, *end = v.p + v.len;

	while (s < end) {
		const char *p0 = s;
		int dev = (int)num(&s, end, 10);
		int ok = s > p0 && s + 3 < end && s[0] == ':' && s[1] == '0' && (s[2] == 'x' || s[2] == 'X');
		uint64_t addr = 0;

		if (ok) {
			s += 3;
			p0 = s;
			addr = num(&s, end, 16);
			ok = s > p0 && s < end && *s == ':';
		}
		if (ok) {
			p0 = ++s;
			num(&s, end, 10);
			ok = s > p0 && (s == end || *s == ',');
		}
		if (!ok) {
			cm->bad++;      /* the rest of the line cannot be read */
			return;
		}
		if (s < end)
			s++;
		cm->entries++;
		uint64_t b = find(fw, idx, fw->nblocks, maxsize, proc, dev, addr, t);
		if (b == UINT64_MAX)
			cm->unmatched++;
		else if (fw->blocks[b].category > c)
			fw->blocks[b].category = (uint8_t)c;
	}
}

static int read_notes(struct analysis *a, struct cat_model *cm, struct fw_model *fw)
{
	uint64_t *idx = NULL, maxsize = 0;

	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *sp = stream_proc(a->s, i);
		struct trace_bytes tx;
		uint64_t tn;

		for (uint32_t k = 0; trace_fw_info(sp->t, k, &tx, &tn) == 0; k++) {
			size_t at = 0;
			uint64_t t = (int64_t)tn + sp->shift > 0 ? (uint64_t)((int64_t)tn + sp->shift) : 0;

			if (!trace_note_value(tx, "categories=", &at).p)
				continue;
			if (!idx) {
				if (!(idx = malloc((fw->nblocks ? fw->nblocks : 1) * sizeof *idx)))
					return -1;
				for (uint64_t b = 0; b < fw->nblocks; b++) {
					idx[b] = b;
					if (fw->blocks[b].size > maxsize)
						maxsize = fw->blocks[b].size;
				}
				qsort_r(idx, fw->nblocks, sizeof *idx, cmp_block, fw);
			}
			cm->notes++;
			for (int c = CAT_PARAMETERS; c <= CAT_OPTIMIZER; c++) {
				char key[32];
				struct trace_bytes v;

				snprintf(key, sizeof key, "%s=", keys[c]);
				at = 0;
				v = trace_note_value(tx, key, &at);
				if (!v.p)
					cm->bad_notes++;        /* a line missing: cut */
				else
					entries(cm, fw, idx, maxsize, i, v, c, t);
			}
		}
	}
	free(idx);
	return 0;
}

static void classify(struct analysis *a, struct cat_model *cm, struct fw_model *fw)
{
	const struct rg_model *m = a->ranges;

	for (uint64_t i = 0; i < fw->nblocks; i++) {
		struct fw_block *b = &fw->blocks[i];

		if (b->category == CAT_N)
			b->category = m && b->at.phase >= 0 &&
				      !strcmp(m->names[b->at.phase].name, "forward") ?
				      CAT_ACTIVATIONS : CAT_TEMPORARIES;
		cm->blocks[b->category]++;
	}
}

/* --- 2. the moments ----------------------------------------------------- */

struct moment {
	int proc;
	uint64_t seq;
	struct cat_split *out;
	int module;                 /* a module's name index, -1 */
};

static int cmp_moment(const void *x, const void *y)
{
	const struct moment *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The first moment of [lo, hi) at or after event seq. */
static size_t first_at(const struct moment *mo, size_t lo, size_t hi, uint64_t seq)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mo[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int add(struct moment **mo, size_t *n, size_t *cap, int proc, uint64_t seq,
	       struct cat_split *out, int module)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *v = realloc(*mo, c * sizeof **mo);
		if (!v)
			return -1;
		*mo = v;
		*cap = c;
	}
	(*mo)[(*n)++] = (struct moment){ proc, seq, out, module };
	return 0;
}

static int moments(struct rg_model *m, const struct fw_model *fw, struct moment **mo, size_t *n)
{
	size_t cap = 0;

	for (int i = 0; m->peaks && i < m->nprocs; i++)
		if (m->peaks[i].has_fw && add(mo, n, &cap, i, m->peaks[i].fw_seq, &m->peaks[i].fw_split, -1))
			return -1;
	for (uint32_t k = 0; m->has_fw && k < m->nsteps; k++) {
		struct rg_inst *in = &m->inst[m->steps[k]];
		if (add(mo, n, &cap, in->proc, in->fw_peak_seq, &in->split, -1))
			return -1;
	}
	for (uint32_t k = 0; m->has_fw && k < m->nnames; k++) {
		struct rg_name *e = &m->names[k];
		if (e->kind == RG_MODULE && e->has_peak &&
		    add(mo, n, &cap, e->peak_proc, e->fw_peak_seq, &e->split, (int)k))
			return -1;
	}
	for (uint32_t k = 0; k < m->nooms; k++)
		if (add(mo, n, &cap, fw->ooms[k].proc, fw->ooms[k].st.seq, &m->ooms[k].split, -1))
			return -1;
	return 0;
}

/* Adds v to [first moment at or after from, first at or after to) of
   proc's moments [lo, hi), in d (stride CAT_N + 1, column col). */
static void span(uint64_t *d, const struct moment *mo, size_t lo, size_t hi, uint64_t from,
		 uint64_t to, int col, uint64_t v)
{
	size_t a = first_at(mo, lo, hi, from), b = to == FW_NEVER ? hi : first_at(mo, lo, hi, to);

	if (a >= b)
		return;
	d[a * (CAT_N + 1) + (size_t)col] += v;
	d[b * (CAT_N + 1) + (size_t)col] -= v;
}

static int sweep(struct analysis *a, struct rg_model *m, struct fw_model *fw)
{
	struct moment *mo = NULL;
	size_t n = 0, *lo = NULL, *hi = NULL;
	uint64_t *d = NULL;
	int rc = -1;

	if (moments(m, fw, &mo, &n))
		goto out;
	if (!n) {
		rc = 0;
		goto out;
	}
	qsort(mo, n, sizeof *mo, cmp_moment);
	lo = calloc((size_t)a->nprocs, sizeof *lo);
	hi = calloc((size_t)a->nprocs, sizeof *hi);
	d = calloc((n + 1) * (CAT_N + 1), sizeof *d);
	if (!lo || !hi || !d)
		goto out;
	for (size_t k = n; k-- > 0;)
		lo[mo[k].proc] = k;
	for (size_t k = 0; k < n; k++)
		hi[mo[k].proc] = k + 1;
	for (uint64_t i = 0; i < fw->nblocks; i++) {
		const struct fw_block *b = &fw->blocks[i];
		span(d, mo, lo[b->proc], hi[b->proc], b->s_alloc, b->s_freq, b->category, b->size);
	}
	for (uint64_t i = 0; i < fw->nsegs; i++) {
		const struct fw_seg *g = &fw->segs[i];
		span(d, mo, lo[g->proc], hi[g->proc], g->s_alloc, g->s_free, CAT_N, g->size);
	}
	uint64_t run[CAT_N + 1] = { 0 };
	for (size_t k = 0; k < n; k++) {
		struct cat_split *s = mo[k].out;

		for (int c = 0; c <= CAT_N; c++)
			run[c] += d[k * (CAT_N + 1) + (size_t)c];
		s->has = 1;
		s->allocated = 0;
		for (int c = 0; c < CAT_N; c++) {
			s->bytes[c] = run[c];
			s->allocated += run[c];
		}
		s->reserved = run[CAT_N];
	}
	/* a module's own: its live blocks allocated inside it or inside a
	   module below it */
	for (uint64_t i = 0; i < fw->nblocks; i++) {
		const struct fw_block *b = &fw->blocks[i];

		for (int k = b->at.module; k >= 0; k = m->names[k].parent) {
			struct rg_name *e = &m->names[k];

			if (e->has_peak && m->has_fw && e->peak_proc == b->proc && b->s_alloc <= e->fw_peak_seq &&
			    e->fw_peak_seq < b->s_freq)
				e->split.own += b->size;
		}
	}
	rc = 0;
out:
	free(mo);
	free(lo);
	free(hi);
	free(d);
	return rc;
}

int cat_end(struct analysis *a)
{
	struct fw_model *fw = a->fw;
	struct rg_model *m = a->ranges;

	if (!fw)
		return 0;
	struct cat_model tmp = { 0 }, *cm = m ? &m->cats : &tmp;
	for (uint64_t i = 0; i < fw->nblocks; i++)
		fw->blocks[i].category = CAT_N;
	if (read_notes(a, cm, fw))
		return -1;
	classify(a, cm, fw);
	return m ? sweep(a, m, fw) : 0;
}
