/*
 * export-torch.c - the run as a pickle in the layout of PyTorch's
 * torch.cuda.memory._snapshot() (docs/export.md; checked against
 * torch/cuda/memory.py and torch/cuda/_memory_viz.py, pytorch/pytorch
 * 0044eb6704e6), so that memory_viz opens a memtrace trace:
 *
 *   {"segments": [{"device", "address", "total_size", "allocated_size",
 *                  "active_size", "requested_size", "stream",
 *                  "segment_type", "segment_pool_id", "is_expandable",
 *                  "frames", "blocks": [{"address", "size",
 *                  "requested_size", "state", "frames"}]}],
 *    "device_traces": [[{"action", "addr", "size", "stream", "time_us",
 *                        "frames"}, ...] per device index],
 *    "allocator_settings": {...}}
 *
 * With framework records (a->fw), the framework's own segments and blocks
 * (model/framework.h); without, each CUDA-level allocation the analysis
 * pass collected (views/plot.h) is a segment holding one block. The state
 * is that of the moment of --at (views/export-at.c), and each device's
 * trace stops there, as a _snapshot() taken then.
 *
 * The pickle is protocol 4 (no frame, no memo), written here: dicts, lists, tuples, ints,
 * strings, booleans and None are all a snapshot holds, and each is a few
 * bytes of opcode. Strings are UTF-8; a byte that is not valid UTF-8 is the
 * code point of the same value (as the report's JSON writes \u00XX).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "views/export.h"
#include "views/utf8.h"

/* --- the pickle writer --------------------------------------------------- */

static void pk_int(FILE *f, int64_t v)
{
	unsigned char b[9];
	int n = 0;

	if (v >= INT32_MIN && v <= INT32_MAX) {
		uint32_t u = (uint32_t)(int32_t)v;

		fputc('J', f);                  /* BININT */
		for (int i = 0; i < 4; i++)
			fputc((int)(u >> (8 * i) & 0xff), f);
		return;
	}
	/* LONG1: little-endian two's complement, as few bytes as hold it */
	for (uint64_t u = (uint64_t)v; n < 8; n++, u >>= 8)
		b[n] = (unsigned char)(u & 0xff);
	while (n > 1 && ((b[n - 1] == 0 && !(b[n - 2] & 0x80)) ||
			 (b[n - 1] == 0xff && (b[n - 2] & 0x80))))
		n--;
	fputc(0x8a, f);
	fputc(n, f);
	fwrite(b, 1, (size_t)n, f);
}

/* An unsigned value past INT64_MAX (a 64-bit address) needs a ninth byte. */
static void pk_u64(FILE *f, uint64_t v)
{
	if (v <= INT64_MAX) {
		pk_int(f, (int64_t)v);
		return;
	}
	fputc(0x8a, f);
	fputc(9, f);
	for (int i = 0; i < 8; i++)
		fputc((int)(v >> (8 * i) & 0xff), f);
	fputc(0, f);
}

static void pk_str(FILE *f, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		const unsigned char *u = (const unsigned char *)s + i;
		size_t k = *u >= 0x80 ? utf8_len(u, len - i) : 1;

		n += k ? k : 2;
		i += k ? k : 1;
	}
	fputc('X', f);                          /* BINUNICODE */
	for (int i = 0; i < 4; i++)
		fputc((int)(n >> (8 * i) & 0xff), f);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t k = c >= 0x80 ? utf8_len((const unsigned char *)s + i, len - i) : 1;

		if (k) {
			fwrite(s + i, 1, k, f);
			i += k;
		} else {
			fputc(0xc0 | c >> 6, f);
			fputc(0x80 | (c & 0x3f), f);
			i++;
		}
	}
}

static void pk_cstr(FILE *f, const char *s)
{
	pk_str(f, s, strlen(s));
}

static void pk_key(FILE *f, const char *k)
{
	pk_cstr(f, k);
}

static void pk_bool(FILE *f, int v)
{
	fputc(v ? 0x88 : 0x89, f);
}

/* dict: '}' '(' key value ... 'u'; list: ']' '(' ... 'e' */
static void pk_dict(FILE *f)
{
	fputs("}(", f);
}

static void pk_list(FILE *f)
{
	fputs("](", f);
}

static void pk_end_dict(FILE *f)
{
	fputc('u', f);
}

static void pk_end_list(FILE *f)
{
	fputc('e', f);
}

/* --- frames --------------------------------------------------------------- */

/* [{"filename", "line", "name"}], innermost first as PyTorch's */
static void native_frames(FILE *f, const struct sym_stack *st)
{
	char b[1024];

	pk_list(f);
	for (int i = 0; st && i < st->nframes; i++) {
		const struct sym_frame *fr = &st->frames[i];

		pk_dict(f);
		pk_key(f, "filename");
		pk_cstr(f, fr->file ? fr->file : fr->module);
		pk_key(f, "line");
		pk_int(f, fr->line);
		pk_key(f, "name");
		if (fr->function) {
			pk_cstr(f, fr->function);
		} else {
			int n = snprintf(b, sizeof(b), "%s+0x%" PRIx64, fr->module, fr->offset);

			pk_str(f, b, n < 0 ? 0 : (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
		}
		pk_end_dict(f);
	}
	pk_end_list(f);
}

static void fw_frames(FILE *f, const struct report *r, int proc, uint32_t stack)
{
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;

	if (stack)
		nf = trace_fw_stack_frames(stream_proc(r->a->s, proc)->t, stack, fr, 64);
	pk_list(f);
	for (uint32_t i = 0; i < nf && i < 64; i++) {
		pk_dict(f);
		pk_key(f, "filename");
		pk_str(f, fr[i].file, fr[i].file_len);
		pk_key(f, "line");
		pk_int(f, fr[i].line);
		pk_key(f, "name");
		pk_str(f, fr[i].function, fr[i].function_len);
		pk_end_dict(f);
	}
	pk_end_list(f);
}

/* --- the snapshot --------------------------------------------------------- */

/* A trace entry: the caller writes "frames" and closes it. */
static void entry_head(FILE *f, const char *action, uint64_t addr, uint64_t size, uint64_t stream,
		       uint64_t t_ns, int has_t)
{
	pk_dict(f);
	pk_key(f, "action");
	pk_cstr(f, action);
	pk_key(f, "addr");
	pk_u64(f, addr);
	pk_key(f, "size");
	pk_u64(f, size);
	pk_key(f, "stream");
	pk_u64(f, stream);
	if (has_t) {
		pk_key(f, "time_us");
		pk_u64(f, t_ns / 1000);
	}
}

/* allocated_size: its active_allocated blocks; active_size: those and the
   active_pending_free ones; requested_size: their requested bytes (as
   PyTorch's segment info counts them). */
static void segment_head(FILE *f, int dev, uint64_t addr, uint64_t total, uint64_t allocated,
			 uint64_t active, uint64_t requested, uint64_t stream, int expandable)
{
	pk_dict(f);
	pk_key(f, "device");
	pk_int(f, dev);
	pk_key(f, "address");
	pk_u64(f, addr);
	pk_key(f, "total_size");
	pk_u64(f, total);
	pk_key(f, "allocated_size");
	pk_u64(f, allocated);
	pk_key(f, "active_size");
	pk_u64(f, active);
	pk_key(f, "requested_size");
	pk_u64(f, requested);
	pk_key(f, "stream");
	pk_u64(f, stream);
	pk_key(f, "segment_type");
	pk_cstr(f, total <= 1048576 ? "small" : "large");
	pk_key(f, "segment_pool_id");
	pk_int(f, 0);
	pk_int(f, 0);
	fputc(0x86, f);                         /* TUPLE2 */
	pk_key(f, "is_expandable");
	pk_bool(f, expandable);
	pk_key(f, "frames");
	pk_list(f);
	pk_end_list(f);
}

static void block_head(FILE *f, uint64_t addr, uint64_t size, uint64_t requested,
		       const char *state)
{
	pk_dict(f);
	pk_key(f, "address");
	pk_u64(f, addr);
	pk_key(f, "size");
	pk_u64(f, size);
	pk_key(f, "requested_size");
	pk_u64(f, requested);
	pk_key(f, "state");
	pk_cstr(f, state);
}

/* One event of a device trace, for sorting: what, when, which record. */
struct tev {
	uint64_t key;                   /* time (CUDA) or FW event number */
	int dev;
	int what;                       /* index into actions[] */
	size_t i;                       /* box or block/segment index */
};

enum { A_SEG_ALLOC, A_ALLOC, A_FREE_REQ, A_FREE_DONE, A_SEG_FREE, A_OOM, A_SEG_MAP,
       A_SEG_UNMAP };
static const char *const actions[] = { "segment_alloc", "alloc", "free_requested",
				       "free_completed", "segment_free", "oom", "segment_map",
				       "segment_unmap" };

static int cmp_tev(const void *x, const void *y)
{
	const struct tev *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	/* a segment before its block, a block's free before its segment's */
	if (a->what != b->what)
		return a->what < b->what ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

struct tevs {
	struct tev *v;
	size_t n, cap;
};

static int tev_add(struct tevs *t, uint64_t key, int dev, int what, size_t i)
{
	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 1024;
		void *n = realloc(t->v, c * sizeof(*t->v));

		if (!n)
			return -1;
		t->v = n;
		t->cap = c;
	}
	t->v[t->n++] = (struct tev){ key, dev, what, i };
	return 0;
}

static int max_dev(const struct report *r)
{
	int m = -1;

	for (int i = 0; i < r->a->ndevs; i++)
		if (r->a->devs[i].dev > m)
			m = r->a->devs[i].dev;
	return m;
}

static void settings(FILE *f, const char *source, int expandable, const struct export_moment *mo)
{
	pk_key(f, "allocator_settings");
	pk_dict(f);
	pk_key(f, "PYTORCH_CUDA_ALLOC_CONF");
	pk_cstr(f, "");
	pk_key(f, "expandable_segments");
	pk_bool(f, expandable);
	pk_key(f, "memtrace_source");
	pk_cstr(f, source);
	pk_key(f, "memtrace_at");
	pk_cstr(f, mo->label);
	pk_end_dict(f);
}

/* Failure i of the run as an "oom" entry. */
static void oom_entry(FILE *f, const struct report *r, size_t i)
{
	const struct an_failure *fl = &r->a->failures[i];

	entry_head(f, "oom", 0, fl->requested, 0, fl->time, 1);
	pk_key(f, "device_free");
	pk_u64(f, fl->has_free_after ? fl->free_after : 0);
	pk_key(f, "frames");
	native_frames(f, sym_stack(r->sy, r->a->s, fl->proc, fl->stack));
	pk_end_dict(f);
}

/* Without framework records: every allocation a segment of one block. */
static int cuda_snapshot(const struct report *r, const struct export_moment *mo,
			 const struct plot_map *m, FILE *f, char *err, size_t errlen)
{
	const struct analysis *a = r->a;
	struct plot_box *all = NULL;
	uint64_t *cut = NULL;           /* per box: its device's moment */
	size_t nall = 0;
	struct tevs t = { 0 };
	int ndev = max_dev(r) + 1;

	for (int g = 0; g < r->ngdevs; g++) {
		struct plot_box *v;
		size_t n, na;
		void *x;

		if (plot_map_boxes(a, m, r->gdevs[g], SIZE_MAX, &v, &n, &na))
			goto oom;
		x = realloc(all, (nall + n + 1) * sizeof(*all));
		if (x)
			all = x;
		x = x ? realloc(cut, (nall + n + 1) * sizeof(*cut)) : NULL;
		if (!x) {
			free(v);
			goto oom;
		}
		cut = x;
		memcpy(all + nall, v, n * sizeof(*v));
		for (size_t k = 0; k < n; k++)
			cut[nall + k] = export_dev_t(r, mo, r->gdevs[g]);
		nall += n;
		free(v);
	}
	for (size_t i = 0; i < nall; i++) {
		if (all[i].t0 > cut[i])
			continue;
		if (tev_add(&t, all[i].t0, all[i].dev, A_SEG_ALLOC, i) ||
		    tev_add(&t, all[i].t0, all[i].dev, A_ALLOC, i))
			goto oom;
		if (!all[i].live && all[i].t1 <= cut[i] &&
		    (tev_add(&t, all[i].t1, all[i].dev, A_FREE_REQ, i) ||
		     tev_add(&t, all[i].t1, all[i].dev, A_FREE_DONE, i) ||
		     tev_add(&t, all[i].t1, all[i].dev, A_SEG_FREE, i)))
			goto oom;
	}
	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *fl = &a->failures[i];
		int pd = fl->dev >= 0 && fl->dev < AN_MAX_DEV ? a->procs[fl->proc].pdev[fl->dev] : -1;
		uint64_t c = pd >= 0 ? export_dev_t(r, mo, pd) :
			     mo->at.when == EXPORT_EXIT || mo->at.when == EXPORT_PEAK ? UINT64_MAX :
			     mo->t;

		if (fl->dev >= 0 && fl->time <= c && tev_add(&t, fl->time, fl->dev, A_OOM, i))
			goto oom;
	}
	if (t.n)
		qsort(t.v, t.n, sizeof(*t.v), cmp_tev);

	fputs("\x80\x04", f);
	pk_dict(f);
	pk_key(f, "segments");
	pk_list(f);
	for (size_t i = 0; i < nall; i++) {
		const struct plot_box *b = &all[i];

		/* live at its device's moment */
		if (b->t0 > cut[i] || (!b->live && b->t1 <= cut[i]))
			continue;
		segment_head(f, b->dev, b->addr, b->bytes, b->bytes, b->bytes, b->bytes, b->stream, 0);
		pk_key(f, "blocks");
		pk_list(f);
		block_head(f, b->addr, b->bytes, b->bytes, "active_allocated");
		pk_key(f, "frames");
		native_frames(f, sym_stack(r->sy, a->s, b->proc, b->stack));
		pk_end_dict(f);
		pk_end_list(f);
		pk_end_dict(f);
	}
	pk_end_list(f);
	pk_key(f, "device_traces");
	pk_list(f);
	for (int d = 0; d < ndev; d++) {
		pk_list(f);
		for (size_t k = 0; k < t.n; k++) {
			const struct tev *e = &t.v[k];
			const struct plot_box *b = &all[e->i < nall ? e->i : 0];

			if (e->dev != d)
				continue;
			if (e->what == A_OOM) {
				oom_entry(f, r, e->i);
				continue;
			}
			entry_head(f, actions[e->what], b->addr, b->bytes, b->stream, e->key, 1);
			pk_key(f, "frames");
			native_frames(f, sym_stack(r->sy, a->s, b->proc, b->stack));
			pk_end_dict(f);
		}
		pk_end_list(f);
	}
	pk_end_list(f);
	settings(f, "cuda", 0, mo);
	pk_end_dict(f);
	fputc('.', f);
	free(t.v);
	free(all);
	free(cut);
	return 0;
oom:
	free(t.v);
	free(all);
	free(cut);
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int cmp_seg(const void *x, const void *y, void *ctx)
{
	const struct fw_seg *s = ctx;
	const struct fw_seg *a = &s[*(const size_t *)x], *b = &s[*(const size_t *)y];

	if (a->fdev != b->fdev)
		return a->fdev < b->fdev ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int cmp_blk(const void *x, const void *y, void *ctx)
{
	const struct fw_block *s = ctx;
	const struct fw_block *a = &s[*(const size_t *)x], *b = &s[*(const size_t *)y];

	if (a->fdev != b->fdev)
		return a->fdev < b->fdev ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* One framework segment live at the moment (after event seq): its live
   blocks in address order, the free space between them as inactive
   blocks. */
static void fw_segment(FILE *f, const struct report *r, const struct fw_seg *s, uint64_t seq,
		       size_t *lb, size_t nlb, size_t *k)
{
	const struct fw_model *fw = r->a->fw;
	uint64_t alloc = 0, active = 0, req = 0, at = s->addr, end = s->addr + s->size;
	size_t first;

	while (*k < nlb) {
		const struct fw_block *b = &fw->blocks[lb[*k]];

		if (b->fdev > s->fdev || (b->fdev == s->fdev && b->addr >= s->addr))
			break;
		(*k)++;
	}
	first = *k;
	for (size_t j = first; j < nlb && fw->blocks[lb[j]].fdev == s->fdev &&
	     fw->blocks[lb[j]].addr < end; j++) {
		const struct fw_block *b = &fw->blocks[lb[j]];

		if (b->s_freq > seq)
			alloc += b->size;
		active += b->size;
		req += b->req;
	}
	segment_head(f, fw->devs[s->fdev].dev, s->addr, s->size, alloc, active, req, s->stream,
		     s->mapped);
	pk_key(f, "blocks");
	pk_list(f);
	for (; *k < nlb && fw->blocks[lb[*k]].fdev == s->fdev && fw->blocks[lb[*k]].addr < end;
	     (*k)++) {
		const struct fw_block *b = &fw->blocks[lb[*k]];

		if (b->addr > at) {
			block_head(f, at, b->addr - at, 0, "inactive");
			pk_key(f, "frames");
			pk_list(f);
			pk_end_list(f);
			pk_end_dict(f);
		}
		block_head(f, b->addr, b->size, b->req,
			   b->s_freq <= seq ? "active_pending_free" : "active_allocated");
		pk_key(f, "frames");
		fw_frames(f, r, b->proc, b->stack);
		pk_end_dict(f);
		at = b->addr + b->size;
	}
	if (at < end) {
		block_head(f, at, end - at, 0, "inactive");
		pk_key(f, "frames");
		pk_list(f);
		pk_end_list(f);
		pk_end_dict(f);
	}
	pk_end_list(f);
	pk_end_dict(f);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The part of mapped range g that its segment_unmap took: g less the
   ranges the model made of it at the same event, the parts left mapped on
   either side (framework.c's seg_free). The model appends segments in
   event order, so those made at one event are together. */
static void unmapped(const struct fw_model *fw, const struct fw_seg *g, uint64_t *addr,
		     uint64_t *size)
{
	uint64_t lo = g->addr, hi = g->addr + g->size;
	size_t a = 0, b = fw->nsegs;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (fw->segs[mid].s_alloc < g->s_free)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < fw->nsegs && fw->segs[a].s_alloc == g->s_free; a++) {
		const struct fw_seg *p = &fw->segs[a];

		if (p->fdev != g->fdev || p->proc != g->proc || !p->mapped)
			continue;
		if (p->addr == g->addr)
			lo = p->addr + p->size;
		else if (p->addr + p->size == g->addr + g->size)
			hi = p->addr;
	}
	*addr = lo;
	*size = hi > lo ? hi - lo : 0;
}

/* With framework records: the framework's segments and blocks. A segment
   is segment_alloc .. segment_free; a mapped range of an expandable
   segment is segment_map .. segment_unmap, a range the model cut out of
   one that an unmap shortened being no new map. */
static int fw_snapshot(const struct report *r, const struct export_moment *mo, FILE *f, char *err,
		       size_t errlen)
{
	const struct fw_model *fw = r->a->fw;
	uint64_t *cut = calloc((size_t)fw->ndevs + 1, sizeof(*cut));   /* per fw dev: its seq */
	size_t *ls = calloc(fw->nsegs + 1, sizeof(*ls)), *lb = calloc(fw->nblocks + 1, sizeof(*lb));
	uint64_t *ends = calloc(fw->nsegs + 1, sizeof(*ends));
	size_t nls = 0, nlb = 0, k = 0, nends = 0;
	struct tevs t = { 0 };
	int ndev = max_dev(r) + 1, expandable = 0;

	for (int i = 0; i < fw->ndevs; i++)
		if (fw->devs[i].dev + 1 > ndev)
			ndev = fw->devs[i].dev + 1;
	if (!ls || !lb || !ends || !cut)
		goto oom;
	for (int i = 0; i < fw->ndevs; i++) {
		uint64_t tt;

		export_fw_at(r, mo, i, &cut[i], &tt);
	}
	for (uint64_t i = 0; i < fw->nsegs; i++)
		if (fw->segs[i].s_free != FW_NEVER)
			ends[nends++] = fw->segs[i].s_free;
	qsort(ends, nends, sizeof(*ends), cmp_u64);
	for (uint64_t i = 0; i < fw->nsegs; i++) {
		const struct fw_seg *s = &fw->segs[i];
		int d = fw->devs[s->fdev].dev;
		uint64_t c = cut[s->fdev];

		expandable |= s->mapped;
		if (s->s_alloc > c)
			continue;
		if (c < s->s_free && fw_counts_at(fw, fw->devs[s->fdev].run, s->fdev, s->proc, c))
			ls[nls++] = i;
		if (s->mapped && bsearch(&s->s_alloc, ends, nends, sizeof(*ends), cmp_u64))
			;       /* what an unmap left of a mapped range */
		else if (tev_add(&t, s->s_alloc, d, s->mapped ? A_SEG_MAP : A_SEG_ALLOC, i))
			goto oom;
		if (s->s_free <= c &&
		    tev_add(&t, s->s_free, d, s->mapped ? A_SEG_UNMAP : A_SEG_FREE, i))
			goto oom;
	}
	for (uint64_t i = 0; i < fw->nblocks; i++) {
		const struct fw_block *b = &fw->blocks[i];
		int d = fw->devs[b->fdev].dev;
		uint64_t c = cut[b->fdev];

		if (b->s_alloc > c)
			continue;
		if (c < b->s_fdone && fw_counts_at(fw, fw->devs[b->fdev].run, b->fdev, b->proc, c))
			lb[nlb++] = i;
		if (tev_add(&t, b->s_alloc, d, A_ALLOC, i) ||
		    (b->s_freq <= c && tev_add(&t, b->s_freq, d, A_FREE_REQ, i)) ||
		    (b->s_fdone <= c && tev_add(&t, b->s_fdone, d, A_FREE_DONE, i)))
			goto oom;
	}
	for (uint32_t i = 0; i < fw->nooms; i++)
		if (fw->ooms[i].st.seq <= cut[fw->ooms[i].fdev] &&
		    tev_add(&t, fw->ooms[i].st.seq, fw->ooms[i].dev, A_OOM, i))
			goto oom;
	qsort_r(ls, nls, sizeof(*ls), cmp_seg, fw->segs);
	qsort_r(lb, nlb, sizeof(*lb), cmp_blk, fw->blocks);
	if (t.n)
		qsort(t.v, t.n, sizeof(*t.v), cmp_tev);

	fputs("\x80\x04", f);
	pk_dict(f);
	pk_key(f, "segments");
	pk_list(f);
	for (size_t i = 0; i < nls; i++)
		fw_segment(f, r, &fw->segs[ls[i]], cut[fw->segs[ls[i]].fdev], lb, nlb, &k);
	pk_end_list(f);
	pk_key(f, "device_traces");
	pk_list(f);
	for (int d = 0; d < ndev; d++) {
		pk_list(f);
		for (size_t j = 0; j < t.n; j++) {
			const struct tev *e = &t.v[j];

			if (e->dev != d)
				continue;
			if (e->what == A_OOM) {
				const struct fw_oom *o = &fw->ooms[e->i];

				entry_head(f, "oom", 0, o->requested, 0, o->st.t, 1);
				pk_key(f, "device_free");
				pk_u64(f, o->device_free);
				pk_key(f, "frames");
				fw_frames(f, r, o->proc, o->stack);
			} else if (e->what == A_SEG_ALLOC || e->what == A_SEG_FREE ||
				   e->what == A_SEG_MAP || e->what == A_SEG_UNMAP) {
				const struct fw_seg *s = &fw->segs[e->i];
				uint64_t sa = s->addr, sz = s->size;
				int born = e->what == A_SEG_ALLOC || e->what == A_SEG_MAP;

				if (e->what == A_SEG_UNMAP)
					unmapped(fw, s, &sa, &sz);
				entry_head(f, actions[e->what], sa, sz, s->stream,
					   born ? s->t_alloc : s->t_free, 1);
				pk_key(f, "frames");
				pk_list(f);
				pk_end_list(f);
			} else {
				const struct fw_block *b = &fw->blocks[e->i];
				uint64_t tt = e->what == A_ALLOC ? b->t_alloc :
					      e->what == A_FREE_REQ ? b->t_freq : b->t_fdone;

				entry_head(f, actions[e->what], b->addr, b->size, b->stream, tt, 1);
				pk_key(f, "frames");
				fw_frames(f, r, b->proc, b->stack);
			}
			pk_end_dict(f);
		}
		pk_end_list(f);
	}
	pk_end_list(f);
	settings(f, "framework", expandable, mo);
	pk_end_dict(f);
	fputc('.', f);
	free(t.v);
	free(ls);
	free(lb);
	free(ends);
	free(cut);
	return 0;
oom:
	free(t.v);
	free(ls);
	free(lb);
	free(ends);
	free(cut);
	snprintf(err, errlen, "out of memory");
	return -1;
}

int export_torch(const struct report *r, const struct export_moment *at,
		 const struct plot_map *m, FILE *f, char *err, size_t errlen)
{
	int rc = r->a->fw && r->a->fw->nblocks ? fw_snapshot(r, at, f, err, errlen)
					       : cuda_snapshot(r, at, m, f, err, errlen);

	if (!rc && ferror(f)) {
		snprintf(err, errlen, "cannot write the snapshot");
		return -1;
	}
	return rc;
}
