/*
 * stacks.c - native backtraces, interned: each distinct stack is written
 * once as an MT_REC_STACK record and events carry its id.
 *
 * How it works. The caller's frames are walked (below), memtrace's own
 * frames (the innermost ones, inside this library) are dropped. The stack
 * is hashed and looked up
 * in a lock-free open-addressing table of pointers to immutable entries:
 * a miss builds the entry, id included, in a bump-allocated arena and
 * publishes it with a compare-and-swap into the empty slot; the thread whose
 * CAS wins writes the record. A losing thread re-reads the slot (the winner
 * may have inserted the same stack) and probes on. Nothing is ever removed,
 * so readers need no lock and no reclamation. If a thread is killed between
 * its CAS and its record, events of other threads may name an id without a
 * record; the analyzer shows those as unknown stacks.
 *
 * Where the thread runs Python code, pyframes.c splices the Python frames
 * into the native ones before interning; a mixed stack is hashed and
 * grouped like any other.
 *
 * When the table is three quarters full or the arena is spent, new stacks
 * get id 0 ("not recorded") rather than slow the program down.
 * After fork the child starts with an empty table: its ids and stack
 * records belong to its own trace file.
 *
 * The walk (x86-64, glibc 2.35+). A stack is always exactly what
 * unw_backtrace gives. The walk is libunwind's fast trace done here:
 * from its own frame, each frame whose CFI row (at ip - 1 for a return
 * address) says "CFA = rsp or rbp + k, return address at CFA - 8, rbp
 * unsaved or at CFA + k', rsp unsaved" (a "standard" frame, in libunwind's
 * words) steps to CFA, reads the return address and maybe rbp; a frame
 * whose return address is undefined is the last. The rows come from the
 * object's .eh_frame_hdr (found by _dl_find_object: lock-free and
 * async-signal-safe), read by the small CFI interpreter below into one
 * 8-byte rule per ip, kept in a shared insert-only table of 64 Ki rules and
 * each thread's 512 most recent. Any other frame (signal frames, DRAP and
 * other CFA expressions, code without CFI, a CFA that would not grow) makes
 * the whole stack unw_backtrace's, so the two never differ where the rules
 * are libunwind's and the rest is libunwind's by construction; t122 checks
 * it (MEMTRACE_STACK_CHECK=1 unwinds every stack both ways and notes any
 * difference). As with libunwind's own caches, rules are not dropped when
 * a library is unloaded: code loaded later at the same address with other
 * CFI would be walked by the old rules.
 *
 * The memo. The walk is a function of its start (this function's ip, its
 * stack pointer and rbp) and of the words it reads: each return address,
 * and each saved rbp that a later step uses as its CFA base (other loads
 * of rbp are overwritten unread). So each thread keeps its last MEMO_WAYS
 * walks with those reads, addresses and values. A capture takes the latest
 * walk from the same stack pointer and checks its reads in order, each
 * read only once every earlier one matched, so only where the walk itself
 * would read: all match, and its frames and id are the answer without a
 * walk or a hash. Otherwise the walk resumes at the first step that
 * differs (its state before that step is the memo's), and once it stands
 * where a recent walk stood (same CFA, same return address, the rbp that
 * walk went on to use), the rest of that walk is checked the same way and
 * taken. Nothing in it is a guess: a memo differs from the walk only if
 * a word it read differs, and then it is not used. Where stacks seldom
 * repeat (many call paths in random order) the memo's bookkeeping costs
 * more than the steps it saves, so each thread times both ways (the TSC,
 * MEMO_PROBE captures with the memo after MEMO_WARM to refill it, then as
 * many without) at the start of every MEMO_CYCLE captures and takes the
 * faster way for the rest of the cycle; both give the same stacks, so the
 * choice only moves the cost. The memo is mmap'ed on a thread's fifth capture (short-lived
 * threads never pay for it), unmapped when the thread exits (a pthread
 * key), and its ids die with the table after fork (a generation); a
 * signal handler that allocates while the memo is being written walks
 * without it. MEMTRACE_STACK_CACHE=0 gives every stack to unw_backtrace;
 * 2 walks without the memo (for comparing).
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mt.h"

#define TABLE_SLOTS (1u << 20)
#define TABLE_MAX_USED (TABLE_SLOTS / 4 * 3)
#define ARENA_BYTES (256u << 20)    /* reserved, not committed */
#define SKIP_MAX 16                 /* own frames at most */

struct stack_entry {
	uint64_t hash;
	uint32_t id;
	uint32_t depth;
	uint64_t ips[];
};

static struct stack_entry *_Atomic *table;
static char *arena;
static _Atomic size_t arena_used;
static _Atomic uint32_t next_id = 1;
static _Atomic uint32_t used_slots;

#if defined(__x86_64__) && defined(DLFO_EH_SEGMENT_TYPE)
#define WALK 1
#define RULE_SLOTS (1u << 16)
#define RULE_MAX_USED (RULE_SLOTS / 4 * 3)
#define RULE_BUSY 1                 /* a key being filled in */

/* How one frame is stepped, from the CFI row at its ip: what libunwind's
   fast trace calls a standard frame. All zero: not known yet. */
enum { R_NONE, R_STEP, R_LAST, R_OTHER };
struct rule {
	int32_t cfa_off;            /* CFA = (rsp or rbp) + cfa_off */
	int16_t rbp_off;            /* caller's rbp at CFA + rbp_off */
	uint8_t kind;               /* R_* */
	uint8_t flags;              /* RULE_CFA_RSP, RULE_RBP_SAVED */
};
#define RULE_CFA_RSP 1
#define RULE_RBP_SAVED 2

struct rule_slot {
	_Atomic uint64_t key;       /* 0 empty, RULE_BUSY, or the ip looked up */
	_Atomic uint64_t rule;      /* a struct rule */
};

static struct rule_slot *rules;
static _Atomic uint32_t rules_used;
static int (*find_object)(void *, struct dl_find_object *);
static int walk_on;
static void walk_init(void);
#endif
static int table_init(void)
{
	static _Atomic int done;
	if (MT_LIKELY(atomic_load_explicit(&done, memory_order_acquire)))
		return table ? 0 : -1;
	/* First caller maps; a racing caller may map too and lose its copy. */
	void *t = mmap(NULL, TABLE_SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED || a == MAP_FAILED) {
		if (t != MAP_FAILED)
			munmap(t, TABLE_SLOTS * sizeof(void *));
		if (a != MAP_FAILED)
			munmap(a, ARENA_BYTES);
		atomic_store_explicit(&done, 1, memory_order_release);
		return -1;
	}
	void *expected = NULL;
	if (!atomic_compare_exchange_strong((_Atomic(void *) *)&table, &expected, t)) {
		munmap(t, TABLE_SLOTS * sizeof(void *));
		munmap(a, ARENA_BYTES);
	} else {
		arena = a;
#ifdef WALK
		walk_init();
#endif
	}
	atomic_store_explicit(&done, 1, memory_order_release);
	return 0;
}

/* Four lanes, so the multiplies of a deep stack overlap. */
static uint64_t hash_ips(const uint64_t *ips, int n)
{
	const uint64_t k = 0xff51afd7ed558ccdu;
	uint64_t h0 = 0x9e3779b97f4a7c15u ^ (uint64_t)n, h1 = 0xc2b2ae3d27d4eb4fu, h2 = 0x165667b19e3779f9u,
		 h3 = 0x27d4eb2f165667c5u;
	int i = 0;

	for (; i + 4 <= n; i += 4) {
		h0 = (h0 ^ ips[i]) * k;
		h1 = (h1 ^ ips[i + 1]) * k;
		h2 = (h2 ^ ips[i + 2]) * k;
		h3 = (h3 ^ ips[i + 3]) * k;
		h0 ^= h0 >> 32;
		h1 ^= h1 >> 32;
		h2 ^= h2 >> 32;
		h3 ^= h3 >> 32;
	}
	for (; i < n; i++) {
		h0 = (h0 ^ ips[i]) * k;
		h0 ^= h0 >> 32;
	}
	uint64_t h = h0 ^ (h1 * 0x9e3779b97f4a7c15u) ^ (h2 * 0xc2b2ae3d27d4eb4fu) ^ (h3 * 0x165667b19e3779f9u);
	h ^= h >> 29;
	h *= k;
	return h ^ (h >> 32);
}

static void write_stack(struct mt_thread *t, const struct stack_entry *e)
{
	size_t size = sizeof(struct mt_stack) + e->depth * sizeof(uint64_t);
	uint32_t delta;
	struct mt_stack *r = mt_writer_reserve(t, size, mt_now(), &delta);

	if (!r)
		return;
	r->lh.size = (uint32_t)size;
	r->id = e->id;
	r->depth = e->depth;
	memcpy(r->ips, e->ips, e->depth * sizeof(uint64_t));
	mt_writer_commit(r, (struct mt_head){ MT_REC_STACK, 0, 0, 0 });
}

static uint32_t intern(struct mt_thread *t, const uint64_t *ips, int n)
{
	uint64_t h = hash_ips(ips, n);
	size_t bytes = sizeof(struct stack_entry) + (size_t)n * sizeof(uint64_t);
	struct stack_entry *mine = NULL;

	for (uint32_t i = (uint32_t)h & (TABLE_SLOTS - 1);; i = (i + 1) & (TABLE_SLOTS - 1)) {
		struct stack_entry *e = atomic_load_explicit(&table[i], memory_order_acquire);
		if (!e) {
			if (atomic_load_explicit(&used_slots, memory_order_relaxed) >= TABLE_MAX_USED)
				return 0;
			if (!mine) {
				size_t off = atomic_fetch_add(&arena_used, (bytes + 7) & ~(size_t)7);
				if (off + bytes > ARENA_BYTES)
					return 0;
				mine = (struct stack_entry *)(arena + off);
				mine->hash = h;
				mine->depth = (uint32_t)n;
				/* Taken before publishing, so no reader sees 0; a
				   lost race wastes the number, which is harmless. */
				mine->id = atomic_fetch_add(&next_id, 1);
				memcpy(mine->ips, ips, (size_t)n * sizeof(uint64_t));
			}
			if (atomic_compare_exchange_strong(&table[i], &e, mine)) {
				atomic_fetch_add_explicit(&used_slots, 1, memory_order_relaxed);
				if (mt_modules_maybe_changed())
					mt_modules_write(t, 1);
				write_stack(t, mine);
				return mine->id;
			}
			/* Lost the race: e now holds the winner; check it below. */
		}
		if (e->hash == h && e->depth == (uint32_t)n &&
		    memcmp(e->ips, ips, (size_t)n * sizeof(uint64_t)) == 0)
			return e->id;
	}
}

/* The native frames after skip, Python ones spliced in, interned; *py
   says whether there were Python frames. */
static uint32_t intern_native(struct mt_thread *t, const uint64_t *ips, int n, int depth, int *py)
{
	uint64_t mixed[MT_MAX_DEPTH];
	int m;

	*py = 0;
	if (n > 0 && (m = mt_py_splice(t, ips, n, mixed, depth)) > 0) {
		*py = 1;
		return intern(t, mixed, m);
	}
	if (n > depth)
		n = depth;
	if (n <= 0)
		return 0;
	return intern(t, ips, n);
}

#ifdef WALK
/* --- CFI: the row of one ip, from the object's .eh_frame_hdr ------------ */

struct cfi_row {
	int cfa_reg;                /* DWARF number: 6 rbp, 7 rsp; -1: expression */
	int64_t cfa_off;
	int kind[3];                /* rbp, rsp, return address: CFI_* */
	int64_t off[3];
};
enum { CFI_SAME, CFI_UNDEF, CFI_OFFSET, CFI_OTHER };
#define CFI_STATES 8                /* DW_CFA_remember_state depth */

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	int shift = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	int shift = 0;
	uint8_t b = 0;
	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* A pointer of encoding enc at *p (DW_EH_PE_*: absolute, pc-relative or
   relative to data); -1 for what is not handled (indirect, aligned). */
static int read_ptr(const uint8_t **p, const uint8_t *end, int enc, uintptr_t data, uintptr_t *out)
{
	const uint8_t *at = *p;
	uintptr_t v;

	switch (enc & 0x0f) {
	case 0x00: if (end - at < 8) return -1; memcpy(&v, at, 8); *p += 8; break;
	case 0x01: v = (uintptr_t)uleb(p, end); break;
	case 0x02: { uint16_t x; if (end - at < 2) return -1; memcpy(&x, at, 2); v = x; *p += 2; break; }
	case 0x03: { uint32_t x; if (end - at < 4) return -1; memcpy(&x, at, 4); v = x; *p += 4; break; }
	case 0x04: if (end - at < 8) return -1; memcpy(&v, at, 8); *p += 8; break;
	case 0x09: v = (uintptr_t)sleb(p, end); break;
	case 0x0a: { int16_t x; if (end - at < 2) return -1; memcpy(&x, at, 2); v = (uintptr_t)(intptr_t)x; *p += 2; break; }
	case 0x0b: { int32_t x; if (end - at < 4) return -1; memcpy(&x, at, 4); v = (uintptr_t)(intptr_t)x; *p += 4; break; }
	case 0x0c: if (end - at < 8) return -1; memcpy(&v, at, 8); *p += 8; break;
	default: return -1;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += (uintptr_t)at; break;
	case 0x30: v += data; break;
	default: return -1;
	}
	if (enc & 0x80)
		return -1;
	*out = v;
	return 0;
}

/* The FDE whose start is the last one at or below pc, by binary search of
   the object's .eh_frame_hdr table (the caller checks its range). */
static const uint8_t *find_fde(uintptr_t pc)
{
	struct dl_find_object fo;
	const uint8_t *hdr, *p, *lim;
	uintptr_t eh_frame, count;

	if (find_object((void *)pc, &fo) != 0 || !(hdr = fo.dlfo_eh_frame))
		return NULL;
	p = hdr + 4;
	lim = p + 16;   /* two pointers of 8 bytes at most */
	if (hdr[0] != 1 || hdr[3] != 0x3b ||   /* sdata4 offsets from hdr: what ld writes */
	    read_ptr(&p, lim, hdr[1], (uintptr_t)hdr, &eh_frame) != 0 ||
	    read_ptr(&p, lim, hdr[2], (uintptr_t)hdr, &count) != 0 || count == 0)
		return NULL;
	const int32_t *table = (const int32_t *)(const void *)p;
	size_t lo = 0, hi = count;
	while (hi - lo > 1) {   /* the last entry whose start is <= pc */
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)table[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uintptr_t)hdr + (intptr_t)table[2 * lo] > pc)
		return NULL;
	return hdr + table[2 * lo + 1];
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	int fde_enc, z;
	const uint8_t *insns, *end;
};

static int parse_cie(const uint8_t *c, struct cie *out)
{
	uint32_t len, id;
	const uint8_t *p = c + 8, *end;
	const char *aug;

	memcpy(&len, c, 4);
	memcpy(&id, c + 4, 4);
	if (len == 0 || len == 0xffffffffu || id != 0)
		return -1;
	end = c + 4 + len;
	int version = *p++;
	if (version != 1 && version != 3)
		return -1;
	aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return -1;
	p++;
	out->code_align = uleb(&p, end);
	out->data_align = sleb(&p, end);
	uint64_t ra = version == 1 ? *p++ : uleb(&p, end);
	if (ra != 16)
		return -1;
	out->fde_enc = 0;
	out->z = aug[0] == 'z';
	if (out->z) {
		uint64_t alen = uleb(&p, end);
		const uint8_t *q = p;
		if (alen > (uint64_t)(end - p))
			return -1;
		for (const char *a = aug + 1; *a; a++) {
			uintptr_t skip;
			if (*a == 'R')
				out->fde_enc = *q++;
			else if (*a == 'L')
				q++;
			else if (*a == 'P') {
				int enc = *q++;
				if (read_ptr(&q, p + alen, enc & 0x7f, 0, &skip) != 0)
					return -1;
			} else
				return -1;  /* 'S' (a signal frame) and anything new */
		}
		p += alen;
	} else if (aug[0])
		return -1;
	out->insns = p;
	out->end = end;
	return 0;
}

static void set_rule(struct cfi_row *r, uint64_t reg, int kind, int64_t off)
{
	int i = reg == 6 ? 0 : reg == 7 ? 1 : reg == 16 ? 2 : -1;
	if (i >= 0) {
		r->kind[i] = kind;
		r->off[i] = off;
	}
}

/* Runs CFA instructions [p, end) up to the row of pc (loc: where they
   start); init, the CIE's row, for DW_CFA_restore. -1: not understood. */
static int run_cfa(const uint8_t *p, const uint8_t *end, const struct cie *ci, uintptr_t loc,
		   uintptr_t pc, struct cfi_row *r, const struct cfi_row *init)
{
	struct cfi_row saved[CFI_STATES];
	int nsaved = 0;

	while (p < end) {
		uint8_t op = *p++;
		uint64_t reg, delta = 0;
		int advance = 0;
		switch (op >> 6) {
		case 1: delta = (op & 0x3f) * ci->code_align; advance = 1; break;
		case 2: reg = op & 0x3f; set_rule(r, reg, CFI_OFFSET, (int64_t)uleb(&p, end) * ci->data_align); continue;
		case 3: reg = op & 0x3f;
			if (!init)
				return -1;
			set_rule(r, reg, CFI_SAME, 0);
			if (reg == 6 || reg == 7 || reg == 16) {
				int i = reg == 6 ? 0 : reg == 7 ? 1 : 2;
				r->kind[i] = init->kind[i];
				r->off[i] = init->off[i];
			}
			continue;
		}
		if (!advance) {
			switch (op) {
			case 0x00: break;
			case 0x01: {
				uintptr_t to;
				if (read_ptr(&p, end, ci->fde_enc, 0, &to) != 0)
					return -1;
				if (to > pc)
					return 0;
				loc = to;
				break;
			}
			case 0x02: if (p + 1 > end) return -1; delta = *p++ * ci->code_align; advance = 1; break;
			case 0x03: { uint16_t x; if (p + 2 > end) return -1; memcpy(&x, p, 2); p += 2;
				delta = x * ci->code_align; advance = 1; break; }
			case 0x04: { uint32_t x; if (p + 4 > end) return -1; memcpy(&x, p, 4); p += 4;
				delta = x * ci->code_align; advance = 1; break; }
			case 0x05: reg = uleb(&p, end); set_rule(r, reg, CFI_OFFSET, (int64_t)uleb(&p, end) * ci->data_align); break;
			case 0x06: reg = uleb(&p, end);
				if (!init)
					return -1;
				if (reg == 6 || reg == 7 || reg == 16) {
					int i = reg == 6 ? 0 : reg == 7 ? 1 : 2;
					r->kind[i] = init->kind[i];
					r->off[i] = init->off[i];
				}
				break;
			case 0x07: set_rule(r, uleb(&p, end), CFI_UNDEF, 0); break;
			case 0x08: set_rule(r, uleb(&p, end), CFI_SAME, 0); break;
			case 0x09: reg = uleb(&p, end); uleb(&p, end); set_rule(r, reg, CFI_OTHER, 0); break;
			case 0x0a: if (nsaved == CFI_STATES) return -1; saved[nsaved++] = *r; break;
			case 0x0b: {
				if (nsaved == 0)
					return -1;
				/* The CFA is not part of the remembered rules in
				   DWARF, but GCC and libunwind restore it too. */
				*r = saved[--nsaved];
				break;
			}
			case 0x0c: r->cfa_reg = (int)uleb(&p, end); r->cfa_off = (int64_t)uleb(&p, end); break;
			case 0x0d: r->cfa_reg = (int)uleb(&p, end); break;
			case 0x0e: r->cfa_off = (int64_t)uleb(&p, end); break;
			case 0x0f: r->cfa_reg = -1; p += uleb(&p, end); break;
			case 0x10: reg = uleb(&p, end); p += uleb(&p, end); set_rule(r, reg, CFI_OTHER, 0); break;
			case 0x11: reg = uleb(&p, end); set_rule(r, reg, CFI_OFFSET, sleb(&p, end) * ci->data_align); break;
			case 0x12: r->cfa_reg = (int)uleb(&p, end); r->cfa_off = sleb(&p, end) * ci->data_align; break;
			case 0x13: r->cfa_off = sleb(&p, end) * ci->data_align; break;
			case 0x14: reg = uleb(&p, end); uleb(&p, end); set_rule(r, reg, CFI_OTHER, 0); break;
			case 0x15: reg = uleb(&p, end); sleb(&p, end); set_rule(r, reg, CFI_OTHER, 0); break;
			case 0x16: reg = uleb(&p, end); p += uleb(&p, end); set_rule(r, reg, CFI_OTHER, 0); break;
			case 0x2e: uleb(&p, end); break;
			case 0x2f: reg = uleb(&p, end); set_rule(r, reg, CFI_OFFSET, -(int64_t)uleb(&p, end) * ci->data_align); break;
			default: return -1;
			}
		}
		if (advance) {
			if (loc + delta > pc)
				return 0;
			loc += delta;
		}
	}
	return p == end ? 0 : -1;
}

/* The rule of the frame at ip: R_STEP exactly where libunwind's fast trace
   takes the frame as standard (CFA rsp- or rbp-based, return address at
   CFA - 8, rbp unsaved or at a small offset from the CFA, rsp unsaved),
   R_LAST where the return address is undefined (the outermost frame), and
   R_OTHER for everything else (signal frames, DRAP and other expressions,
   no CFI): those stacks are unwound by unw_backtrace. */
static struct rule rule_of(uintptr_t ip)
{
	struct rule out = { 0, 0, R_OTHER, 0 };
	const uint8_t *f = find_fde(ip), *p, *end;
	struct cfi_row init, row;
	struct cie ci;
	uint32_t len, cie_off;
	uintptr_t begin, range;

	if (!f)
		return out;
	memcpy(&len, f, 4);
	memcpy(&cie_off, f + 4, 4);
	if (len == 0 || len == 0xffffffffu || cie_off == 0 || parse_cie(f + 4 - cie_off, &ci) != 0)
		return out;
	end = f + 4 + len;
	p = f + 8;
	if (read_ptr(&p, end, ci.fde_enc, 0, &begin) != 0 || read_ptr(&p, end, ci.fde_enc & 0x0f, 0, &range) != 0 ||
	    ip < begin || ip - begin >= range)
		return out;
	if (ci.z)
		p += uleb(&p, end);
	memset(&init, 0, sizeof init);
	init.cfa_reg = -1;
	if (run_cfa(ci.insns, ci.end, &ci, 0, 0, &init, NULL) != 0)
		return out;
	row = init;
	if (run_cfa(p, end, &ci, begin, ip, &row, &init) != 0)
		return out;
	if (row.kind[2] == CFI_UNDEF) {
		out.kind = R_LAST;
		return out;
	}
	if ((row.cfa_reg != 6 && row.cfa_reg != 7) || row.cfa_off <= -(1 << 28) || row.cfa_off >= (1 << 28) ||
	    row.kind[2] != CFI_OFFSET || row.off[2] != -8 ||
	    (row.kind[1] != CFI_SAME && row.kind[1] != CFI_UNDEF))
		return out;
	if (row.kind[0] == CFI_OFFSET) {
		if (row.off[0] <= -(1 << 14) || row.off[0] >= (1 << 14) || row.off[0] == -1)
			return out;
		out.flags |= RULE_RBP_SAVED;
		out.rbp_off = (int16_t)row.off[0];
	} else if (row.kind[0] != CFI_SAME && row.kind[0] != CFI_UNDEF)
		return out;
	if (row.cfa_reg == 7)
		out.flags |= RULE_CFA_RSP;
	out.cfa_off = (int32_t)row.cfa_off;
	out.kind = R_STEP;
	return out;
}

/* The rule of ip from the table, found and added on a miss; kind R_NONE
   when the table is full (the stack is left to unw_backtrace, whose own
   cache grows). */
static struct rule lookup_shared(uintptr_t ip)
{
	uint32_t i = (uint32_t)((ip * 0x9e3779b97f4a7c15u) >> 40) & (RULE_SLOTS - 1);
	union { uint64_t w; struct rule r; } u;

	for (int probes = 0; probes < 64; probes++, i = (i + 1) & (RULE_SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&rules[i].key, memory_order_acquire);
		if (MT_LIKELY(k == ip)) {
			u.w = atomic_load_explicit(&rules[i].rule, memory_order_relaxed);
			return u.r;
		}
		if (k != 0)
			continue;
		if (atomic_load_explicit(&rules_used, memory_order_relaxed) >= RULE_MAX_USED)
			break;
		u.r = rule_of(ip);
		uint64_t zero = 0;
		/* A slot taken by another thread meanwhile: probe on; one
		   filled by a thread that found the same ip is a duplicate. */
		if (atomic_compare_exchange_strong(&rules[i].key, &zero, RULE_BUSY)) {
			atomic_fetch_add_explicit(&rules_used, 1, memory_order_relaxed);
			atomic_store_explicit(&rules[i].rule, u.w, memory_order_relaxed);
			atomic_store_explicit(&rules[i].key, ip, memory_order_release);
			return u.r;
		}
	}
	return (struct rule){ 0, 0, R_NONE, 0 };
}

/* The shared table is large (slots spread over 1 MiB): each thread keeps
   its recent rules in a small direct-mapped one that stays in cache. */
#define L0_SLOTS 512
static __thread struct { uint64_t key, rule; } l0[L0_SLOTS];

static inline struct rule lookup(uintptr_t ip)
{
	unsigned i = (unsigned)(ip ^ (ip >> 9)) & (L0_SLOTS - 1);
	union { uint64_t w; struct rule r; } u;

	if (MT_LIKELY(l0[i].key == ip)) {
		u.w = l0[i].rule;
		return u.r;
	}
	u.r = lookup_shared(ip);
	if (u.r.kind != R_NONE) {
		/* A signal handler that allocates meanwhile sees no key or
		   the key with its rule, never a key with another's rule. */
		l0[i].key = 0;
		atomic_signal_fence(memory_order_seq_cst);
		l0[i].rule = u.w;
		atomic_signal_fence(memory_order_seq_cst);
		l0[i].key = ip;
	}
	return u.r;
}

/* The return addresses from here, as unw_backtrace(ips, max) gives them;
   -1 where a frame is not a standard one (the caller asks unw_backtrace). */
static __attribute__((noinline)) int walk(uint64_t *ips, int max)
{
	uintptr_t ip, sp, rbp, cfa;
	int n = 0;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(rbp));
	/* The first frame is this one, at ip itself; then return addresses,
	   whose row is the call's (ip - 1), as libunwind looks them up. */
	for (uintptr_t at = ip; n < max; at = ip - 1) {
		struct rule r = lookup(at);
		if (MT_UNLIKELY(r.kind != R_STEP)) {
			if (r.kind == R_LAST)
				break;
			return -1;
		}
		cfa = (r.flags & RULE_CFA_RSP ? sp : rbp) + (intptr_t)r.cfa_off;
		/* Stack only grows down to the frames below: anything else
		   (another stack, a wrong rule) is left to unw_backtrace. */
		if (MT_UNLIKELY(cfa <= sp || cfa - sp > (64u << 20)))
			return -1;
		ip = *(const uintptr_t *)(cfa - 8);
		if (r.flags & RULE_RBP_SAVED)
			rbp = *(const uintptr_t *)(cfa + (intptr_t)r.rbp_off);
		sp = cfa;
		if (ip < 0x4000)
			break;
		ips[n++] = ip;
	}
	return n;
}
/* --- the per-thread memo of recent walks -------------------------------- */

#define MEMO_WAYS 8
#define MEMO_WARM 16                /* untimed captures with it before its probe */
#define MEMO_PROBE 64               /* captures timed each way, per cycle */
#define MEMO_CYCLE 8192             /* captures per cycle: probes, then the faster */
#define MEMO_TICKS_MAX 4096         /* ticks a timed capture counts at most: more
                                       was an interrupt, not the walk */
#define MEMO_LATER 4                /* captures of a thread before its memo */

/* One walk: per step j, where the return address was read and what it was
   (the next frame's ip), the CFA (the stack pointer after the step), where
   rbp was read if the rule restores it, its value, whether a later step
   used it (only those are checked), and which step's load rbp holds after
   step j (-1: the register as the walk began). */
struct memo_step {
	uint64_t ra_addr, cfa, rbp_addr, rbp_val;
	int32_t rbp_used, rbp_src;
};

struct memo_read { uint64_t addr, val; };

struct memo {
	uintptr_t sp;               /* the walk's own stack pointer, 0: empty */
	uintptr_t rbp0;             /* rbp as the walk began, checked if used */
	uint32_t gen, id;
	int steps, n;               /* steps walked, frames recorded */
	int skip, py, rbp0_used;
	int full;                   /* the walk ended by itself, not at max */
	uint64_t *ra;               /* per step: the word read (frames) */
	struct memo_step *s;
	struct memo_read *rd;       /* the reads to check, in walk order */
	uint16_t *rd_step;          /* the step of each */
	int nrd;
};

struct memo_cache {
	struct memo e[MEMO_WAYS];
	unsigned next, last;
	unsigned cycle;             /* captures into the current cycle */
	uint64_t ticks[2];          /* its probes' TSC ticks: with, without */
	int plain;                  /* after the probes: walk without it */
	int busy;                   /* in memo_capture */
	size_t bytes;
};

static __thread struct memo_cache *tmemo;
static __thread unsigned plain_first;
static pthread_key_t memo_key;
static int memo_on;
static _Atomic uint32_t memo_gen;

static void memo_free(void *p)
{
	struct memo_cache *c = p;
	if (c == tmemo)
		tmemo = NULL;
	munmap(c, c->bytes);
}

static struct memo_cache *memo_get(int max)
{
	size_t per = (size_t)max * (sizeof(uint64_t) + sizeof(struct memo_step) + 2 * sizeof(struct memo_read) + 8);
	size_t bytes = sizeof(struct memo_cache) + MEMO_WAYS * per;
	struct memo_cache *c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	uint64_t *p = (uint64_t *)(c + 1);
	for (int i = 0; i < MEMO_WAYS; i++) {
		struct memo *e = &c->e[i];
		e->ra = p;
		e->s = (struct memo_step *)(p + max);
		e->rd = (struct memo_read *)(e->s + max);
		e->rd_step = (uint16_t *)(e->rd + 2 * max);
		p = (uint64_t *)(e->rd_step + 4 * max);   /* 2 * max of them, 8 bytes a step */
	}
	c->bytes = bytes;
	if (pthread_setspecific(memo_key, c) != 0) {
		munmap(c, bytes);
		return NULL;
	}
	return tmemo = c;
}

/* The first step of e whose reads differ from memory now (e->steps: none
   does). A word is read only after every earlier one matched, so only
   where the walk itself would read now. */
static int memo_check(const struct memo *e, uintptr_t rbp0)
{
	int j = 0, k = 0;

	if (!(e->rbp0_used && e->rbp0 != rbp0)) {
		/* The addresses are known: the loads go at once. */
		for (; k < e->nrd; k++)
			if (*(const uint64_t *)(uintptr_t)e->rd[k].addr != e->rd[k].val)
				break;
		if (k == e->nrd)
			return e->steps;
		j = e->rd_step[k];
	}
	return j;
}

/* The reads of m's walk to check: every return address, and the rbp
   loads a later step used. */
static void memo_reads(struct memo *m)
{
	int k = 0;
	for (int j = 0; j < m->steps; j++) {
		m->rd[k] = (struct memo_read){ m->s[j].ra_addr, m->ra[j] };
		m->rd_step[k++] = (uint16_t)j;
		if (m->s[j].rbp_used) {
			m->rd[k] = (struct memo_read){ m->s[j].rbp_addr, m->s[j].rbp_val };
			m->rd_step[k++] = (uint16_t)j;
		}
	}
	m->nrd = k;
}

/* Where m's walk, after step j (n frames; rbp, from step src, live),
   stands where rc's stood after step q, the rest of rc's walk is m's if
   rc's reads after q still hold: copied and checked, so only what m's own
   walk would read is read. m's frame count, or -1 (walk on). */
static int memo_splice(struct memo *m, int j, int n, int src, uintptr_t rbp, const struct memo *rc, int q, int max)
{
	int sb = rc->s[q].rbp_src, lim = rc->steps, x, y;
	int used = sb < 0 ? rc->rbp0_used : rc->s[sb].rbp_used;

	if (used && rbp != (sb < 0 ? rc->rbp0 : rc->s[sb].rbp_val))
		return -1;
	if (lim > q + 1 + (max - n))
		lim = q + 1 + (max - n);    /* m stops at max frames */
	else if (!rc->full)
		return -1;                  /* rc stopped at max, m would not */
	for (x = q + 1; x < lim; x++)
		if (*(const uint64_t *)(uintptr_t)rc->s[x].ra_addr != rc->ra[x] ||
		    (rc->s[x].rbp_used && *(const uint64_t *)(uintptr_t)rc->s[x].rbp_addr != rc->s[x].rbp_val))
			return -1;
	if (used) {
		if (src < 0)
			m->rbp0_used = 1;
		else {
			m->s[src].rbp_used = 1;
			m->s[src].rbp_val = rbp;
		}
	}
	for (x = q + 1, y = j + 1; x < lim; x++, y++) {
		m->ra[y] = rc->ra[x];
		m->s[y] = rc->s[x];
		m->s[y].rbp_src = rc->s[x].rbp_src == sb ? src : rc->s[x].rbp_src + (j - q);
		if (rc->ra[x] >= 0x4000)
			n++;
	}
	m->steps = y;
	m->n = n;
	m->full = lim == rc->steps ? rc->full : 0;
	return n;
}

/* Walks into m from step j (steps before j are m's already, checked
   against memory), in the state ip, sp, rbp, src that step j starts in;
   as walk(): m->n frames, or -1 to leave the stack to unw_backtrace. Once
   it stands where rc stood (the same CFA and return address), it takes the
   rest from rc if that still holds. */
static int memo_walk(struct memo *m, int j, uintptr_t ip, uintptr_t sp, uintptr_t rbp, int src, int max,
		     const struct memo *rc, const struct memo *rc2)
{
	int n = j, q = 0, q2 = 0, full = 1;

	for (uintptr_t at = j == 0 ? ip : ip - 1;; at = ip - 1, j++) {
		if (n >= max) {
			full = 0;
			break;
		}
		struct rule r = lookup(at);
		if (MT_UNLIKELY(r.kind != R_STEP)) {
			if (r.kind == R_LAST)
				break;
			return -1;
		}
		uintptr_t cfa;
		if (r.flags & RULE_CFA_RSP)
			cfa = sp + (intptr_t)r.cfa_off;
		else {
			cfa = rbp + (intptr_t)r.cfa_off;
			if (src < 0)
				m->rbp0_used = 1;
			else if (!m->s[src].rbp_used) {
				m->s[src].rbp_used = 1;
				m->s[src].rbp_val = rbp;
			}
		}
		if (MT_UNLIKELY(cfa <= sp || cfa - sp > (64u << 20)))
			return -1;
		m->s[j].ra_addr = cfa - 8;
		ip = m->ra[j] = *(const uintptr_t *)(cfa - 8);
		m->s[j].rbp_addr = 0;
		m->s[j].rbp_used = 0;
		if (r.flags & RULE_RBP_SAVED) {
			m->s[j].rbp_addr = cfa + (intptr_t)r.rbp_off;
			rbp = m->s[j].rbp_val = *(const uintptr_t *)(cfa + (intptr_t)r.rbp_off);
			src = j;
		}
		m->s[j].rbp_src = src;
		m->s[j].cfa = sp = cfa;
		if (ip < 0x4000) {
			j++;
			break;
		}
		n++;
		if (rc) {
			while (q < rc->steps && rc->s[q].cfa < sp)
				q++;
			if (q < rc->steps && rc->s[q].cfa == sp && rc->ra[q] == ip) {
				int k = memo_splice(m, j, n, src, rbp, rc, q, max);
				if (k >= 0)
					return k;
				rc = NULL;
			}
		}
		if (rc2) {
			while (q2 < rc2->steps && rc2->s[q2].cfa < sp)
				q2++;
			if (q2 < rc2->steps && rc2->s[q2].cfa == sp && rc2->ra[q2] == ip) {
				int k = memo_splice(m, j, n, src, rbp, rc2, q2, max);
				if (k >= 0)
					return k;
				rc2 = NULL;
			}
		}
	}
	m->steps = j;
	m->n = n;
	m->full = full;
	return n;
}

/* The stack from here, from the memo when a recent walk's reads all hold
   the same words now (the walk is a function of its start and of those
   words, so it would give the same frames), or walked from the first step
   that differs. -1: unw_backtrace's. */
static __attribute__((noinline)) int64_t memo_capture(struct mt_thread *t, struct memo_cache *c, int depth)
{
	uintptr_t ip, sp, sp0, rbp;
	uint32_t gen = atomic_load_explicit(&memo_gen, memory_order_relaxed);
	struct memo *best = NULL;
	int bestj = 0, max = depth + SKIP_MAX;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(rbp));
	sp0 = sp;
	/* The latest walk from this stack pointer. Checking more than one
	   costs more than it finds (measured: bench/PROFILES.md). */
	for (unsigned k = 0; k < MEMO_WAYS && !best; k++) {
		struct memo *e = &c->e[(c->last + k) % MEMO_WAYS];
		if (e->sp == sp && e->gen == gen)
			best = e;
	}
	if (best && (bestj = memo_check(best, rbp)) == best->steps) {
		uint64_t mixed[MT_MAX_DEPTH];
		int m, py;
		c->last = (unsigned)(best - c->e);
		/* Python frames change under the same native stack. */
		if (mt_config.python && (m = mt_py_splice(t, best->ra + best->skip, best->n - best->skip, mixed, depth)) > 0)
			return intern(t, mixed, m);
		if (best->py)
			return intern_native(t, best->ra + best->skip, best->n - best->skip, depth, &py);
		return best->id;
	}
	/* The latest walk of all (a free after its allocation: the same
	   frames above the hook's) and the one checked. */
	struct memo *rc = &c->e[c->last % MEMO_WAYS], *rc2 = best != rc ? best : NULL;
	unsigned w = c->next++ % MEMO_WAYS;
	while (&c->e[w] == rc || &c->e[w] == rc2)
		w = c->next++ % MEMO_WAYS;
	struct memo *m = &c->e[w];
	int src = -1, n, skip = 0, py;
	m->sp = 0;
	m->rbp0 = rbp;
	m->rbp0_used = 0;
	if (best && bestj > 0) {
		/* The steps before bestj hold: start from there. */
		memcpy(m->ra, best->ra, (size_t)bestj * sizeof(uint64_t));
		memcpy(m->s, best->s, (size_t)bestj * sizeof(struct memo_step));
		m->rbp0_used = best->rbp0_used;
		ip = best->ra[bestj - 1];
		sp = best->s[bestj - 1].cfa;
		src = best->s[bestj - 1].rbp_src;
		/* An rbp load no step used was not checked: read it again. */
		if (src >= 0) {
			rbp = *(const uint64_t *)(uintptr_t)m->s[src].rbp_addr;
			m->s[src].rbp_val = rbp;
		}
	}
	if ((n = memo_walk(m, bestj, ip, sp, rbp, src, max, rc, rc2)) < 0) {
		m->steps = 0;   /* half written: no walk to check or splice */
		return -1;
	}
	while (skip < n && skip < SKIP_MAX && mt_is_own((const void *)(uintptr_t)m->ra[skip]))
		skip++;
	uint32_t id = intern_native(t, m->ra + skip, n - skip, depth, &py);
	memo_reads(m);
	if (skip > 0) {
		m->skip = skip;
		m->py = py;
		m->id = id;
		m->gen = gen;
		m->sp = sp0;
		c->last = w;
	}
	return id;
}
static void walk_init(void)
{
	void *r;

	if (!mt_config.stack_cache || !mt_real_dlsym ||
	    !(find_object = (int (*)(void *, struct dl_find_object *))mt_real_dlsym(RTLD_DEFAULT, "_dl_find_object")))
		return;
	r = mmap(NULL, RULE_SLOTS * sizeof(struct rule_slot), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return;
	rules = r;
	walk_on = 1;
	memo_on = mt_config.stack_cache == 1 && pthread_key_create(&memo_key, memo_free) == 0;
}

#endif
static __attribute__((noinline)) uint32_t capture_plain(struct mt_thread *t, int depth)
{
	void *buf[MT_MAX_DEPTH + SKIP_MAX];
	int n, skip = 0, py;

	n = unw_backtrace(buf, depth + SKIP_MAX);
	while (skip < n && skip < SKIP_MAX && mt_is_own(buf[skip]))
		skip++;
	return intern_native(t, (const uint64_t *)(buf + skip), n - skip, depth, &py);
}

#ifdef WALK
/* The stack by the memo (c), or by the walk alone (c NULL), or where
   either meets a frame it does not step, by unw_backtrace. Inlined: a
   frame of its own would be one more step in every walk. */
static inline __attribute__((always_inline)) uint32_t capture_way(struct mt_thread *t, struct memo_cache *c, int depth)
{
	uint64_t ips[MT_MAX_DEPTH + SKIP_MAX];
	int n, skip = 0, py;

	if (c) {
		c->busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		int64_t id = memo_capture(t, c, depth);
		atomic_signal_fence(memory_order_seq_cst);
		c->busy = 0;
		if (id >= 0)
			return (uint32_t)id;
	} else if ((n = walk(ips, depth + SKIP_MAX)) >= 0) {
		while (skip < n && skip < SKIP_MAX && mt_is_own((const void *)(uintptr_t)ips[skip]))
			skip++;
		return intern_native(t, ips + skip, n - skip, depth, &py);
	}
	return capture_plain(t, depth);
}
#endif

static __attribute__((noinline)) uint32_t capture(struct mt_thread *t, int depth)
{
#ifdef WALK
	if (MT_LIKELY(walk_on)) {
		struct memo_cache *c = tmemo, *use = NULL;
		unsigned k = 0;
		int timed = 0;
		uint64_t t0 = 0;

		/* c->busy: a signal handler's stack while the memo is half
		   written; its walk leaves the memo alone. The memo warms up
		   first in a cycle (its ways may be a cycle old), then each way
		   is timed; the rest of the cycle goes the faster. */
		if (c ? !c->busy : memo_on && ++plain_first > MEMO_LATER && (c = memo_get(depth + SKIP_MAX))) {
			k = c->cycle++;
			if (k < MEMO_WARM) {
				use = c;
			} else if ((k -= MEMO_WARM) >= 2 * MEMO_PROBE) {
				if (c->cycle >= MEMO_CYCLE)
					c->cycle = 0;
				use = c->plain ? NULL : c;
			} else {
				use = k < MEMO_PROBE ? c : NULL;
				timed = 1;
				t0 = __builtin_ia32_rdtsc();
			}
		}
		/* One call: the memo's first read is this frame's return
		   address, the same for every capture. */
		uint32_t id = capture_way(t, use, depth);
		if (timed) {
			uint64_t d = __builtin_ia32_rdtsc() - t0;
			c->ticks[k >= MEMO_PROBE] += d < MEMO_TICKS_MAX ? d : MEMO_TICKS_MAX;
			if (k == 2 * MEMO_PROBE - 1) {
				c->plain = c->ticks[1] < c->ticks[0];
				c->ticks[0] = c->ticks[1] = 0;
			}
		}
		return id;
	}
#endif
	return capture_plain(t, depth);
}
/* MEMTRACE_STACK_CHECK=1: the stack given, then the one unw_backtrace
   gives from the same place; a difference is written as a note. */
static __attribute__((noinline)) uint32_t capture_checked(struct mt_thread *t, int depth)
{
	static _Atomic unsigned notes;
	uint32_t id = capture(t, depth), full = capture_plain(t, depth);
	char text[96];

	if (id != full && atomic_fetch_add(&notes, 1) < 1000) {
		snprintf(text, sizeof text, "stack check: stack %u given, full unwind %u", id, full);
		mt_note(t, text);
	}
	return id;
}

uint32_t mt_stack_capture(struct mt_thread *t)
{
	int depth = mt_config.depth;

	if (depth == 0 || table_init() != 0)
		return 0;
	if (MT_UNLIKELY(mt_config.stack_check))
		return capture_checked(t, depth);
	return capture(t, depth);
}

void mt_stacks_fork_child(void)
{
	if (!table)
		return;
	/* Fresh zero pages in place: same addresses, nothing to reallocate. */
	mmap(table, TABLE_SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	mmap(arena, ARENA_BYTES, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	atomic_store(&arena_used, 0);
	atomic_store(&used_slots, 0);
	atomic_store(&next_id, 1);
#ifdef WALK
	atomic_fetch_add(&memo_gen, 1);    /* the ids were the parent's */
#endif
	mt_py_fork_child();
}
