/*
 * parquet.c - the Parquet writer of parquet.h: what it covers and what not
 * is said there. The pieces, in the order a file is made:
 *
 *   buffers      growable bytes (struct buf), varints, zigzag
 *   thrift       the Thrift compact protocol (apache/thrift
 *                doc/specs/thrift-compact-protocol.md): field headers with
 *                the id delta in the high nibble, zigzag varints, list
 *                headers, bools in the field type; enough for PageHeader and
 *                FileMetaData
 *   rle          the RLE/bit-packed hybrid of Encodings.md: runs of 8 or
 *                more equal values as RLE runs, the rest as bit-packed
 *                groups of 8 (at most 63 groups a run), LSB first
 *   pages        a data page v1: [repetition levels][definition levels]
 *                (each as <4-byte length><hybrid>) then the values, the
 *                whole body ZSTD-compressed, behind its PageHeader
 *   row groups   each column chunk: the dictionary page (STRING columns),
 *                then its data pages, copied from memory or the spill file
 *   footer       FileMetaData, its 4-byte length, "PAR1"
 *
 * Not thread-safe: one ZSTD context serves every writer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "store/parquet.h"

#define DEF_PAGE_ROWS 65536
#define DEF_GROUP_ROWS (1u << 20)

/* parquet.thrift's enums */
enum { T_BOOLEAN = 0, T_INT32 = 1, T_INT64 = 2, T_BYTE_ARRAY = 6 };
enum { E_PLAIN = 0, E_RLE = 3, E_RLE_DICTIONARY = 8 };
enum { CODEC_ZSTD = 6 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1, REP_REPEATED = 2 };
enum { CT_UTF8 = 0, CT_LIST = 3, CT_INT_8 = 15, CT_INT_16 = 16, CT_INT_32 = 17,
       CT_INT_64 = 18 };

/* --- buffers ----------------------------------------------------------------- */

struct buf {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

static int b_room(struct buf *b, size_t more)
{
	if (b->oom)
		return -1;
	if (b->n + more > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *p;

		while (cap < b->n + more)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->oom = 1;
			return -1;
		}
		b->p = p;
		b->cap = cap;
	}
	return 0;
}

static void b_put(struct buf *b, const void *p, size_t n)
{
	if (n && !b_room(b, n)) {
		memcpy(b->p + b->n, p, n);
		b->n += n;
	}
}

static void b_byte(struct buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	b_put(b, &c, 1);
}

static void b_varint(struct buf *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n] = v & 0x7f;
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	b_put(b, t, n);
}

static void b_le(struct buf *b, uint64_t v, int bytes)
{
	unsigned char t[8];

	for (int i = 0; i < bytes; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	b_put(b, t, (size_t)bytes);
}

static void b_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* --- thrift compact protocol ------------------------------------------------- */

enum { CT_TRUE = 1, CT_FALSE = 2, CT_BYTE = 3, CT_I16 = 4, CT_I32 = 5, CT_I64 = 6,
       CT_BINARY = 8, CT_LISTT = 9, CT_STRUCT = 12 };

struct tw {
	struct buf *b;
	int16_t last[16];           /* the last field id of each open struct */
	int depth;
};

static void tw_init(struct tw *t, struct buf *b)
{
	memset(t, 0, sizeof(*t));
	t->b = b;
}

static void tw_field(struct tw *t, int id, int type)
{
	int delta = id - t->last[t->depth];

	if (delta > 0 && delta <= 15) {
		b_byte(t->b, (unsigned)(delta << 4 | type));
	} else {
		b_byte(t->b, (unsigned)type);
		b_varint(t->b, (uint64_t)(((int64_t)id << 1) ^ ((int64_t)id >> 63)));
	}
	t->last[t->depth] = (int16_t)id;
}

static void zz(struct buf *b, int64_t v)
{
	b_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void tw_i32(struct tw *t, int id, int32_t v)
{
	tw_field(t, id, CT_I32);
	zz(t->b, v);
}

static void tw_i16(struct tw *t, int id, int16_t v)
{
	tw_field(t, id, CT_I16);
	zz(t->b, v);
}

static void tw_i64(struct tw *t, int id, int64_t v)
{
	tw_field(t, id, CT_I64);
	zz(t->b, v);
}

static void tw_i8(struct tw *t, int id, int8_t v)
{
	tw_field(t, id, CT_BYTE);
	b_byte(t->b, (uint8_t)v);
}

static void tw_bool(struct tw *t, int id, int v)
{
	tw_field(t, id, v ? CT_TRUE : CT_FALSE);
}

static void tw_bin(struct tw *t, int id, const void *p, size_t n)
{
	tw_field(t, id, CT_BINARY);
	b_varint(t->b, n);
	b_put(t->b, p, n);
}

/* a struct as a field (id > 0) or as a list element (id 0) */
static void tw_begin(struct tw *t, int id)
{
	if (id)
		tw_field(t, id, CT_STRUCT);
	t->last[++t->depth] = 0;
}

static void tw_end(struct tw *t)
{
	b_byte(t->b, 0);
	t->depth--;
}

static void tw_list(struct tw *t, int id, int elem, size_t n)
{
	tw_field(t, id, CT_LISTT);
	if (n < 15) {
		b_byte(t->b, (unsigned)(n << 4 | (size_t)elem));
	} else {
		b_byte(t->b, 0xf0u | (unsigned)elem);
		b_varint(t->b, n);
	}
}

/* --- the RLE / bit-packed hybrid ---------------------------------------------- */

static int bit_width(uint64_t max)
{
	int w = 0;

	while (max) {
		w++;
		max >>= 1;
	}
	return w;
}

/* v: n values, 8-bit (w8) or 32-bit */
static inline uint32_t getv(const void *v, size_t i, int w8)
{
	return w8 ? ((const uint8_t *)v)[i] : ((const uint32_t *)v)[i];
}

static size_t run_at(const void *v, size_t i, size_t n, int w8, size_t cap)
{
	size_t r = 1;
	uint32_t x = getv(v, i, w8);

	while (i + r < n && r < cap && getv(v, i + r, w8) == x)
		r++;
	return r;
}

static void rle_hybrid(struct buf *b, const void *v, size_t n, int w8, int bw)
{
	size_t i = 0;
	int vbytes = (bw + 7) / 8;

	while (i < n) {
		size_t run = run_at(v, i, n, w8, SIZE_MAX);

		if (run >= 8) {
			b_varint(b, (uint64_t)run << 1);
			b_le(b, getv(v, i, w8), vbytes);
			i += run;
			continue;
		}
		size_t start = i, groups = 0;

		do {
			i += 8;
			groups++;
		} while (i < n && groups < 63 && run_at(v, i, n, w8, 8) < 8);
		b_varint(b, (uint64_t)groups << 1 | 1);
		uint64_t acc = 0;
		int bits = 0;

		for (size_t k = start; k < start + groups * 8; k++) {
			acc |= (uint64_t)(k < n ? getv(v, k, w8) : 0) << bits;
			bits += bw;
			while (bits >= 8) {
				b_byte(b, acc & 0xff);
				acc >>= 8;
				bits -= 8;
			}
		}
		if (bits)
			b_byte(b, acc & 0xff);
		if (i > n)
			i = n;
	}
}

/* levels as <4-byte length><hybrid> (data page v1) */
static void levels(struct buf *b, const uint8_t *v, size_t n, int bw)
{
	size_t at;

	b_le(b, 0, 4);
	at = b->n;
	rle_hybrid(b, v, n, 1, bw);
	if (!b->oom) {
		uint32_t len = (uint32_t)(b->n - at);

		for (int i = 0; i < 4; i++)
			b->p[at - 4 + (size_t)i] = (unsigned char)(len >> (8 * i));
	}
}

/* --- the spill file ---------------------------------------------------------- */

struct pq_spill {
	int fd;
	uint64_t off;
	char *path;
};

struct pq_spill *pq_spill_open(const char *path, char *err, size_t errlen)
{
	struct pq_spill *s = calloc(1, sizeof(*s));

	if (!s || !(s->path = strdup(path))) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((s->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		free(s->path);
		free(s);
		return NULL;
	}
	return s;
}

void pq_spill_close(struct pq_spill *s)
{
	if (!s)
		return;
	close(s->fd);
	unlink(s->path);
	free(s->path);
	free(s);
}

static int spill_write(struct pq_spill *s, const void *p, size_t n, uint64_t *off)
{
	const unsigned char *c = p;
	size_t done = 0;

	*off = s->off;
	while (done < n) {
		ssize_t k = pwrite(s->fd, c + done, n - done, (off_t)(s->off + done));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)k;
	}
	s->off += n;
	return 0;
}

static int spill_read(struct pq_spill *s, uint64_t off, void *p, size_t n)
{
	unsigned char *c = p;
	size_t done = 0;

	while (done < n) {
		ssize_t k = pread(s->fd, c + done, n - done, (off_t)(off + done));

		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)k;
	}
	return 0;
}

/* --- the writer -------------------------------------------------------------- */

struct page_ref {
	uint64_t off;               /* in the column's pages buffer or the spill */
	uint32_t len;
};

/* What the footer says of one column chunk. */
struct chunk_meta {
	int64_t data_off, dict_off; /* dict_off -1: none */
	int64_t unc, comp;          /* totals, page headers included */
	int64_t nvalues, nulls;
	int64_t min, max;
	int has_minmax;
};

struct column {
	struct pq_col c;
	char *name;
	int max_def, max_rep;
	int set;                    /* set in the current row */
	/* the page being filled */
	int64_t *iv;                /* integer and bool values (non-null) */
	size_t niv, civ;
	uint32_t *idx;              /* STRING: dictionary indices (non-null) */
	size_t nidx, cidx;
	struct buf plain;           /* STRING_LIST: PLAIN values */
	uint8_t *def, *rep;
	size_t nlev, clev;
	uint32_t page_vals;         /* values (levels) in the page */
	uint32_t page_nonnull;
	/* the chunk being filled */
	struct buf pages;           /* finished pages, when not spilled */
	struct page_ref *refs;
	size_t nrefs, crefs;
	struct chunk_meta cm;
	/* STRING: the chunk's dictionary */
	struct buf dict;            /* PLAIN entries: <4-byte length><bytes> */
	uint64_t *dent;             /* per entry: offset of its bytes in dict << 32 | len */
	uint32_t ndict, cdent;
	uint32_t *hash;             /* open addressing: entry + 1, 0 empty */
	uint32_t hcap;
};

struct pq_writer {
	char *path;
	struct column *cols;
	int ncols;
	struct pq_opts o;
	uint64_t rows, group_rows;
	uint64_t file_off;          /* bytes written so far (0: no file yet) */
	struct chunk_meta *groups;  /* ngroups * ncols */
	uint64_t *group_nrows;
	size_t ngroups, cgroups;
	char **kv;                  /* key, value, key, value, ... */
	size_t nkv;
	int failed;
	char err[512];
};

static ZSTD_CCtx *zctx;

static int fail(struct pq_writer *w, const char *fmt, const char *a)
{
	if (!w->failed)
		snprintf(w->err, sizeof(w->err), fmt, a);
	w->failed = 1;
	return -1;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	void *q;

	while (c < need)
		c *= 2;
	if (!(q = realloc(*p, c * size)))
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

struct pq_writer *pq_open(const char *path, const struct pq_col *cols, int ncols,
			  const struct pq_opts *o, char *err, size_t errlen)
{
	struct pq_writer *w = calloc(1, sizeof(*w));

	if (!w)
		goto oom;
	if (o)
		w->o = *o;
	if (!w->o.page_rows)
		w->o.page_rows = DEF_PAGE_ROWS;
	if (!w->o.rowgroup_rows)
		w->o.rowgroup_rows = DEF_GROUP_ROWS;
	if (!w->o.zstd_level)
		w->o.zstd_level = 3;
	w->ncols = ncols;
	if (!(w->path = strdup(path)) || !(w->cols = calloc((size_t)ncols, sizeof(*w->cols))))
		goto oom;
	for (int i = 0; i < ncols; i++) {
		struct column *c = &w->cols[i];

		c->c = cols[i];
		if (!(c->name = strdup(cols[i].name)))
			goto oom;
		c->c.name = c->name;
		if (c->c.type == PQ_STRING_LIST) {
			c->c.optional = 0;
			c->max_def = 1;
			c->max_rep = 1;
		} else {
			c->max_def = c->c.optional ? 1 : 0;
		}
		c->cm.dict_off = -1;
	}
	return w;
oom:
	snprintf(err, errlen, "out of memory");
	pq_abort(w);
	return NULL;
}

uint64_t pq_rows(const struct pq_writer *w)
{
	return w->rows;
}

const char *pq_error(const struct pq_writer *w)
{
	return w->err;
}

int pq_meta(struct pq_writer *w, const char *key, const char *value)
{
	char **kv = realloc(w->kv, (w->nkv + 2) * sizeof(*kv));

	if (!kv)
		return fail(w, "%s", "out of memory");
	w->kv = kv;
	if (!(kv[w->nkv] = strdup(key)) || !(kv[w->nkv + 1] = strdup(value ? value : ""))) {
		free(kv[w->nkv]);
		return fail(w, "%s", "out of memory");
	}
	w->nkv += 2;
	return 0;
}

static void lev(struct pq_writer *w, struct column *c, int def, int rep)
{
	if (c->nlev == c->clev) {
		size_t cap = c->clev ? c->clev * 2 : 64;
		uint8_t *d = realloc(c->def, cap), *r = c->rep;

		if (d)
			c->def = d;
		if (d && c->max_rep && (r = realloc(c->rep, cap)))
			c->rep = r;
		if (!d || (c->max_rep && !r)) {
			fail(w, "%s", "out of memory");
			return;
		}
		c->clev = cap;
	}
	c->def[c->nlev] = (uint8_t)def;
	if (c->max_rep)
		c->rep[c->nlev] = (uint8_t)rep;
	c->nlev++;
}

static void minmax(struct column *c, int64_t v)
{
	if (!c->cm.has_minmax) {
		c->cm.min = c->cm.max = v;
		c->cm.has_minmax = 1;
	} else {
		if (v < c->cm.min)
			c->cm.min = v;
		if (v > c->cm.max)
			c->cm.max = v;
	}
}

void pq_null(struct pq_writer *w, int col)
{
	(void)w;
	(void)col;
}

static int mark(struct pq_writer *w, struct column *c)
{
	if (c->set) {
		fail(w, "column %s set twice in a row", c->name);
		return -1;
	}
	c->set = 1;
	if (c->max_def)
		lev(w, c, 1, 0);
	c->page_vals++;
	c->page_nonnull++;
	return 0;
}

void pq_i64(struct pq_writer *w, int col, int64_t v)
{
	struct column *c = &w->cols[col];

	if (mark(w, c))
		return;
	if (grow((void **)&c->iv, &c->civ, c->niv + 1, sizeof(*c->iv))) {
		fail(w, "%s", "out of memory");
		return;
	}
	c->iv[c->niv++] = v;
	minmax(c, v);
}

void pq_bool(struct pq_writer *w, int col, int v)
{
	pq_i64(w, col, !!v);
}

static uint64_t fnv(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* the dictionary index of p, added when new; UINT32_MAX on failure */
static uint32_t dict_index(struct pq_writer *w, struct column *c, const char *p, size_t n)
{
	uint64_t h = fnv(p, n);

	if ((c->ndict + 1) * 2 > c->hcap) {
		uint32_t cap = c->hcap ? c->hcap * 2 : 256;
		uint32_t *t = calloc(cap, sizeof(*t));

		if (!t)
			goto oom;
		for (uint32_t i = 0; i < c->ndict; i++) {
			uint64_t e = c->dent[i];
			uint32_t k = (uint32_t)fnv((const char *)c->dict.p + (e >> 32),
						   (size_t)(e & 0xffffffffu)) & (cap - 1);

			while (t[k])
				k = (k + 1) & (cap - 1);
			t[k] = i + 1;
		}
		free(c->hash);
		c->hash = t;
		c->hcap = cap;
	}
	for (uint32_t k = (uint32_t)h & (c->hcap - 1);; k = (k + 1) & (c->hcap - 1)) {
		uint32_t e = c->hash[k];

		if (!e) {
			size_t cd = c->cdent;

			if (n > 0xffffffffu || c->dict.n + 4 + n > 0xffffffffu)
				goto big;
			if (grow((void **)&c->dent, &cd, c->ndict + 1, sizeof(*c->dent)))
				goto oom;
			c->cdent = (uint32_t)cd;
			b_le(&c->dict, n, 4);
			c->dent[c->ndict] = (uint64_t)c->dict.n << 32 | n;
			b_put(&c->dict, p, n);
			if (c->dict.oom)
				goto oom;
			c->hash[k] = ++c->ndict;
			return c->ndict - 1;
		}
		uint64_t d = c->dent[e - 1];

		if ((d & 0xffffffffu) == n && !memcmp(c->dict.p + (d >> 32), p, n))
			return e - 1;
	}
big:
	fail(w, "a string of column %s is too long", c->name);
	return UINT32_MAX;
oom:
	fail(w, "%s", "out of memory");
	return UINT32_MAX;
}

void pq_str(struct pq_writer *w, int col, const char *p, size_t len)
{
	struct column *c = &w->cols[col];
	uint32_t i;

	if (!p)
		p = "";
	if ((i = dict_index(w, c, p, len)) == UINT32_MAX || mark(w, c))
		return;
	if (grow((void **)&c->idx, &c->cidx, c->nidx + 1, sizeof(*c->idx))) {
		fail(w, "%s", "out of memory");
		return;
	}
	c->idx[c->nidx++] = i;
}

void pq_list_add(struct pq_writer *w, int col, const char *p, size_t len)
{
	struct column *c = &w->cols[col];

	lev(w, c, 1, c->set ? 1 : 0);
	c->set = 1;
	c->page_vals++;
	c->page_nonnull++;
	b_le(&c->plain, len, 4);
	b_put(&c->plain, p, len);
	if (c->plain.oom)
		fail(w, "%s", "out of memory");
}

/* A finished page (header + body) into the chunk: memory or the spill. */
static int keep_page(struct pq_writer *w, struct column *c, const struct buf *hdr,
		     const void *body, size_t blen, size_t ulen, int dict)
{
	struct page_ref r;

	if (dict)
		return 0;           /* written at the chunk's start, not kept */
	if (grow((void **)&c->refs, &c->crefs, c->nrefs + 1, sizeof(*c->refs)))
		return fail(w, "%s", "out of memory");
	r.len = (uint32_t)(hdr->n + blen);
	if (w->o.spill) {
		uint64_t o2;

		if (spill_write(w->o.spill, hdr->p, hdr->n, &r.off) ||
		    spill_write(w->o.spill, body, blen, &o2))
			return fail(w, "cannot write the spill file: %s", strerror(errno));
	} else {
		r.off = c->pages.n;
		b_put(&c->pages, hdr->p, hdr->n);
		b_put(&c->pages, body, blen);
		if (c->pages.oom)
			return fail(w, "%s", "out of memory");
	}
	c->refs[c->nrefs++] = r;
	c->cm.unc += (int64_t)(hdr->n + ulen);
	c->cm.comp += (int64_t)(hdr->n + blen);
	return 0;
}

/* Compresses body and makes its header; out gets header then the
   compressed bytes. */
static int make_page(struct pq_writer *w, struct column *c, const struct buf *body,
		     int type, uint32_t nvalues, int encoding, struct buf *out, size_t *hlen)
{
	size_t cap = ZSTD_compressBound(body->n), clen;
	struct buf hdr = { 0 };
	struct tw t;
	void *z;

	if (!zctx && !(zctx = ZSTD_createCCtx()))
		return fail(w, "%s", "out of memory");
	if (!(z = malloc(cap ? cap : 1)))
		return fail(w, "%s", "out of memory");
	clen = ZSTD_compressCCtx(zctx, z, cap, body->p ? body->p : (void *)"", body->n,
				 w->o.zstd_level);
	if (ZSTD_isError(clen)) {
		free(z);
		return fail(w, "zstd: %s", ZSTD_getErrorName(clen));
	}
	if (body->n > INT32_MAX || clen > INT32_MAX) {
		free(z);
		return fail(w, "a page of column %s is too large", c->name);
	}
	tw_init(&t, &hdr);
	tw_i32(&t, 1, type);
	tw_i32(&t, 2, (int32_t)body->n);
	tw_i32(&t, 3, (int32_t)clen);
	if (type == PAGE_DATA) {
		tw_begin(&t, 5);
		tw_i32(&t, 1, (int32_t)nvalues);
		tw_i32(&t, 2, encoding);
		tw_i32(&t, 3, E_RLE);
		tw_i32(&t, 4, E_RLE);
		tw_end(&t);
	} else {
		tw_begin(&t, 7);
		tw_i32(&t, 1, (int32_t)nvalues);
		tw_i32(&t, 2, E_PLAIN);
		tw_end(&t);
	}
	b_byte(&hdr, 0);
	*hlen = hdr.n;
	b_put(out, hdr.p, hdr.n);
	b_put(out, z, clen);
	free(z);
	b_free(&hdr);
	if (out->oom)
		return fail(w, "%s", "out of memory");
	return 0;
}

static int flush_page(struct pq_writer *w, struct column *c)
{
	struct buf body = { 0 }, out = { 0 };
	size_t hlen = 0;
	int enc = E_PLAIN, rc;

	if (!c->page_vals)
		return 0;
	if (c->max_rep)
		levels(&body, c->rep, c->nlev, bit_width((uint64_t)c->max_rep));
	if (c->max_def)
		levels(&body, c->def, c->nlev, bit_width((uint64_t)c->max_def));
	switch (c->c.type) {
	case PQ_BOOL: {
		unsigned acc = 0;
		int bits = 0;

		for (size_t i = 0; i < c->niv; i++) {
			acc |= (unsigned)(c->iv[i] & 1) << bits;
			if (++bits == 8) {
				b_byte(&body, acc);
				acc = 0;
				bits = 0;
			}
		}
		if (bits)
			b_byte(&body, acc);
		break;
	}
	case PQ_INT8: case PQ_INT16: case PQ_INT32:
		for (size_t i = 0; i < c->niv; i++)
			b_le(&body, (uint64_t)c->iv[i], 4);
		break;
	case PQ_INT64: case PQ_TIMESTAMP_NS:
		for (size_t i = 0; i < c->niv; i++)
			b_le(&body, (uint64_t)c->iv[i], 8);
		break;
	case PQ_STRING: {
		int bw = bit_width(c->ndict ? c->ndict - 1 : 0);

		if (!bw)
			bw = 1;
		enc = E_RLE_DICTIONARY;
		b_byte(&body, (unsigned)bw);
		rle_hybrid(&body, c->idx, c->nidx, 0, bw);
		break;
	}
	case PQ_STRING_LIST:
		b_put(&body, c->plain.p, c->plain.n);
		break;
	}
	if (body.oom) {
		b_free(&body);
		return fail(w, "%s", "out of memory");
	}
	rc = make_page(w, c, &body, PAGE_DATA, c->page_vals, enc, &out, &hlen);
	if (!rc) {
		struct buf h = { out.p, hlen, hlen, 0 };

		rc = keep_page(w, c, &h, out.p + hlen, out.n - hlen, body.n, 0);
	}
	c->cm.nvalues += c->page_vals;
	c->cm.nulls += c->c.type == PQ_STRING_LIST ? 0 : c->page_vals - c->page_nonnull;
	c->niv = c->nidx = c->nlev = 0;
	c->plain.n = 0;
	c->page_vals = c->page_nonnull = 0;
	b_free(&body);
	b_free(&out);
	return rc;
}

static int out_write(struct pq_writer *w, FILE *f, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, f) != n)
		return fail(w, "cannot write %s", w->path);
	w->file_off += n;
	return 0;
}

static int flush_group(struct pq_writer *w)
{
	FILE *f;
	struct chunk_meta *g;
	unsigned char *tmp = NULL;
	size_t ctmp = 0;
	int rc = 0;

	if (!w->group_rows)
		return 0;
	for (int i = 0; i < w->ncols; i++)
		if (flush_page(w, &w->cols[i]))
			return -1;
	if (grow((void **)&w->groups, &w->cgroups, (w->ngroups + 1) * (size_t)w->ncols,
		 sizeof(*w->groups)))
		return fail(w, "%s", "out of memory");
	{
		size_t cn = w->ngroups;
		void *q = realloc(w->group_nrows, (cn + 1) * sizeof(*w->group_nrows));

		if (!q)
			return fail(w, "%s", "out of memory");
		w->group_nrows = q;
	}
	if (!(f = fopen(w->path, w->file_off ? "ab" : "wb")))
		return fail(w, "cannot create %s", w->path);
	if (!w->file_off && out_write(w, f, "PAR1", 4))
		goto bad;
	g = &w->groups[w->ngroups * (size_t)w->ncols];
	for (int i = 0; i < w->ncols && !rc; i++) {
		struct column *c = &w->cols[i];

		c->cm.dict_off = -1;
		if (c->c.type == PQ_STRING) {
			struct buf out = { 0 };
			size_t hlen;

			if (!c->ndict)      /* every value null: one entry all the same */
				dict_index(w, c, "", 0);
			c->cm.dict_off = (int64_t)w->file_off;
			if (make_page(w, c, &c->dict, PAGE_DICTIONARY, c->ndict, E_PLAIN, &out,
				      &hlen) || out_write(w, f, out.p, out.n)) {
				b_free(&out);
				goto bad;
			}
			c->cm.unc += (int64_t)(hlen + c->dict.n);
			c->cm.comp += (int64_t)out.n;
			b_free(&out);
		}
		c->cm.data_off = (int64_t)w->file_off;
		for (size_t k = 0; k < c->nrefs; k++) {
			const struct page_ref *r = &c->refs[k];

			if (w->o.spill) {
				if (grow((void **)&tmp, &ctmp, r->len, 1)) {
					fail(w, "%s", "out of memory");
					goto bad;
				}
				if (spill_read(w->o.spill, r->off, tmp, r->len)) {
					fail(w, "cannot read the spill file: %s", strerror(errno));
					goto bad;
				}
				if (out_write(w, f, tmp, r->len))
					goto bad;
			} else if (out_write(w, f, c->pages.p + r->off, r->len)) {
				goto bad;
			}
		}
		g[i] = c->cm;
		/* the next chunk starts empty */
		memset(&c->cm, 0, sizeof(c->cm));
		c->nrefs = 0;
		c->pages.n = 0;
		c->dict.n = 0;
		c->ndict = 0;
		if (c->hash)
			memset(c->hash, 0, c->hcap * sizeof(*c->hash));
	}
	free(tmp);
	if (fclose(f))
		return fail(w, "cannot write %s", w->path);
	w->group_nrows[w->ngroups++] = w->group_rows;
	w->group_rows = 0;
	return 0;
bad:
	free(tmp);
	fclose(f);
	return -1;
}

int pq_end_row(struct pq_writer *w)
{
	if (w->failed)
		return -1;
	for (int i = 0; i < w->ncols; i++) {
		struct column *c = &w->cols[i];

		if (!c->set) {
			if (c->c.type == PQ_STRING_LIST) {
				lev(w, c, 0, 0);
				c->page_vals++;
			} else if (c->c.optional) {
				lev(w, c, 0, 0);
				c->page_vals++;
			} else {
				return fail(w, "required column %s not set", c->name);
			}
		}
		c->set = 0;
	}
	w->rows++;
	w->group_rows++;
	for (int i = 0; i < w->ncols; i++)
		if (w->cols[i].page_vals >= w->o.page_rows && flush_page(w, &w->cols[i]))
			return -1;
	if (w->group_rows >= w->o.rowgroup_rows)
		return flush_group(w);
	return w->failed ? -1 : 0;
}

/* --- the footer -------------------------------------------------------------- */

static int phys(enum pq_type t)
{
	switch (t) {
	case PQ_BOOL: return T_BOOLEAN;
	case PQ_INT8: case PQ_INT16: case PQ_INT32: return T_INT32;
	case PQ_INT64: case PQ_TIMESTAMP_NS: return T_INT64;
	default: return T_BYTE_ARRAY;
	}
}

static void schema_leaf(struct tw *t, const struct column *c)
{
	static const int bits[] = { [PQ_INT8] = 8, [PQ_INT16] = 16, [PQ_INT32] = 32,
				    [PQ_INT64] = 64 };
	static const int conv[] = { [PQ_INT8] = CT_INT_8, [PQ_INT16] = CT_INT_16,
				    [PQ_INT32] = CT_INT_32, [PQ_INT64] = CT_INT_64 };

	tw_begin(t, 0);
	tw_i32(t, 1, phys(c->c.type));
	tw_i32(t, 3, c->c.optional ? REP_OPTIONAL : REP_REQUIRED);
	tw_bin(t, 4, c->name, strlen(c->name));
	switch (c->c.type) {
	case PQ_INT8: case PQ_INT16: case PQ_INT32: case PQ_INT64:
		tw_i32(t, 6, conv[c->c.type]);
		tw_begin(t, 10);
		tw_begin(t, 10);            /* IntType */
		tw_i8(t, 1, (int8_t)bits[c->c.type]);
		tw_bool(t, 2, 1);
		tw_end(t);
		tw_end(t);
		break;
	case PQ_TIMESTAMP_NS:
		tw_begin(t, 10);
		tw_begin(t, 8);             /* TimestampType */
		tw_bool(t, 1, 1);
		tw_begin(t, 2);             /* TimeUnit */
		tw_begin(t, 3);             /* NanoSeconds */
		tw_end(t);
		tw_end(t);
		tw_end(t);
		tw_end(t);
		break;
	case PQ_STRING:
		tw_i32(t, 6, CT_UTF8);
		tw_begin(t, 10);
		tw_begin(t, 1);             /* StringType */
		tw_end(t);
		tw_end(t);
		break;
	default:
		break;
	}
	tw_end(t);
}

static void footer(struct pq_writer *w, struct buf *b)
{
	struct tw t;
	int nschema = 1;

	for (int i = 0; i < w->ncols; i++)
		nschema += w->cols[i].c.type == PQ_STRING_LIST ? 3 : 1;
	tw_init(&t, b);
	tw_i32(&t, 1, 1);
	tw_list(&t, 2, CT_STRUCT, (size_t)nschema);
	tw_begin(&t, 0);
	tw_bin(&t, 4, "schema", 6);
	tw_i32(&t, 5, w->ncols);
	tw_end(&t);
	for (int i = 0; i < w->ncols; i++) {
		const struct column *c = &w->cols[i];

		if (c->c.type != PQ_STRING_LIST) {
			schema_leaf(&t, c);
			continue;
		}
		tw_begin(&t, 0);
		tw_i32(&t, 3, REP_REQUIRED);
		tw_bin(&t, 4, c->name, strlen(c->name));
		tw_i32(&t, 5, 1);
		tw_i32(&t, 6, CT_LIST);
		tw_begin(&t, 10);
		tw_begin(&t, 3);            /* ListType */
		tw_end(&t);
		tw_end(&t);
		tw_end(&t);
		tw_begin(&t, 0);
		tw_i32(&t, 3, REP_REPEATED);
		tw_bin(&t, 4, "list", 4);
		tw_i32(&t, 5, 1);
		tw_end(&t);
		{
			struct column e = *c;

			e.c.type = PQ_STRING;
			e.c.optional = 0;
			e.name = "element";
			schema_leaf(&t, &e);
		}
	}
	tw_i64(&t, 3, (int64_t)w->rows);
	tw_list(&t, 4, CT_STRUCT, w->ngroups);
	for (size_t g = 0; g < w->ngroups; g++) {
		const struct chunk_meta *m = &w->groups[g * (size_t)w->ncols];
		int64_t unc = 0, comp = 0;

		tw_begin(&t, 0);
		tw_list(&t, 1, CT_STRUCT, (size_t)w->ncols);
		for (int i = 0; i < w->ncols; i++) {
			const struct column *c = &w->cols[i];
			const struct chunk_meta *cm = &m[i];
			int dict = c->c.type == PQ_STRING;

			unc += cm->unc;
			comp += cm->comp;
			tw_begin(&t, 0);
			tw_i64(&t, 2, 0);
			tw_begin(&t, 3);
			tw_i32(&t, 1, phys(c->c.type));
			tw_list(&t, 2, CT_I32, dict ? 3 : 2);
			zz(b, E_PLAIN);
			zz(b, E_RLE);
			if (dict)
				zz(b, E_RLE_DICTIONARY);
			if (c->c.type == PQ_STRING_LIST) {
				tw_list(&t, 3, CT_BINARY, 3);
				b_varint(b, strlen(c->name));
				b_put(b, c->name, strlen(c->name));
				b_varint(b, 4);
				b_put(b, "list", 4);
				b_varint(b, 7);
				b_put(b, "element", 7);
			} else {
				tw_list(&t, 3, CT_BINARY, 1);
				b_varint(b, strlen(c->name));
				b_put(b, c->name, strlen(c->name));
			}
			tw_i32(&t, 4, CODEC_ZSTD);
			tw_i64(&t, 5, cm->nvalues);
			tw_i64(&t, 6, cm->unc);
			tw_i64(&t, 7, cm->comp);
			tw_i64(&t, 9, cm->data_off);
			if (cm->dict_off >= 0)
				tw_i64(&t, 11, cm->dict_off);
			if (c->c.type != PQ_STRING_LIST) {
				tw_begin(&t, 12);
				tw_i64(&t, 3, cm->nulls);
				if (cm->has_minmax && c->c.type != PQ_STRING) {
					struct buf v = { 0 };
					int n = c->c.type == PQ_BOOL ? 1 :
						phys(c->c.type) == T_INT32 ? 4 : 8;

					b_le(&v, (uint64_t)cm->max, n);
					tw_bin(&t, 5, v.p, v.n);
					v.n = 0;
					b_le(&v, (uint64_t)cm->min, n);
					tw_bin(&t, 6, v.p, v.n);
					b_free(&v);
				}
				tw_end(&t);
			}
			tw_end(&t);     /* ColumnMetaData */
			tw_end(&t);     /* ColumnChunk */
		}
		tw_i64(&t, 2, unc);
		tw_i64(&t, 3, (int64_t)w->group_nrows[g]);
		tw_i64(&t, 5, m[0].dict_off >= 0 ? m[0].dict_off : m[0].data_off);
		tw_i64(&t, 6, comp);
		tw_i16(&t, 7, (int16_t)g);
		tw_end(&t);
	}
	if (w->nkv) {
		tw_list(&t, 5, CT_STRUCT, w->nkv / 2);
		for (size_t i = 0; i < w->nkv; i += 2) {
			tw_begin(&t, 0);
			tw_bin(&t, 1, w->kv[i], strlen(w->kv[i]));
			tw_bin(&t, 2, w->kv[i + 1], strlen(w->kv[i + 1]));
			tw_end(&t);
		}
	}
	if (w->o.created_by)
		tw_bin(&t, 6, w->o.created_by, strlen(w->o.created_by));
	tw_list(&t, 7, CT_STRUCT, (size_t)w->ncols);
	for (int i = 0; i < w->ncols; i++) {
		tw_begin(&t, 0);
		tw_begin(&t, 1);            /* TYPE_ORDER */
		tw_end(&t);
		tw_end(&t);
	}
	b_byte(b, 0);
}

int pq_close(struct pq_writer *w, char *err, size_t errlen)
{
	struct buf b = { 0 };
	FILE *f;
	int rc = -1;

	if (w->failed)
		goto out;
	/* a file with no rows still has one (empty) row group's worth of
	   schema: write the footer alone */
	if (w->group_rows && flush_group(w))
		goto out;
	footer(w, &b);
	if (b.oom) {
		fail(w, "%s", "out of memory");
		goto out;
	}
	if (!(f = fopen(w->path, w->file_off ? "ab" : "wb"))) {
		fail(w, "cannot create %s", w->path);
		goto out;
	}
	if (!w->file_off && out_write(w, f, "PAR1", 4)) {
		fclose(f);
		goto out;
	}
	b_le(&b, b.n, 4);
	b_put(&b, "PAR1", 4);
	if (out_write(w, f, b.p, b.n) || b.oom) {
		fclose(f);
		goto out;
	}
	if (fclose(f)) {
		fail(w, "cannot write %s", w->path);
		goto out;
	}
	rc = 0;
out:
	b_free(&b);
	if (rc)
		snprintf(err, errlen, "%s", w->err);
	pq_abort(w);
	return rc;
}

void pq_abort(struct pq_writer *w)
{
	if (!w)
		return;
	for (int i = 0; w->cols && i < w->ncols; i++) {
		struct column *c = &w->cols[i];

		free(c->name);
		free(c->iv);
		free(c->idx);
		b_free(&c->plain);
		free(c->def);
		free(c->rep);
		b_free(&c->pages);
		free(c->refs);
		b_free(&c->dict);
		free(c->dent);
		free(c->hash);
	}
	for (size_t i = 0; i < w->nkv; i++)
		free(w->kv[i]);
	free(w->kv);
	free(w->cols);
	free(w->groups);
	free(w->group_nrows);
	free(w->path);
	free(w);
}
