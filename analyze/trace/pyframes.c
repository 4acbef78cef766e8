/*
 * pyframes.c - Python frames: line tables decoded per interpreter version,
 * and the pycode records of a trace by id (see pyframes.h).
 *
 * The decoders follow CPython's own PyCode_Addr2Line() of each version,
 * with addresses in bytes (offset * 2) as CPython counts them:
 *   3.9   co_lnotab: pairs (address delta, signed line delta); the line is
 *         first_line plus the line deltas of every pair whose address is
 *         at or before the instruction.
 *   3.10  co_linetable: pairs (address delta, line delta, -128: no line);
 *         ranges [start, end) with their line.
 *   3.11+ the location table: entries whose first byte has bit 7 set, code
 *         (bits 3..6) and length in code units - 1 (bits 0..2); line delta
 *         by code: 15 none (no line), 13 and 14 a signed varint, 10/11/12
 *         0/1/2, 0..9 the same line.
 * Everything is bounds-checked: a line table is input from a file.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/pyframes.h"
#include "trace/trace-read.h"

static int lnotab_line(int first, const uint8_t *p, size_t len, uint32_t addr, int *line)
{
	uint32_t a = 0;
	int l = first;

	for (size_t i = 0; i + 1 < len; i += 2) {
		a += p[i];
		if (a > addr)
			break;
		l += (int8_t)p[i + 1];
	}
	*line = l;
	return 0;
}

static int linetable310_line(int first, const uint8_t *p, size_t len, uint32_t addr, int *line)
{
	uint32_t start, end = 0;
	int computed = first, l = -1;

	for (size_t i = 0; i + 1 < len; i += 2) {
		start = end;
		end += p[i];
		if ((int8_t)p[i + 1] == -128) {
			l = -1;
		} else {
			computed += (int8_t)p[i + 1];
			l = computed;
		}
		if (start <= addr && addr < end) {
			*line = l;
			return 0;
		}
	}
	*line = first;
	return -1;
}

/* A varint of the location table at p[*i], within len; -1 when cut. */
static int varint(const uint8_t *p, size_t len, size_t *i, unsigned *val)
{
	unsigned v, shift = 0;
	uint8_t b;

	if (*i >= len)
		return -1;
	b = p[(*i)++];
	v = b & 63;
	while (b & 64) {
		if (*i >= len || shift > 24)
			return -1;
		b = p[(*i)++];
		shift += 6;
		v |= (unsigned)(b & 63) << shift;
	}
	*val = v;
	return 0;
}

static int loctable_line(int first, const uint8_t *p, size_t len, uint32_t addr, int *line)
{
	uint32_t start, end = 0;
	int computed = first;
	size_t i = 0;

	while (i < len) {
		uint8_t b = p[i];
		unsigned code = (b >> 3) & 15, u;
		int delta = 0, l;
		size_t j = i + 1;

		if (!(b & 128))
			break;      /* not the start of an entry: damaged */
		if (code == 13 || code == 14) {
			if (varint(p, len, &j, &u) < 0)
				break;
			delta = u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
		} else if (code >= 10 && code <= 12) {
			delta = (int)code - 10;
		}
		computed += delta;
		l = code == 15 ? -1 : computed;
		start = end;
		end += ((b & 7) + 1) * 2;
		if (start <= addr && addr < end) {
			*line = l;
			return 0;
		}
		i++;
		while (i < len && !(p[i] & 128))
			i++;
	}
	*line = first;
	return -1;
}

int py_line_at(unsigned py_version, int first_line, const void *linetable, size_t len,
	       uint32_t offset, int *line)
{
	uint32_t addr = offset * 2;

	if (py_version == 0x0309)
		return lnotab_line(first_line, linetable, len, addr, line);
	if (py_version == 0x030a)
		return linetable310_line(first_line, linetable, len, addr, line);
	if (py_version >= 0x030b && py_version <= 0x030d)
		return loctable_line(first_line, linetable, len, addr, line);
	*line = first_line;
	return -1;
}

int py_frame_resolve(const struct mt_pycode *code, const void *linetable, uint32_t offset,
		     int *line)
{
	return py_line_at(code->py_version, code->first_line, linetable, code->linetable_len,
			  offset, line);
}

/* --- the code objects of a trace -------------------------------------- */

struct py_codes {
	const struct mt_pycode **by_id;     /* index id, NULL where none */
	uint32_t n;
};

struct py_codes *py_codes_load(const struct trace *t)
{
	struct py_codes *c = calloc(1, sizeof *c);
	struct trace_iter it;
	struct trace_rec r;

	if (!c)
		return NULL;
	trace_iter_init(&it, t);
	while (trace_next(&it, &r)) {
		const struct mt_pycode *p = r.p;

		if (r.type != MT_REC_PYCODE)
			continue;
		if (p->id >= c->n) {
			uint32_t n = c->n ? c->n : 64;
			while (n <= p->id && n < (1u << 31))
				n *= 2;
			if (n <= p->id)
				continue;
			const struct mt_pycode **b = realloc(c->by_id, n * sizeof *b);
			if (!b) {
				py_codes_free(c);
				return NULL;
			}
			memset(b + c->n, 0, (n - c->n) * sizeof *b);
			c->by_id = b;
			c->n = n;
		}
		if (!c->by_id[p->id])
			c->by_id[p->id] = p;
	}
	return c;
}

void py_codes_free(struct py_codes *c)
{
	if (!c)
		return;
	free(c->by_id);
	free(c);
}

const struct mt_pycode *py_codes_get(const struct py_codes *c, uint32_t id)
{
	return c && id < c->n ? c->by_id[id] : NULL;
}

int py_codes_frame(const struct py_codes *c, uint64_t ip, struct py_frame *f)
{
	const struct mt_pycode *p = py_codes_get(c, MT_PYFRAME_CODE(ip));
	struct trace_bytes file, name, lt;

	if (!p)
		return -1;
	trace_pycode_strings(p, &file, &name, &lt);
	f->file = file.p;
	f->file_len = file.len;
	f->name = name.p;
	f->name_len = name.len;
	py_frame_resolve(p, lt.p, MT_PYFRAME_OFFSET(ip), &f->line);
	return 0;
}

static int contains(const char *s, size_t n, const char *what)
{
	size_t k = strlen(what);

	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(s + i, what, k))
			return 1;
	return 0;
}

int py_file_is_user(const char *file, size_t len)
{
	if (len == 0 || file[0] == '<')
		return 0;
	if (contains(file, len, "/site-packages/") || contains(file, len, "/dist-packages/"))
		return 0;
	/* the standard library: .../lib/python3.11/x.py (and lib64) */
	for (size_t i = 0; i + 12 <= len; i++) {
		if (memcmp(file + i, "/python", 7) || i < 4 ||
		    (memcmp(file + i - 4, "/lib", 4) && (i < 6 || memcmp(file + i - 6, "/lib64", 6))))
			continue;
		size_t j = i + 7;
		while (j < len && ((file[j] >= '0' && file[j] <= '9') || file[j] == '.'))
			j++;
		if (j > i + 7 && j < len && file[j] == '/')
			return 0;
	}
	return 1;
}
