/*
 * trace-read.c - the trace reader (see trace-read.h for the API).
 *
 * Design: the whole file is mapped read-only and walked twice with the same
 * code, walk(). trace_open() walks it once to validate every record and
 * count what it finds (and note each slab's start and the long records,
 * for stream.c), the slabs from a 1 MiB group boundary near the middle on
 * on a second thread; it refuses the file at the first bad record in file
 * order, so trace_next(), which walks again, never meets one and cannot
 * fail. Every bound is checked with 64-bit arithmetic on offsets into the
 * mapping before anything is read: a trace is untrusted input (and
 * fuzzed).
 *
 * The walk follows the slab rules of trace-format.h exactly: slabs sit at
 * header_size + k * slab_size; a slab without MT_SLAB_MAGIC is
 * skipped; inside a slab records follow each other until a zero head or the
 * slab end. A zero head with non-zero bytes after it is a record whose
 * writer died before storing the head: a torn record, counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace-read.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace reader reads little-endian traces in place"
#endif

#define MIN_SLAB 4096u
#define MAX_SLAB (16u * 1024 * 1024)
#define RELEASE_BYTES (1u << 20)    /* let go of slabs in groups this large:
                                       one madvise per slab costs more than
                                       the walk itself */

struct trace {
	char *path;
	const unsigned char *map;
	uint64_t size;
	int mapped;                 /* map is ours to munmap */
	uint32_t slab_size;
	uint32_t header_size;       /* offset of slab 0 */
	uint64_t nslabs;            /* slabs that start inside the file */
	uint64_t group;             /* slabs per release group */
	uint16_t *group_slabs;      /* slabs a walk enters, per group; NULL:
	                               nothing to let go of (not mapped) */
	uint16_t *group_left;       /* slabs walks have left since the group
	                               was last let go of */
	uint64_t *run;              /* [2]: slabs [run[0], run[1]) a merge has
	                               left and not let go of yet (many
	                               traces); NULL: not mapped */
	const struct mt_process *process;
	struct trace_exit exit;
	struct trace_stats stats;
	struct fw_stack_ref *fw_stacks;     /* sorted by id, ids unique */
	uint32_t nfw_stacks;
	const struct mt_fw_info **fw_infos; /* in file order */
	uint64_t *fw_info_times;
	uint32_t nfw_infos;
	struct trace_slab_info *slabinfo;   /* slabs with records, file order */
	size_t nslabinfo, cap_slabinfo;
	const void **longrec[3];            /* MODULE, STACK, NOTE records */
	uint32_t nlongrec[3], cap_longrec[3];
	const struct mt_driver *driver;     /* the last DRIVER record */
	uint64_t exit_offset;               /* of the EXIT record */
};

struct fw_stack_ref {
	uint32_t id;
	const struct mt_fw_stack *rec;
};

/* The walk's findings: damage counts and, on a bad record, the message. */
struct scan {
	uint64_t torn;
	char *err;
	size_t errlen;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Per-type rules: the least size, and whether the type is a long record. */
static int type_rule(unsigned type, uint32_t *min, int *is_long)
{
	static const struct { uint32_t min; int is_long; } rules[] = {
		[MT_REC_PROCESS] = { sizeof(struct mt_process), 1 },
		[MT_REC_MODULE] = { sizeof(struct mt_module), 1 },
		[MT_REC_STACK] = { sizeof(struct mt_stack), 1 },
		[MT_REC_ALLOC] = { sizeof(struct mt_event), 0 },
		[MT_REC_FREE] = { sizeof(struct mt_event), 0 },
		[MT_REC_ALLOC_EX] = { sizeof(struct mt_event_ex), 0 },
		[MT_REC_FREE_EX] = { sizeof(struct mt_event_ex), 0 },
		[MT_REC_POOL] = { sizeof(struct mt_pool), 0 },
		[MT_REC_MEMINFO] = { sizeof(struct mt_meminfo), 0 },
		[MT_REC_TIMEBASE] = { sizeof(struct mt_timebase), 0 },
		[MT_REC_DRIVER] = { sizeof(struct mt_driver), 0 },
		[MT_REC_NOTE] = { sizeof(struct mt_note), 1 },
		[MT_REC_PYCODE] = { sizeof(struct mt_pycode), 1 },
		[MT_REC_SHM] = { sizeof(struct mt_shm), 1 },
		[MT_REC_EXIT] = { sizeof(struct mt_exit), 0 },
		[MT_REC_FW_EVENT] = { sizeof(struct mt_fw_event), 0 },
		[MT_REC_FW_STACK] = { sizeof(struct mt_fw_stack), 1 },
		[MT_REC_FW_INFO] = { sizeof(struct mt_fw_info), 1 },
		[MT_REC_OWNER] = { sizeof(struct mt_owner), 0 },
		[MT_REC_RANGE] = { sizeof(struct mt_range), 0 },
		[MT_REC_STRING] = { sizeof(struct mt_string), 1 },
		[MT_REC_NVTX_MEM] = { sizeof(struct mt_nvtx_mem), 1 },
	};

	if (type == 0 || type >= sizeof(rules) / sizeof(rules[0]))
		return -1;
	*min = rules[type].min;
	*is_long = rules[type].is_long;
	return 0;
}

static int nonzero(const unsigned char *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return 1;
	return 0;
}

/*
 * Checks what lies inside a record of a known type whose size is already
 * within the slab and at least the type's minimum: string and array lengths.
 * Returns 0, or -1 with a message.
 */
static int check_body(const unsigned char *p, uint32_t size, uint64_t off, char *err,
		      size_t errlen)
{
	uint64_t need = 0;
	const char *what = NULL;

	switch (((const struct mt_head *)p)->type) {
	case MT_REC_PROCESS: {
		const struct mt_process *r = (const void *)p;
		need = sizeof(*r) + (uint64_t)r->hostname_len + r->exe_len + r->cmdline_len;
		what = "strings";
		break;
	}
	case MT_REC_MODULE: {
		const struct mt_module *r = (const void *)p;
		need = sizeof(*r) + (uint64_t)r->build_id_len + r->path_len;
		what = "strings";
		break;
	}
	case MT_REC_STACK: {
		const struct mt_stack *r = (const void *)p;
		if (r->id == 0) {
			set_err(err, errlen, "corrupt stack record at offset %#llx: id 0",
				(unsigned long long)off);
			return -1;
		}
		need = sizeof(*r) + (uint64_t)r->depth * sizeof(r->ips[0]);
		what = "frames";
		break;
	}
	case MT_REC_NOTE: {
		const struct mt_note *r = (const void *)p;
		need = sizeof(*r) + (uint64_t)r->len;
		what = "strings";
		break;
	}
	case MT_REC_PYCODE: {
		const struct mt_pycode *r = (const void *)p;
		if (r->id == 0) {
			set_err(err, errlen, "corrupt pycode record at offset %#llx: id 0",
				(unsigned long long)off);
			return -1;
		}
		need = sizeof(*r) + (uint64_t)r->filename_len + r->name_len + r->linetable_len;
		what = "strings";
		break;
	}
	case MT_REC_SHM: {
		const struct mt_shm *r = (const void *)p;
		need = sizeof(*r) + (uint64_t)r->name_len;
		what = "strings";
		break;
	}
	case MT_REC_FW_EVENT:
		if (((const struct mt_head *)p)->a == 0) {
			set_err(err, errlen, "corrupt fw_event record at offset %#llx: action 0",
				(unsigned long long)off);
			return -1;
		}
		break;
	case MT_REC_FW_STACK: {
		const struct mt_fw_stack *r = (const void *)p;
		if (r->id == 0) {
			set_err(err, errlen, "corrupt fw_stack record at offset %#llx: id 0",
				(unsigned long long)off);
			return -1;
		}
		/* Each frame is at least its 8-byte head: the walk is bounded
		   by the record size, whatever nframes says. */
		need = sizeof(*r);
		for (uint32_t i = 0; i < r->nframes && need <= size; i++) {
			struct mt_fw_frame f;   /* frames are packed: maybe unaligned */
			if (need + sizeof(f) > size) {
				need += sizeof(f);
				break;
			}
			memcpy(&f, p + need, sizeof(f));
			need += sizeof(f) + (uint64_t)f.file_len + f.func_len;
		}
		what = "frames";
		break;
	}
	case MT_REC_FW_INFO: {
		const struct mt_fw_info *r = (const void *)p;
		need = sizeof(*r) + (uint64_t)r->len;
		what = "strings";
		break;
	}
	case MT_REC_STRING: {
		const struct mt_string *r = (const void *)p;
		if (r->id == 0) {
			set_err(err, errlen, "corrupt string record at offset %#llx: id 0",
				(unsigned long long)off);
			return -1;
		}
		need = sizeof(*r) + (uint64_t)r->len;
		what = "strings";
		break;
	}
	case MT_REC_RANGE: {
		/* ops this reader does not know are skipped by the analysis;
		   START, END and NAME_THREAD carry their id */
		uint8_t op = ((const struct mt_head *)p)->a;
		if (op == 0) {
			set_err(err, errlen, "corrupt range record at offset %#llx: op 0",
				(unsigned long long)off);
			return -1;
		}
		if (op == MT_RANGE_START || op == MT_RANGE_END || op == MT_RANGE_NAME_THREAD)
			need = sizeof(struct mt_range_id);
		what = "its id";
		break;
	}
	case MT_REC_NVTX_MEM: {
		/* ops this reader does not know are skipped by the analysis */
		const struct mt_nvtx_mem *r = (const void *)p;
		if (r->lh.h.a == 0) {
			set_err(err, errlen, "corrupt nvtx_mem record at offset %#llx: op 0",
				(unsigned long long)off);
			return -1;
		}
		need = sizeof(*r) + (uint64_t)r->domain_len + r->name_len;
		what = "names";
		break;
	}
	}
	if (need > size) {
		set_err(err, errlen,
			"corrupt %s record at offset %#llx: %s need %llu bytes, the record has %u",
			trace_type_name(((const struct mt_head *)p)->type),
			(unsigned long long)off, what, (unsigned long long)need, size);
		return -1;
	}
	return 0;
}

/* The record's own time offset, for types that have one. */
static int time_delta(const unsigned char *p, uint32_t *delta)
{
	switch (((const struct mt_head *)p)->type) {
	case MT_REC_ALLOC: case MT_REC_FREE: case MT_REC_ALLOC_EX: case MT_REC_FREE_EX:
		*delta = ((const struct mt_event *)p)->time_delta;
		return 1;
	case MT_REC_POOL:
		*delta = ((const struct mt_pool *)p)->time_delta;
		return 1;
	case MT_REC_MEMINFO:
		*delta = ((const struct mt_meminfo *)p)->time_delta;
		return 1;
	case MT_REC_MODULE:
		*delta = ((const struct mt_module *)p)->time_delta;
		return 1;
	case MT_REC_NOTE:
		*delta = ((const struct mt_note *)p)->time_delta;
		return 1;
	case MT_REC_SHM:
		*delta = ((const struct mt_shm *)p)->time_delta;
		return 1;
	case MT_REC_EXIT:
		*delta = ((const struct mt_exit *)p)->time_delta;
		return 1;
	case MT_REC_FW_EVENT:
		*delta = ((const struct mt_fw_event *)p)->time_delta;
		return 1;
	case MT_REC_FW_INFO:
		*delta = ((const struct mt_fw_info *)p)->time_delta;
		return 1;
	case MT_REC_RANGE:
		*delta = ((const struct mt_range *)p)->time_delta;
		return 1;
	case MT_REC_NVTX_MEM:
		*delta = ((const struct mt_nvtx_mem *)p)->time_delta;
		return 1;
	}
	return 0;
}

/* Lets go of the file bytes [from, to) in this process's memory. */
static void trace_release(const struct trace *t, uint64_t from, uint64_t to)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!t->mapped || from >= to)
		return;
	from &= ~(page - 1);
	if (from >= t->size)
		return;
	to = to > t->size ? t->size : to;
	(void)madvise((void *)(t->map + from), (size_t)(to - from), MADV_DONTNEED);
}

/* Traces mapped now, by all threads: with more than MANY_TRACES (the
   ranks of a run, merged side by side), a merge lets go of the slabs it
   has left in runs of at most MANY_RESIDENT / traces bytes, not by group,
   so that what stays resident does not grow by a group per trace (1 GB
   at 1,024 traces). A run, not each slab: every madvise flushes the TLB
   of each CPU the process runs on, an interrupt each, and at one call a
   slab that was 27% of the CPU time of 256 traces merged. */
#define MANY_TRACES 16
#define MANY_RESIDENT (64u << 20)
static unsigned mapped_traces;

/* Lets go of group g of slabs. */
static void release_group(const struct trace *t, uint64_t g)
{
	uint64_t start = t->header_size + g * t->group * t->slab_size;

	trace_release(t, start, start + t->group * t->slab_size);
}

/* Lets go of the run of left slabs (trace_release() of nothing when empty). */
static void release_run(const struct trace *t)
{
	uint64_t *r = t->run;

	trace_release(t, t->header_size + r[0] * t->slab_size, t->header_size + r[1] * t->slab_size);
	r[0] = r[1] = 0;
}

/*
 * A merge is done with slab k, with many traces open: k joins the run of
 * slabs left before it when it is next to it, and the run is let go of
 * when it reaches its length or a slab elsewhere starts a new one.
 */
static void merge_left(const struct trace *t, uint64_t k, unsigned traces)
{
	uint64_t *r = t->run, most = MANY_RESIDENT / traces / t->slab_size;

	if (r[0] == r[1]) {
		r[0] = k;
		r[1] = k + 1;
	} else if (k == r[1]) {
		r[1]++;
	} else if (k + 1 == r[0]) {
		r[0]--;
	} else {
		release_run(t);
		r[0] = k;
		r[1] = k + 1;
	}
	if (r[1] - r[0] >= (most ? most : 1))
		release_run(t);
}

/*
 * A walk is done with slab k. Once walks have left every slab of its group,
 * the group's pages leave this process's memory (they stay in the page
 * cache): a walk over the whole file, or a merge of its slabs, keeps the
 * slabs in use resident, not the file. With many traces open, a merge
 * (merging) lets go of its slabs in shorter runs (merge_left()); a walk of
 * the whole file goes in file order, so that its groups are enough.
 */
static void slab_left(const struct trace *t, uint64_t k, int merging)
{
	uint64_t g = k / t->group;
	unsigned traces = __atomic_load_n(&mapped_traces, __ATOMIC_RELAXED);

	if (!t->group_slabs)
		return;
	if (merging && t->run && traces > MANY_TRACES)
		merge_left(t, k, traces);
	if (++t->group_left[g] >= t->group_slabs[g]) {
		t->group_left[g] = 0;
		release_group(t, g);
	}
}

void trace_slab_iter_init(struct trace_slab_iter *it, const void *slab, size_t avail,
			  uint32_t version_major)
{
	memset(it, 0, sizeof(*it));
	it->slab = slab;
	it->avail = avail;
	it->version = version_major;
}

void trace_slab_iter_more(struct trace_slab_iter *it, size_t avail)
{
	if (avail > it->avail)
		it->avail = avail;
}

/* A LEB128 varint of at most 64 bits from *q, before end; -1 if bad. */
static int get_u(const unsigned char **q, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned sh = 0; *q < end && sh < 64; sh += 7) {
		unsigned char b = *(*q)++;

		if (sh == 63 && b > 1)
			return -1;
		r |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

/*
 * Decodes the compact event q..end (its body, tag first) into it->dec and
 * rec: 1, 0 for a reserved class (skipped), -1 if malformed (what in *why).
 * The state moves on only for a good record.
 */
static int decode_compact(struct trace_slab_iter *it, const unsigned char *q,
			  const unsigned char *end, struct trace_rec *rec, const char **why)
{
	struct mt_compact_state *c = &it->c;
	unsigned tag = *q++, cls = tag & MT_CT_CLASS;
	uint64_t dt, da, api = 0, bytes = 0, stack, result = 0, x1 = 0, x2 = 0, time;
	uint32_t kda;

	if (cls == 3)
		return 0;
	*why = "bad varint";
	if (get_u(&q, end, &dt) < 0 || get_u(&q, end, &da) < 0)
		return -1;
	if (tag & MT_CT_SAME_KDA) {
		kda = c->kda[cls];
	} else {
		if (end - q < 2)
			return -1;
		kda = q[0] | (uint32_t)q[1] << 8;
		q += 2;
		if (get_u(&q, end, &api) < 0)
			return -1;
		*why = "api out of range";
		if (api > UINT16_MAX)
			return -1;
		kda |= (uint32_t)api << 16;
	}
	*why = "bad varint";
	if (!(tag & MT_CT_BYTES0) && get_u(&q, end, &bytes) < 0)
		return -1;
	stack = c->stack[cls];
	if (!(tag & MT_CT_SAME_STACK) && get_u(&q, end, &stack) < 0)
		return -1;
	if ((tag & MT_CT_RESULT) && get_u(&q, end, &result) < 0)
		return -1;
	if ((tag & MT_CT_EX) && (tag & MT_CT_SAME_X)) {
		x1 = c->x1;
		x2 = c->x2;
	} else if ((tag & MT_CT_EX) && (get_u(&q, end, &x1) < 0 || get_u(&q, end, &x2) < 0)) {
		return -1;
	}
	*why = "a field out of range";
	if (stack > UINT32_MAX || result > UINT16_MAX || (cls == MT_CT_FW && (api || result)))
		return -1;
	*why = "bytes after its fields";
	if (q != end)
		return -1;
	*why = "action 0";
	if (cls == MT_CT_FW && !(kda & 0xff))
		return -1;

	time = c->time + unzigzag(dt);
	c->time = time;
	c->addr += unzigzag(da);
	c->kda[cls] = kda;
	c->stack[cls] = (uint32_t)stack;
	if ((tag & MT_CT_EX) && !(tag & MT_CT_SAME_X)) {
		c->x1 = x1;
		c->x2 = x2;
	}
	memset(&it->dec, 0, sizeof(it->dec));
	if (cls == MT_CT_FW) {
		struct mt_fw_event *e = &it->dec.fw;

		e->h = (struct mt_head){ MT_REC_FW_EVENT, sizeof(*e) / 8, (uint8_t)kda,
					 (int8_t)(kda >> 8) };
		e->time_delta = (uint32_t)(time - it->base);
		e->addr = c->addr;
		e->size = bytes;
		e->stream = x1;
		e->x = x2;
		e->stack_id = (uint32_t)stack;
		rec->size = sizeof(*e);
	} else {
		struct mt_event *e = &it->dec.ev.e;
		uint8_t type = (cls == MT_CT_FREE ? MT_REC_FREE : MT_REC_ALLOC) +
			       (tag & MT_CT_EX ? 2 : 0);

		rec->size = tag & MT_CT_EX ? sizeof(struct mt_event_ex) : sizeof(struct mt_event);
		e->h = (struct mt_head){ type, (uint8_t)(rec->size / 8), (uint8_t)kda,
					 (int8_t)(kda >> 8) };
		e->time_delta = (uint32_t)(time - it->base);
		e->addr = c->addr;
		e->bytes = bytes;
		e->stack_id = (uint32_t)stack;
		e->api = (uint16_t)(kda >> 16);
		e->result = (uint16_t)result;
		it->dec.ev.x1 = x1;
		it->dec.ev.x2 = x2;
	}
	rec->p = &it->dec;
	rec->type = it->dec.ev.e.h.type;
	rec->tid = it->tid;
	rec->time_ns = time;
	return 1;
}

/* The next record of the slab: see trace-read.h. */
int trace_slab_iter_next(struct trace_slab_iter *it, struct trace_rec *rec)
{
	const uint64_t ss = it->slab_size;
	uint64_t off, size, fo;
	const unsigned char *p;
	struct mt_head h;
	uint32_t word, min, delta;
	int is_long;

	it->zero = 0;
	it->decoded = 0;
	if (it->pos == 0) {
		const struct mt_slab_header *sh = (const void *)it->slab;

		if (it->avail < sizeof(*sh) ||
		    __atomic_load_n(&sh->magic, __ATOMIC_ACQUIRE) != MT_SLAB_MAGIC)
			return 0;
		it->tid = sh->tid;
		it->base = sh->time_base;
		mt_compact_reset(&it->c, it->base);
		it->pos = sizeof(*sh);
	}
	for (;;) {
		unsigned b;

		off = it->pos;
		fo = it->file_off + off;
		p = it->slab + off;
		if (off + 1 > it->avail)
			return 0;
		if (it->version < 2)
			break;
		b = __atomic_load_n(p, __ATOMIC_ACQUIRE);
		if (b == 0) {
			it->zero = 1;   /* in format 2 the first byte is enough */
			return 0;
		}
		if (b < MT_COMPACT)
			break;
		/* a compact record (format 2), or padding */
		size = 1 + (b & 0x7f);
		if (off + size > it->avail) {
			if (!ss || off + size <= ss)
				return 0;
			set_err(it->err, sizeof(it->err),
				"corrupt compact record at offset %#llx: size %llu runs past the slab end",
				(unsigned long long)fo, (unsigned long long)size);
			return -1;
		}
		it->pos = off + size;
		if (size > 1) {
			const char *why = "";
			int r = decode_compact(it, p + 1, p + size, rec, &why);

			if (r < 0) {
				set_err(it->err, sizeof(it->err),
					"corrupt compact record at offset %#llx: %s",
					(unsigned long long)fo, why);
				it->pos = off;
				return -1;
			}
			if (r > 0) {
				rec->offset = fo;
				it->decoded = 1;
				return 1;
			}
		}
	}
	if (off & 7) {
		set_err(it->err, sizeof(it->err), "corrupt record at offset %#llx: not 8-byte aligned",
			(unsigned long long)fo);
		return -1;
	}
	if (off + sizeof(h) > it->avail)
		return 0;
	word = __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);
	memcpy(&h, &word, sizeof(h));
	if (word == 0) {
		it->zero = 1;
		return 0;
	}
	if (h.type == 0) {
		set_err(it->err, sizeof(it->err), "corrupt record at offset %#llx: type 0",
			(unsigned long long)fo);
		return -1;
	}
	if (h.size8) {
		size = h.size8 * 8u;
	} else {
		if (off + sizeof(struct mt_long_head) > it->avail) {
			if (!ss || it->avail < ss)
				return 0;
			set_err(it->err, sizeof(it->err),
				"corrupt record at offset %#llx: long head runs past the slab end",
				(unsigned long long)fo);
			return -1;
		}
		size = ((const struct mt_long_head *)p)->size;
		if (size < sizeof(struct mt_long_head) || size % 8) {
			set_err(it->err, sizeof(it->err), "corrupt record at offset %#llx: bad size %llu",
				(unsigned long long)fo, (unsigned long long)size);
			return -1;
		}
	}
	if (off + size > it->avail) {
		if (!ss || off + size <= ss)
			return 0;   /* not there yet, or the file lost its end */
		set_err(it->err, sizeof(it->err),
			"corrupt record at offset %#llx: size %llu runs past the slab end",
			(unsigned long long)fo, (unsigned long long)size);
		return -1;
	}
	if (type_rule(h.type, &min, &is_long) == 0) {
		if (is_long != !h.size8) {
			set_err(it->err, sizeof(it->err),
				"corrupt %s record at offset %#llx: %s size encoding",
				trace_type_name(h.type), (unsigned long long)fo,
				h.size8 ? "short" : "long");
			return -1;
		}
		if (size < min) {
			set_err(it->err, sizeof(it->err),
				"corrupt %s record at offset %#llx: size %llu, at least %u expected",
				trace_type_name(h.type), (unsigned long long)fo,
				(unsigned long long)size, min);
			return -1;
		}
		if (check_body(p, (uint32_t)size, fo, it->err, sizeof(it->err)) < 0)
			return -1;
	}

	if (h.type == MT_REC_TIMEBASE)
		it->base = ((const struct mt_timebase *)p)->time_base;
	if (h.type == MT_REC_OWNER) {
		it->tid = ((const struct mt_owner *)p)->tid;
		it->base = ((const struct mt_owner *)p)->time_base;
		mt_compact_reset(&it->c, it->base);
	}
	rec->p = p;
	rec->size = (uint32_t)size;
	rec->type = h.type;
	rec->tid = it->tid;
	rec->time_ns = it->base;
	if (time_delta(p, &delta))
		rec->time_ns += delta;
	rec->offset = fo;
	it->pos = off + size;
	return 1;
}

/*
 * The one walk: finds the next record after it. Returns 1 with rec filled,
 * 0 at the end of the file (or of the slab, with one_slab), -1 on a bad
 * record (message in sc->err). sc may be NULL once the file is known to be
 * valid.
 */
static int walk(struct trace_iter *it, struct trace_rec *rec, struct scan *sc, int one_slab)
{
	const struct trace *t = it->t;
	const uint64_t slab = t->slab_size;
	struct scan none = { 0, NULL, 0 };

	if (!sc)
		sc = &none;
	for (;;) {
		struct trace_slab_iter *si = &it->si;
		int r;

		if (!it->in_slab) {
			uint64_t start, end;
			const struct mt_slab_header *sh;

			if (one_slab || it->slab >= t->nslabs)
				return 0;
			start = t->header_size + it->slab * slab;
			end = start + slab < t->size ? start + slab : t->size;
			it->slab++;
			if (end - start < sizeof(*sh))
				continue;
			sh = (const void *)(t->map + start);
			if (sh->magic != MT_SLAB_MAGIC)
				continue;
			trace_slab_iter_init(si, sh, end - start,
					     ((const struct mt_file_header *)t->map)->version);
			si->slab_size = slab;
			si->file_off = start;
			it->in_slab = 1;
		}
		r = trace_slab_iter_next(si, rec);
		if (r == 1)
			return 1;
		if (r < 0) {
			set_err(sc->err, sc->errlen, "'%s': %s", t->path, si->err);
			return -1;
		}
		if (trace_slab_torn(si))
			sc->torn++;
		it->in_slab = 0;
		if (!one_slab)
			slab_left(t, it->slab - 1, 0);
	}
}

static struct trace *fail(struct trace *t, int e, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	trace_close(t);
	errno = e;
	return NULL;
}

/* Checks the file header; 0, or -1 with a message and errno EINVAL. */
static int check_header(struct trace *t, char *err, size_t errlen)
{
	const struct mt_file_header *fh = (const void *)t->map;
	uint32_t ss;

	if (t->size < sizeof(fh->magic) || memcmp(fh->magic, MT_MAGIC, sizeof(fh->magic))) {
		set_err(err, errlen, "'%s': not a memtrace trace (bad magic)", t->path);
		return -1;
	}
	if (t->size < MT_FILE_HEADER_SIZE) {
		set_err(err, errlen, "'%s': truncated trace header (%llu of %d bytes)", t->path,
			(unsigned long long)t->size, MT_FILE_HEADER_SIZE);
		return -1;
	}
	if (fh->version > MT_FORMAT_VERSION) {
		set_err(err, errlen, "'%s': trace format %u is newer than this memtrace (reads up to %d)",
			t->path, fh->version, MT_FORMAT_VERSION);
		return -1;
	}
	if (fh->version == 0) {
		set_err(err, errlen, "'%s': bad trace format version 0", t->path);
		return -1;
	}
	/* The first slab sits on a page boundary, so it can be mapped. */
	if (fh->header_size < MT_FILE_HEADER_SIZE || fh->header_size % 4096 ||
	    fh->header_size > MAX_SLAB) {
		set_err(err, errlen, "'%s': bad header size %u (a multiple of 4096 up to %u expected)",
			t->path, fh->header_size, MAX_SLAB);
		return -1;
	}
	ss = fh->slab_size;
	if (ss < MIN_SLAB || ss > MAX_SLAB || (ss & (ss - 1))) {
		set_err(err, errlen, "'%s': bad slab size %u (a power of two from %u to %u expected)",
			t->path, ss, MIN_SLAB, MAX_SLAB);
		return -1;
	}
	t->slab_size = ss;
	t->header_size = fh->header_size;
	if (t->size > t->header_size)
		t->nslabs = (t->size - t->header_size + ss - 1) / ss;
	return 0;
}

static int fw_stack_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct fw_stack_ref *)a)->id, y = ((const struct fw_stack_ref *)b)->id;

	return x < y ? -1 : x > y;
}

/* Notes a framework stack or info record for the accessors; -1 on ENOMEM. */
static int index_fw(struct trace *t, const struct trace_rec *rec, uint32_t *cap_s, uint32_t *cap_i)
{
	if (rec->type == MT_REC_FW_STACK) {
		if (t->nfw_stacks == *cap_s) {
			uint32_t cap = *cap_s ? *cap_s * 2 : 64;
			void *p = realloc(t->fw_stacks, cap * sizeof(*t->fw_stacks));
			if (!p)
				return -1;
			t->fw_stacks = p;
			*cap_s = cap;
		}
		t->fw_stacks[t->nfw_stacks].id = ((const struct mt_fw_stack *)rec->p)->id;
		t->fw_stacks[t->nfw_stacks++].rec = rec->p;
	} else if (rec->type == MT_REC_FW_INFO) {
		if (t->nfw_infos == *cap_i) {
			uint32_t cap = *cap_i ? *cap_i * 2 : 8;
			void *p = realloc(t->fw_infos, cap * sizeof(*t->fw_infos));
			if (!p)
				return -1;
			t->fw_infos = p;
			p = realloc(t->fw_info_times, cap * sizeof(*t->fw_info_times));
			if (!p)
				return -1;
			t->fw_info_times = p;
			*cap_i = cap;
		}
		t->fw_info_times[t->nfw_infos] = rec->time_ns;
		t->fw_infos[t->nfw_infos++] = rec->p;
	}
	return 0;
}

/* Sorts the FW stacks by id; a second stack with the same id is damage. */
static int sort_fw_stacks(struct trace *t, char *err, size_t errlen)
{
	if (t->nfw_stacks > 1)
		qsort(t->fw_stacks, t->nfw_stacks, sizeof(*t->fw_stacks), fw_stack_cmp);
	for (uint32_t i = 1; i < t->nfw_stacks; i++)
		if (t->fw_stacks[i].id == t->fw_stacks[i - 1].id) {
			const struct fw_stack_ref *a = &t->fw_stacks[i - 1], *b = &t->fw_stacks[i];
			const void *later = (const void *)a->rec > (const void *)b->rec ? a->rec : b->rec;
			trace_second_fw_stack(err, errlen, t->path,
					      (uint64_t)((const unsigned char *)later - t->map), b->id);
			return -1;
		}
	return 0;
}

/* A record whose time orders the analysis's state (stream.c merges the
   others at the time of the next such record of their slab). */
static int orders_state(uint8_t type)
{
	return (type >= MT_REC_ALLOC && type <= MT_REC_FREE_EX) || type == MT_REC_POOL ||
	       type == MT_REC_MEMINFO || type == MT_REC_SHM || type == MT_REC_FW_EVENT ||
	       type == MT_REC_RANGE || type == MT_REC_NVTX_MEM;
}

/* Index in longrec[] of a type noted there, or -1. */
static int longrec_index(uint8_t type)
{
	return type == MT_REC_MODULE ? 0 : type == MT_REC_STACK ? 1 : type == MT_REC_NOTE ? 2 : -1;
}

/*
 * Notes rec for trace_slabs() and trace_long_records(); new: rec is the first
 * of its slab, it the walk just after it. -1 on ENOMEM.
 */
static int note_rec(struct trace *t, const struct trace_iter *it, const struct trace_rec *rec,
		    int new)
{
	struct trace_slab_info *si;
	int li;

	if (new) {
		if (t->nslabinfo == t->cap_slabinfo) {
			size_t cap = t->cap_slabinfo ? t->cap_slabinfo * 2 : 16;
			void *p = realloc(t->slabinfo, cap * sizeof(*t->slabinfo));

			if (!p)
				return -1;
			t->slabinfo = p;
			t->cap_slabinfo = cap;
		}
		si = &t->slabinfo[t->nslabinfo++];
		si->it = *it;
		si->first = *rec;
		si->min_t = si->max_t = rec->time_ns;
		si->due_offset = UINT64_MAX;
		si->due_time = rec->time_ns;
		si->due_type = rec->type;
	} else {
		si = &t->slabinfo[t->nslabinfo - 1];
		if (rec->time_ns < si->min_t)
			si->min_t = rec->time_ns;
		if (rec->time_ns > si->max_t)
			si->max_t = rec->time_ns;
	}
	trace_span_note(&si->span, rec, new);
	if (si->due_offset == UINT64_MAX && orders_state(rec->type)) {
		si->due_time = rec->time_ns;
		si->due_offset = rec->offset;
		si->due_type = rec->type;
	}
	if (rec->type == MT_REC_SHM)
		t->stats.shm++;
	else if (rec->type == MT_REC_DRIVER)
		t->driver = rec->p;
	li = longrec_index(rec->type);
	if (li >= 0) {
		if (t->nlongrec[li] == t->cap_longrec[li]) {
			uint32_t cap = t->cap_longrec[li] ? t->cap_longrec[li] * 2 : 16;
			void *p = realloc(t->longrec[li], cap * sizeof(void *));

			if (!p)
				return -1;
			t->longrec[li] = p;
			t->cap_longrec[li] = cap;
		}
		t->longrec[li][t->nlongrec[li]++] = rec->p;
	}
	return 0;
}

/* Outcomes of check_slabs() besides 0. */
enum { BAD_RECORD = -1, NO_MEMORY = -2, SECOND_EXIT = -3 };

/*
 * Walks the slabs of t from slab from on to t->nslabs, checking each
 * record and noting what it finds in t; 0, or an outcome above with the
 * message in sc->err.
 */
static int check_slabs(struct trace *t, uint64_t from, struct scan *sc)
{
	const struct mt_file_header *fh = (const void *)t->map;
	uint64_t wshift = fh->start_wall_ns - fh->start_mono_ns, cur_slab = UINT64_MAX;
	struct trace_iter it;
	struct trace_rec rec;
	uint32_t cap_s = 0, cap_i = 0;
	int r;

	t->stats.last_wall_ns = (int64_t)fh->start_wall_ns;
	trace_iter_init(&it, t);
	it.slab = from;
	while ((r = walk(&it, &rec, sc, 0)) == 1) {
		/* unsigned: hostile times must wrap, not overflow (found by fuzzing) */
		int64_t w = (int64_t)(rec.time_ns + wshift);

		if (w > t->stats.last_wall_ns)
			t->stats.last_wall_ns = w;
		if (note_rec(t, &it, &rec, it.slab != cur_slab) < 0)
			return NO_MEMORY;
		cur_slab = it.slab;
		t->stats.records++;
		if (rec.type >= MT_REC_ALLOC && rec.type <= MT_REC_FREE_EX)
			t->stats.events++;
		if (rec.type == MT_REC_FW_EVENT)
			t->stats.fw_events++;
		if ((rec.type == MT_REC_FW_STACK || rec.type == MT_REC_FW_INFO) &&
		    index_fw(t, &rec, &cap_s, &cap_i) < 0)
			return NO_MEMORY;
		if (rec.type == MT_REC_PROCESS && !t->process)
			t->process = rec.p;
		if (rec.type == MT_REC_EXIT) {
			const struct mt_exit *x = rec.p;

			/* A process ends once: two ends is a damaged file. */
			if (t->exit.recorded) {
				trace_second_exit(sc->err, sc->errlen, t->path, rec.offset);
				return SECOND_EXIT;
			}
			t->exit.recorded = 1;
			t->exit.how = x->h.a;
			t->exit.status = x->status;
			t->exit.time_ns = rec.time_ns;
			t->exit.tid = rec.tid;
			t->exit_offset = rec.offset;
		}
		if (!trace_type_name(rec.type))
			t->stats.unknown++;
	}
	return r < 0 ? BAD_RECORD : 0;
}

/* The second half of a check on another thread: a copy of the trace that
   notes what it finds in its own arrays. */
struct half {
	struct trace t;
	uint64_t from;
	struct scan sc;
	char err[512];
	int r;
};

static void *check_half(void *arg)
{
	struct half *h = arg;

	h->r = check_slabs(&h->t, h->from, &h->sc);
	return NULL;
}

static void free_found(struct trace *t)
{
	free(t->fw_stacks);
	free(t->fw_infos);
	free(t->fw_info_times);
	free(t->slabinfo);
	for (int i = 0; i < 3; i++)
		free(t->longrec[i]);
}

/* dst[*n..] = src[0..m): grows *dst to hold them; -1 on ENOMEM. */
static int append(void **dst, const void *src, size_t n, size_t m, size_t elem)
{
	void *p;

	if (!m)
		return 0;
	if (!(p = realloc(*dst, (n + m) * elem)))
		return -1;
	memcpy((char *)p + n * elem, src, m * elem);
	*dst = p;
	return 0;
}

/* Adds what the second half h found after what t found; -1 on ENOMEM. */
static int join_half(struct trace *t, struct half *h)
{
	struct trace *u = &h->t;
	size_t n0 = t->nslabinfo;

	if (append((void **)&t->slabinfo, u->slabinfo, t->nslabinfo, u->nslabinfo,
		   sizeof(*t->slabinfo)) ||
	    append((void **)&t->fw_stacks, u->fw_stacks, t->nfw_stacks, u->nfw_stacks,
		   sizeof(*t->fw_stacks)) ||
	    append((void **)&t->fw_infos, u->fw_infos, t->nfw_infos, u->nfw_infos,
		   sizeof(*t->fw_infos)) ||
	    append((void **)&t->fw_info_times, u->fw_info_times, t->nfw_infos, u->nfw_infos,
		   sizeof(*t->fw_info_times)))
		return -1;
	for (int i = 0; i < 3; i++)
		if (append((void **)&t->longrec[i], u->longrec[i], t->nlongrec[i], u->nlongrec[i],
			   sizeof(void *)))
			return -1;
	t->nslabinfo += u->nslabinfo;
	t->cap_slabinfo = t->nslabinfo;
	for (size_t k = n0; k < t->nslabinfo; k++)
		t->slabinfo[k].it.t = t;
	t->nfw_stacks += u->nfw_stacks;
	t->nfw_infos += u->nfw_infos;
	for (int i = 0; i < 3; i++) {
		t->nlongrec[i] += u->nlongrec[i];
		t->cap_longrec[i] = t->nlongrec[i];
	}
	if (!t->process)
		t->process = u->process;
	if (u->driver)
		t->driver = u->driver;
	if (!t->exit.recorded) {
		t->exit = u->exit;
		t->exit_offset = u->exit_offset;
	}
	t->stats.records += u->stats.records;
	t->stats.events += u->stats.events;
	t->stats.fw_events += u->stats.fw_events;
	t->stats.unknown += u->stats.unknown;
	t->stats.shm += u->stats.shm;
	if (u->stats.last_wall_ns > t->stats.last_wall_ns)
		t->stats.last_wall_ns = u->stats.last_wall_ns;
	return 0;
}

/*
 * Checks the slabs of t, those of the second half (from a group boundary
 * on) on a second thread when the file has two groups or more (2 MiB):
 * slabs decode on their
 * own, so two halves take half the time before the pass can start. The
 * outcome and message are those of one walk in file order: the first
 * half's failure, else a second exit record across the halves, else the
 * second half's failure.
 */
static int check_all(struct trace *t, struct scan *sc)
{
	uint64_t n = t->nslabs, mid = (n / 2 / t->group) * t->group;
	struct half *h;
	pthread_t th;
	int r;

	if (mid == 0 || !(h = calloc(1, sizeof(*h))))
		return check_slabs(t, 0, sc);
	h->t = *t;
	h->from = mid;
	h->sc.err = h->err;
	h->sc.errlen = sizeof(h->err);
	if (pthread_create(&th, NULL, check_half, h)) {
		free(h);
		return check_slabs(t, 0, sc);
	}
	t->nslabs = mid;
	r = check_slabs(t, 0, sc);
	pthread_join(th, NULL);
	t->nslabs = n;
	sc->torn += h->sc.torn;
	if (r == 0 && t->exit.recorded && h->t.exit.recorded) {
		trace_second_exit(sc->err, sc->errlen, t->path, h->t.exit_offset);
		r = SECOND_EXIT;
	} else if (r == 0 && h->r) {
		set_err(sc->err, sc->errlen, "%s", h->err);
		r = h->r;
	}
	if (r == 0 && join_half(t, h) < 0)
		r = NO_MEMORY;
	free_found(&h->t);
	free(h);
	return r;
}

/* A zero head with bytes after it: a writer died before its head. */
int trace_slab_torn(const struct trace_slab_iter *si)
{
	return si->zero && nonzero(si->slab + si->pos, si->avail - si->pos);
}

void trace_second_exit(char *err, size_t errlen, const char *path, uint64_t off)
{
	set_err(err, errlen, "'%s': corrupt exit record at offset %#llx: a second exit record",
		path, (unsigned long long)off);
}

void trace_second_fw_stack(char *err, size_t errlen, const char *path, uint64_t off, uint32_t id)
{
	set_err(err, errlen, "'%s': corrupt fw_stack record at offset %#llx: "
		"a second fw_stack with id %u", path, (unsigned long long)off, id);
}

/* FNV-1a (64 bits) of the slab's bytes from its header to the end of its
   last record. */
uint64_t trace_slab_sum(const void *slab, size_t avail, uint32_t version_major)
{
	struct trace_slab_iter it;
	struct trace_rec rec;
	uint64_t h = 14695981039346656037ull;
	const unsigned char *p = slab;

	trace_slab_iter_init(&it, slab, avail, version_major);
	while (trace_slab_iter_next(&it, &rec) == 1)
		;
	for (size_t i = 0; i < it.pos; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

void trace_span_note(struct trace_span *s, const struct trace_rec *rec, int first)
{
	if (first) {
		memset(s, 0, sizeof(*s));
		s->tid = rec->tid;
		s->min_t = s->max_t = rec->time_ns;
	}
	if (rec->time_ns < s->min_t)
		s->min_t = rec->time_ns;
	s->fw |= rec->type == MT_REC_FW_EVENT;
	s->handed |= rec->type == MT_REC_OWNER;
	if ((!s->handed || s->fw) && rec->time_ns > s->max_t)
		s->max_t = rec->time_ns;
}

static int cmp_span(const void *x, const void *y)
{
	const struct trace_span *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->fw != b->fw)
		return a->fw < b->fw ? -1 : 1;
	if (a->min_t != b->min_t)
		return a->min_t < b->min_t ? -1 : 1;
	return a->sum < b->sum ? -1 : a->sum > b->sum;
}

/*
 * The slabs of one thread that repeat an earlier one of it. A thread
 * writes one slab after the other, so a slab whose times overlap an
 * earlier one's is one copied twice (its events would count twice) or a
 * slab spliced in. Each slab counts with its first owner's records (the
 * tid of its header), up to an OWNER record that handed its tail to a
 * later thread (which may have the same tid again: tids are reused). A
 * framework's slabs (FW events, batches of the past, under the tid of the
 * thread that handed them over) may overlap each other in time (a batch
 * that starts before the last event written starts a new slab), but each
 * batch is written once: two of them of one thread that start at the same
 * time with the same bytes are one slab copied twice. So are two slabs
 * whose first owner wrote at one time only (a young slab a thread wrote
 * one event to before others took it over: its span is a point, which no
 * copy of it overlaps): they too are told by their bytes.
 */
int trace_span_summed(const struct trace_span *s)
{
	return s->fw || s->min_t == s->max_t;
}

uint64_t trace_count_overlaps(struct trace_span *v, size_t n, uint32_t *tid)
{
	uint64_t end = 0, count = 0;

	qsort(v, n, sizeof(*v), cmp_span);
	for (size_t i = 0; i < n; i++) {
		int same = i && v[i].tid == v[i - 1].tid && v[i].fw == v[i - 1].fw;

		int copy = same && v[i].min_t == v[i - 1].min_t && v[i].sum == v[i - 1].sum &&
			   trace_span_summed(&v[i]) && trace_span_summed(&v[i - 1]);

		if (same && (copy || (!v[i].fw && v[i].min_t < end))) {
			if (!count++)
				*tid = v[i].tid;
		}
		if (!same || v[i].max_t > end)
			end = v[i].max_t;
	}
	return count;
}

/* trace_count_overlaps() of t's slabs into its stats; 0, or -1 on ENOMEM. */
static int count_overlaps(struct trace *t)
{
	uint32_t version = ((const struct mt_file_header *)t->map)->version;
	struct trace_span *v;

	if (t->nslabinfo < 2)
		return 0;
	if (!(v = malloc(t->nslabinfo * sizeof(*v))))
		return -1;
	for (size_t i = 0; i < t->nslabinfo; i++) {
		const struct trace_slab_info *si = &t->slabinfo[i];

		v[i] = si->span;
		if (trace_span_summed(&v[i]))
			v[i].sum = trace_slab_sum(si->it.si.slab, si->it.si.avail, version);
	}
	t->stats.overlapping = trace_count_overlaps(v, t->nslabinfo, &t->stats.overlap_tid);
	free(v);
	return 0;
}

/* Checks the header and every record of t, counting; frees t on failure. */
static struct trace *validate(struct trace *t, char *err, size_t errlen)
{
	struct scan sc = { 0, err, errlen };
	int r;

	t->stats.file_size = t->size;
	if (check_header(t, err, errlen) < 0)
		return fail(t, EINVAL, NULL, 0, "");

	t->group = t->slab_size < RELEASE_BYTES ? RELEASE_BYTES / t->slab_size : 1;
	if (t->mapped) {
		uint64_t ngroups = (t->nslabs + t->group - 1) / t->group;

		t->group_slabs = calloc(ngroups ? ngroups : 1, sizeof(uint16_t));
		t->group_left = calloc(ngroups ? ngroups : 1, sizeof(uint16_t));
		if (!t->group_slabs || !t->group_left)
			return fail(t, ENOMEM, err, errlen, "cannot read '%s': %s", t->path,
				    strerror(ENOMEM));
	}
	/* the slabs a walk enters: those with a whole header and the magic */
	for (uint64_t k = 0; k < t->nslabs; k++) {
		uint64_t start = t->header_size + k * t->slab_size;

		if (t->size - start >= sizeof(struct mt_slab_header) &&
		    ((const struct mt_slab_header *)(t->map + start))->magic == MT_SLAB_MAGIC) {
			t->stats.slabs++;
			if (t->group_slabs)
				t->group_slabs[k / t->group]++;
		}
		if (k % t->group == t->group - 1 || k + 1 == t->nslabs)
			release_group(t, k / t->group);
	}
	r = check_all(t, &sc);
	if (r == NO_MEMORY)
		return fail(t, ENOMEM, err, errlen, "cannot read '%s': %s", t->path,
			    strerror(ENOMEM));
	if (r < 0 || sort_fw_stacks(t, err, errlen) < 0)
		return fail(t, EINVAL, NULL, 0, "");
	t->stats.torn = sc.torn;
	if (count_overlaps(t))
		return fail(t, ENOMEM, err, errlen, "cannot read '%s': %s", t->path,
			    strerror(ENOMEM));
	if (t->size < t->header_size)
		t->stats.cut_bytes = t->size;
	else
		t->stats.cut_bytes = (t->size - t->header_size) % t->slab_size;
	t->stats.truncated = t->size < t->header_size || t->stats.cut_bytes;
	t->exit.promised = ((const struct mt_file_header *)t->map)->version >= 2 ||
			   ((const struct mt_file_header *)t->map)->version_minor >= 1;
	trace_release(t, 0, t->size);
	return t;
}

struct trace *trace_open(const char *path, char *err, size_t errlen)
{
	struct trace *t;
	struct stat st;
	void *map;
	int fd;

	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path)))
		return fail(t, ENOMEM, err, errlen, "cannot open '%s': %s", path, strerror(ENOMEM));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fail(t, errno, err, errlen, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return fail(t, e, err, errlen, "cannot read '%s': %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return fail(t, EISDIR, err, errlen, "cannot read '%s': %s", path, strerror(EISDIR));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(t, EINVAL, err, errlen, "cannot read '%s': not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return fail(t, EINVAL, err, errlen, "'%s': empty file, not a memtrace trace", path);
	}
	t->size = (uint64_t)st.st_size;
	if (t->size != (size_t)t->size) {
		close(fd);
		return fail(t, EFBIG, err, errlen, "cannot read '%s': %s", path, strerror(EFBIG));
	}
	map = mmap(NULL, (size_t)t->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		int e = errno;
		return fail(t, e, err, errlen, "cannot map '%s': %s", path, strerror(e));
	}
	t->map = map;
	t->mapped = 1;
	if (!(t->run = calloc(2, sizeof(*t->run)))) {
		munmap(map, (size_t)t->size);
		return fail(t, ENOMEM, err, errlen, "cannot open '%s': %s", path, strerror(ENOMEM));
	}
	__atomic_add_fetch(&mapped_traces, 1, __ATOMIC_RELAXED);
	return validate(t, err, errlen);
}

struct trace *trace_open_buffer(const void *buf, size_t len, const char *name, char *err,
				size_t errlen)
{
	struct trace *t = calloc(1, sizeof(*t));

	if (!t || !(t->path = strdup(name)))
		return fail(t, ENOMEM, err, errlen, "cannot open '%s': %s", name, strerror(ENOMEM));
	if ((uintptr_t)buf % 8)
		return fail(t, EINVAL, err, errlen, "'%s': buffer not 8-byte aligned", name);
	if (len == 0)
		return fail(t, EINVAL, err, errlen, "'%s': empty file, not a memtrace trace", name);
	t->map = buf;
	t->size = len;
	return validate(t, err, errlen);
}

void trace_close(struct trace *t)
{
	if (!t)
		return;
	if (t->mapped) {
		munmap((void *)t->map, (size_t)t->size);
		__atomic_sub_fetch(&mapped_traces, 1, __ATOMIC_RELAXED);
	}
	free(t->run);
	free(t->group_slabs);
	free(t->group_left);
	free_found(t);
	free(t->path);
	free(t);
}

const char *trace_path(const struct trace *t)
{
	return t->path;
}

const struct mt_file_header *trace_header(const struct trace *t)
{
	return (const void *)t->map;
}

const struct trace_stats *trace_stats(const struct trace *t)
{
	return &t->stats;
}

const struct mt_process *trace_process(const struct trace *t)
{
	return t->process;
}

const struct trace_slab_info *trace_slabs(const struct trace *t, size_t *n)
{
	*n = t->nslabinfo;
	return t->slabinfo;
}

const void *const *trace_long_records(const struct trace *t, unsigned type, uint32_t *n)
{
	int li = type < 256 ? longrec_index((uint8_t)type) : -1;

	*n = li < 0 ? 0 : t->nlongrec[li];
	return li < 0 ? NULL : (const void *const *)t->longrec[li];
}

const struct mt_driver *trace_driver(const struct trace *t)
{
	return t->driver;
}

void trace_exit(const struct trace *t, struct trace_exit *e)
{
	*e = t->exit;
}

int trace_stats_warning(const char *path, const struct trace_stats *s, uint32_t header_size,
			uint32_t slab_size, unsigned i, char *buf, size_t len)
{
	unsigned n = 0;

	if (s->torn && n++ == i) {
		snprintf(buf, len, "'%s': %llu torn record%s skipped (the process was killed while writing)",
			 path, (unsigned long long)s->torn, s->torn == 1 ? "" : "s");
		return 0;
	}
	if (s->truncated && s->file_size < header_size && n++ == i) {
		snprintf(buf, len, "'%s': truncated before the first slab (%llu of %u header bytes); "
			 "holds no records: cut or never written", path,
			 (unsigned long long)s->file_size, header_size);
		return 0;
	}
	if (s->truncated && s->file_size >= header_size && n++ == i) {
		snprintf(buf, len, "'%s': truncated: the last slab has %llu of %u bytes; "
			 "loaded the records before the cut", path,
			 (unsigned long long)s->cut_bytes, slab_size);
		return 0;
	}
	if (s->overlapping && n++ == i) {
		snprintf(buf, len, "'%s': %llu slab%s of thread %u overlap%s an earlier one in time "
			 "(a slab copied twice?): its events may count twice", path,
			 (unsigned long long)s->overlapping,
			 s->overlapping == 1 ? "" : "s", (unsigned)s->overlap_tid,
			 s->overlapping == 1 ? "s" : "");
		return 0;
	}
	/* cut right after its header, or its slabs zeroed: nothing to read,
	   which a run that made a CUDA memory call never leaves (the recorder
	   writes no trace for a process that made none) */
	if (!s->records && !(s->truncated && s->file_size < header_size) && n++ == i) {
		snprintf(buf, len, "'%s': holds no records: cut or never written", path);
		return 0;
	}
	return -1;
}

int trace_warning(const struct trace *t, unsigned i, char *buf, size_t len)
{
	return trace_stats_warning(t->path, &t->stats, t->header_size, t->slab_size, i, buf, len);
}

void trace_iter_init(struct trace_iter *it, const struct trace *t)
{
	memset(it, 0, sizeof(*it));
	it->t = t;
}

int trace_next(struct trace_iter *it, struct trace_rec *rec)
{
	/* trace_open() validated every record: -1 cannot happen here. */
	return walk(it, rec, NULL, 0) == 1;
}

int trace_next_in_slab(struct trace_iter *it, struct trace_rec *rec)
{
	return walk(it, rec, NULL, 1) == 1;
}

void trace_slab_rec_rebind(struct trace_rec *rec, const struct trace_slab_iter *it)
{
	if (it->decoded)
		rec->p = &it->dec;
}

void trace_rec_rebind(struct trace_rec *rec, const struct trace_iter *it)
{
	trace_slab_rec_rebind(rec, &it->si);
}

void trace_slab_done(const struct trace *t, const struct trace_rec *rec)
{
	slab_left(t, (rec->offset - t->header_size) / t->slab_size, 1);
}

void trace_process_strings(const struct mt_process *p, struct trace_bytes *hostname,
			   struct trace_bytes *cmdline, struct trace_bytes *exe)
{
	const char *s = (const char *)(p + 1);

	hostname->p = s;
	hostname->len = p->hostname_len;
	cmdline->p = s + p->hostname_len;
	cmdline->len = p->cmdline_len;
	exe->p = s + p->hostname_len + p->cmdline_len;
	exe->len = p->exe_len;
}

void trace_module_strings(const struct mt_module *m, struct trace_bytes *build_id,
			  struct trace_bytes *path)
{
	const char *s = (const char *)(m + 1);

	build_id->p = s;
	build_id->len = m->build_id_len;
	path->p = s + m->build_id_len;
	path->len = m->path_len;
}

struct trace_bytes trace_note_text(const struct mt_note *n)
{
	struct trace_bytes b = { (const char *)(n + 1), n->len };
	return b;
}

struct trace_bytes trace_shm_name(const struct mt_shm *s)
{
	struct trace_bytes b = { (const char *)(s + 1), s->name_len };
	return b;
}

const struct mt_fw_stack *trace_fw_stack(const struct trace *t, uint32_t id)
{
	uint32_t lo = 0, hi = t->nfw_stacks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->fw_stacks[mid].id == id)
			return t->fw_stacks[mid].rec;
		if (t->fw_stacks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

uint32_t trace_fw_frames(const struct mt_fw_stack *s, struct trace_fw_frame *out, uint32_t max)
{
	const char *p = (const char *)(s + 1);

	/* trace_open() checked that all nframes frames fit the record. */
	for (uint32_t i = 0; i < s->nframes && i < max; i++) {
		struct mt_fw_frame f;

		memcpy(&f, p, sizeof(f));   /* frames are packed: maybe unaligned */
		p += sizeof(f);
		out[i].file = p;
		out[i].file_len = f.file_len;
		out[i].function = p + f.file_len;
		out[i].function_len = f.func_len;
		out[i].line = f.line;
		p += (size_t)f.file_len + f.func_len;
	}
	return s->nframes;
}

uint32_t trace_fw_stack_frames(const struct trace *t, uint32_t id, struct trace_fw_frame *out,
			       uint32_t max)
{
	const struct mt_fw_stack *s = id ? trace_fw_stack(t, id) : NULL;

	return s ? trace_fw_frames(s, out, max) : 0;
}

uint32_t trace_fw_ninfo(const struct trace *t)
{
	return t->nfw_infos;
}

int trace_fw_info(const struct trace *t, uint32_t i, struct trace_bytes *text, uint64_t *time_ns)
{
	if (i >= t->nfw_infos)
		return -1;
	*text = trace_fw_info_text(t->fw_infos[i]);
	if (time_ns)
		*time_ns = t->fw_info_times[i];
	return 0;
}

struct trace_bytes trace_fw_info_text(const struct mt_fw_info *r)
{
	struct trace_bytes b = { (const char *)(r + 1), r->len };
	return b;
}

const char *trace_fw_action_name(unsigned action)
{
	static const char *const names[] = {
		[MT_FW_ALLOC] = "alloc", [MT_FW_FREE_REQUESTED] = "free_requested",
		[MT_FW_FREE_COMPLETED] = "free_completed", [MT_FW_SEGMENT_ALLOC] = "segment_alloc",
		[MT_FW_SEGMENT_FREE] = "segment_free", [MT_FW_SEGMENT_MAP] = "segment_map",
		[MT_FW_SEGMENT_UNMAP] = "segment_unmap", [MT_FW_OOM] = "oom",
		[MT_FW_CHECK] = "check", [MT_FW_PEAKS] = "peaks",
	};

	return action < sizeof(names) / sizeof(names[0]) ? names[action] : NULL;
}

const char *trace_exit_how_name(unsigned how)
{
	static const char *const names[] = { [MT_EXIT_EXIT] = "exit", [MT_EXIT__EXIT] = "_exit" };

	return how < sizeof(names) / sizeof(names[0]) ? names[how] : NULL;
}

const char *trace_shm_op_name(unsigned op)
{
	static const char *const names[] = {
		[MT_SHM_OPEN] = "open", [MT_SHM_TRUNCATE] = "truncate", [MT_SHM_MMAP] = "mmap",
		[MT_SHM_UNLINK] = "unlink", [MT_SHM_CLOSE] = "close",
		[MT_SHM_FALLOCATE] = "fallocate", [MT_SHM_MUNMAP] = "munmap",
	};

	return op < sizeof(names) / sizeof(names[0]) ? names[op] : NULL;
}

void trace_pycode_strings(const struct mt_pycode *c, struct trace_bytes *filename,
			  struct trace_bytes *name, struct trace_bytes *linetable)
{
	const char *s = (const char *)(c + 1);

	*filename = (struct trace_bytes){ s, c->filename_len };
	*name = (struct trace_bytes){ s + c->filename_len, c->name_len };
	*linetable = (struct trace_bytes){ s + c->filename_len + c->name_len, c->linetable_len };
}

const char *trace_api_name(unsigned api)
{
	switch (api) {
#define API_CASE(name, id) case id: return #name;
	MT_API_LIST(API_CASE)
#undef API_CASE
	}
	return NULL;
}

const char *trace_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[MT_KIND_DEVICE] = "device", [MT_KIND_MANAGED] = "managed",
		[MT_KIND_HOST] = "host", [MT_KIND_HOST_REGISTER] = "host_register",
		[MT_KIND_ASYNC] = "async", [MT_KIND_VMM_PHYS] = "vmm_phys",
		[MT_KIND_VMM_RETAIN] = "vmm_retain", [MT_KIND_VMM_RESERVE] = "vmm_reserve",
		[MT_KIND_VMM_MAP] = "vmm_map", [MT_KIND_ARRAY] = "array",
		[MT_KIND_FOREIGN] = "foreign", [MT_KIND_POOL] = "pool",
	};

	kind &= MT_KIND_MASK;
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

const char *trace_type_name(unsigned type)
{
	static const char *const names[] = {
		[MT_REC_PROCESS] = "process", [MT_REC_MODULE] = "module",
		[MT_REC_STACK] = "stack", [MT_REC_ALLOC] = "alloc", [MT_REC_FREE] = "free",
		[MT_REC_ALLOC_EX] = "alloc", [MT_REC_FREE_EX] = "free",
		[MT_REC_POOL] = "pool", [MT_REC_MEMINFO] = "meminfo",
		[MT_REC_TIMEBASE] = "timebase", [MT_REC_DRIVER] = "driver",
		[MT_REC_NOTE] = "note", [MT_REC_PYCODE] = "pycode", [MT_REC_SHM] = "shm",
		[MT_REC_EXIT] = "exit", [MT_REC_FW_EVENT] = "fw_event",
		[MT_REC_FW_STACK] = "fw_stack", [MT_REC_FW_INFO] = "fw_info",
		[MT_REC_OWNER] = "owner", [MT_REC_RANGE] = "range", [MT_REC_STRING] = "string",
		[MT_REC_NVTX_MEM] = "nvtx_mem",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

struct trace_bytes trace_note_value(struct trace_bytes tx, const char *key, size_t *at)
{
	size_t kl = strlen(key);

	while (*at < tx.len) {
		const char *nl = memchr(tx.p + *at, '\n', tx.len - *at);
		size_t from = *at, end = nl ? (size_t)(nl - tx.p) : tx.len;

		*at = end + 1;
		if (end - from >= kl && !memcmp(tx.p + from, key, kl))
			return (struct trace_bytes){ tx.p + from + kl, end - from - kl };
	}
	return (struct trace_bytes){ NULL, 0 };
}
