/*
 * pyframes.c - Python source frames inside native stacks: when the thread
 * that calls a CUDA allocation function is running Python code (CPython 3.9
 * to 3.13), its stack carries the Python frames too, spliced in where the
 * interpreter's evaluation loop sits on the native stack.
 *
 * The choice: a read-only walk of the thread's frame chain at each event,
 * not a profile hook with a shadow stack. The hook may not take the GIL
 * (PyTorch calls cudaMalloc with the GIL released, under its allocator
 * lock), allocate Python objects or run Python code. Installing a profile
 * function (PyEval_SetProfile) needs the GIL, runs on every Python call and
 * return of every thread, whether or not it ever allocates GPU memory (tens
 * of ns on each of millions of calls), and only sees threads that existed
 * when it was installed. The walk costs nothing until an event, touches only
 * memory the calling thread owns (its own frames, and the code objects and
 * strings those frames keep alive), and needs no cooperation from Python.
 * Its price is that it reads interpreter internals: per-version offsets,
 * generated from each version's headers by scripts/gen-pyoffsets.sh into
 * pyoffsets.h, and a self-check before they are trusted.
 *
 * Detection, lazily on the first stack of the process, with the real dlsym
 * on the global scope (no Python call that needs the GIL): Py_Version
 * (3.11+) or Py_GetVersion() (a C function formatting static strings) gives
 * the version; PyGILState_GetThisThreadState() gives this thread's own
 * thread state from a thread-specific key, even while the GIL is released
 * (_PyThreadState_GET would give the GIL holder, or NULL in 3.13);
 * &PyCode_Type validates every code object read; _PyEval_EvalFrameDefault's
 * address range (dladdr1 st_size) finds the evaluation loop's native
 * frames. A version without a row in pyoffsets.h, a missing symbol or a
 * failed self-check (PyCode_Type's tp_name must be "code") leaves native
 * frames only, with one warning on stderr and one note in the trace.
 *
 * The walk. 3.9/3.10: tstate->frame, one PyFrameObject per C-level call of
 * the evaluation loop, f_lasti the last instruction (bytes in 3.9, code
 * units in 3.10). 3.11+: tstate->cframe->current_frame (3.13:
 * tstate->current_frame), a chain of _PyInterpreterFrame; one C call of the
 * loop runs several of them: in 3.11 up to and including the frame marked
 * is_entry, in 3.12/3.13 up to the shim frame owned by the C stack
 * (FRAME_OWNED_BY_CSTACK), which ends a group and is not shown. Frames not
 * yet started (_PyFrame_IsIncomplete) are left out. Every code object read
 * must have ob_type == &PyCode_Type (3.13: a frame whose f_executable is not
 * code is skipped; before, the walk stops). The walk is bounded.
 *
 * Placement. Stacks are innermost first. The Python frames one C call of the
 * loop runs go right before (inside) that loop's native frame, innermost
 * first, so the stack reads like a traceback: C callee, Python frames, the
 * evaluation loop that ran them, its callers. Groups left over when the
 * native walk ends (a loop frame the unwinder did not see, e.g. a .cold
 * part) follow the last native frame. MEMTRACE_DEPTH bounds the total:
 * a deep Python recursion is cut like a deep native one.
 *
 * Encoding (include/memtrace/trace-format.h): MT_PYFRAME_TAG | code_id << 24
 * | offset, the offset in code units (2 bytes) from the start of the
 * bytecode, for every version. Code objects are interned by address and a
 * fingerprint (filename, name and line table pointers, first line): a
 * code object freed and another allocated at its address differs in at
 * least the line table pointer in practice, and gets a new id and a new
 * MT_REC_PYCODE record, written by the thread that inserted it, with the
 * strings (UTF-8, encoded here from the str's code points) and the raw line
 * table copied at first sight; the analyzer decodes lines later
 * (analyze/trace/pyframes.c). The table is lock-free like the stack table
 * (stacks.c): immutable entries in a bump arena, published by CAS, never
 * removed; when it is full, frames get code id 0 ("unknown").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mt.h"
#include "pyoffsets.h"

#define CODE_SLOTS (1u << 18)
#define CODE_MAX_USED (CODE_SLOTS / 4 * 3)
#define CODE_ARENA (CODE_SLOTS * sizeof(struct code_entry))
#define WALK_MAX (4 * MT_MAX_DEPTH)        /* frames visited per event */
#define NAME_MAX_BYTES 1024                 /* per string in a pycode record */
#define OWNED_BY_GENERATOR 1
#define OWNED_BY_CSTACK 3

enum { PY_UNKNOWN, PY_ON, PY_OFF };

struct code_entry {
	uint64_t code, filename, name, linetable;
	int32_t first_line;
	uint32_t id;
};

static _Atomic int state = PY_UNKNOWN;
static const struct py_layout *L;
static void *(*get_tstate)(void);
static const void *code_type;
static uint64_t eval_start, eval_end;
static struct code_entry *_Atomic *codes;
static struct code_entry *arena;
static _Atomic uint32_t arena_used, next_code_id = 1;
static int warned;

static inline uint64_t rd64(uint64_t p, unsigned off)
{
	return *(const uint64_t *)(uintptr_t)(p + off);
}

/* Off for good, with one warning and one note. */
static int give_up(struct mt_thread *t, const char *why)
{
	char text[256];

	snprintf(text, sizeof text, "python frames left out, native frames only: %s", why);
	if (!__atomic_load_n(&warned, __ATOMIC_RELAXED)) {
		mt_warn_once(&warned, "%s", text);
		mt_note(t, text);
	}
	atomic_store(&state, PY_OFF);
	return PY_OFF;
}

/* 0xMMmm of the interpreter in this process, 0 when there is none. */
static unsigned py_version(void)
{
	const unsigned long *hex = mt_real_dlsym(RTLD_DEFAULT, "Py_Version");
	const char *(*get)(void);
	unsigned major, minor;

	if (mt_config.python_version[0] &&
	    sscanf(mt_config.python_version, "%u.%u", &major, &minor) == 2)
		return major << 8 | minor;
	if (hex)
		return (unsigned)(*hex >> 16) & 0xffff;
	get = (const char *(*)(void))mt_real_dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (get && sscanf(get(), "%u.%u", &major, &minor) == 2)
		return major << 8 | minor;
	return 0;
}

static int detect(struct mt_thread *t)
{
	char why[128];
	unsigned v;
	void *eval;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (!mt_config.python || !mt_real_dlsym)
		return atomic_store(&state, PY_OFF), PY_OFF;
	v = py_version();
	if (!v)     /* no Python in this process: nothing to say */
		return atomic_store(&state, PY_OFF), PY_OFF;
	for (size_t i = 0; i < sizeof py_layouts / sizeof py_layouts[0]; i++)
		if (py_layouts[i].version == v)
			L = &py_layouts[i];
	if (!L) {
		snprintf(why, sizeof why, "python %u.%u is not supported (3.9 to 3.13 are)",
			 v >> 8, v & 0xff);
		return give_up(t, why);
	}
	get_tstate = (void *(*)(void))mt_real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	code_type = mt_real_dlsym(RTLD_DEFAULT, "PyCode_Type");
	eval = mt_real_dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	if (!get_tstate || !code_type || !eval)
		return give_up(t, "python symbols not found");
	if (dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
		eval_start = (uint64_t)(uintptr_t)eval;
		eval_end = eval_start + sym->st_size;
	}
	/* Self-check: the offsets of this version find PyCode_Type's name. */
	const char *tp_name = (const char *)(uintptr_t)rd64((uint64_t)(uintptr_t)code_type, L->type_name);
	if (!tp_name || strcmp(tp_name, "code") != 0)
		return give_up(t, "python self-check failed");

	void *tab = mmap(NULL, CODE_SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *ar = mmap(NULL, CODE_ARENA, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (tab == MAP_FAILED || ar == MAP_FAILED)
		return give_up(t, "no memory for the code table");
	codes = tab;
	arena = ar;
	atomic_store(&state, PY_ON);
	return PY_ON;
}

/* --- code objects ----------------------------------------------------- */

/* UTF-8 of a compact str into buf (at most cap bytes); its length. */
static size_t str_utf8(uint64_t s, char *buf, size_t cap)
{
	uint32_t st;
	unsigned kind, n = 0;
	uint64_t len;
	const unsigned char *data;

	if (!s)
		return 0;
	st = *(const uint32_t *)(uintptr_t)(s + L->str_state);
	len = rd64(s, L->var_size);
	kind = (st >> L->str_kind_shift) & 7;
	if (!((st >> L->str_compact_shift) & 1))
		return 0;           /* never the case for a code object's strings */
	if ((st >> L->str_ascii_shift) & 1) {
		size_t k = len < cap ? len : cap;
		memcpy(buf, (const void *)(uintptr_t)(s + L->str_ascii_size), k);
		return k;
	}
	data = (const unsigned char *)(uintptr_t)(s + L->str_compact_size);
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? data[i] : kind == 2 ? ((const uint16_t *)data)[i] :
			     kind == 4 ? ((const uint32_t *)data)[i] : '?';
		char u[4];
		unsigned k;

		if (c < 0x80)
			u[0] = (char)c, k = 1;
		else if (c < 0x800)
			u[0] = (char)(0xc0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3f)), k = 2;
		else if (c < 0x10000)
			u[0] = (char)(0xe0 | c >> 12), u[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
			u[2] = (char)(0x80 | (c & 0x3f)), k = 3;
		else
			u[0] = (char)(0xf0 | c >> 18), u[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
			u[2] = (char)(0x80 | ((c >> 6) & 0x3f)), u[3] = (char)(0x80 | (c & 0x3f)), k = 4;
		if (n + k > cap)
			break;
		memcpy(buf + n, u, k);
		n += k;
	}
	return n;
}

static void write_code(struct mt_thread *t, const struct code_entry *e)
{
	char file[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
	size_t flen = str_utf8(e->filename, file, sizeof file);
	size_t nlen = str_utf8(e->name, name, sizeof name);
	uint64_t lt = e->linetable;
	size_t ltlen = lt ? rd64(lt, L->var_size) : 0;
	size_t room = MT_MAX_RECORD - sizeof(struct mt_pycode) - flen - nlen - 8;
	uint32_t delta;

	if (ltlen > room)
		ltlen = room;   /* a huge table: lines past the cut read as unknown */
	size_t size = (sizeof(struct mt_pycode) + flen + nlen + ltlen + 7) & ~(size_t)7;
	struct mt_pycode *r = mt_writer_reserve(t, size, mt_now(), &delta);
	if (!r)
		return;
	memset(r, 0, size);
	r->lh.size = (uint32_t)size;
	r->id = e->id;
	r->first_line = e->first_line;
	r->py_version = L->version;
	r->filename_len = (uint16_t)flen;
	r->name_len = (uint16_t)nlen;
	r->linetable_len = (uint32_t)ltlen;
	char *p = (char *)(r + 1);
	memcpy(p, file, flen);
	memcpy(p + flen, name, nlen);
	if (ltlen)
		memcpy(p + flen + nlen, (const void *)(uintptr_t)(lt + L->bytes_sval), ltlen);
	mt_writer_commit(r, (struct mt_head){ MT_REC_PYCODE, 0, 0, 0 });
}

/*
 * A per-thread direct-mapped cache in front of the shared table: the same
 * fingerprint check, without the hash and the probe. Emptied when the
 * table is (fork), by comparing generations.
 */
#define TCACHE 64
static __thread const struct code_entry *tcache[TCACHE];
static __thread uint32_t tcache_gen;
static _Atomic uint32_t table_gen = 1;

static inline int same_code(const struct code_entry *e, const struct code_entry *k)
{
	return e->code == k->code && e->filename == k->filename && e->name == k->name &&
	       e->linetable == k->linetable && e->first_line == k->first_line;
}

static uint32_t code_id_slow(struct mt_thread *t, const struct code_entry *k,
			     const struct code_entry **found) __attribute__((noinline));

/*
 * The id of a (validated) code object, inserting it at first sight. The
 * layout fields come as arguments: the walk keeps them in registers.
 */
static inline __attribute__((always_inline))
uint32_t code_id(struct mt_thread *t, uint64_t code, unsigned o_file, unsigned o_name,
		 unsigned o_table, unsigned o_first)
{
	struct code_entry k = {
		code, rd64(code, o_file), rd64(code, o_name), rd64(code, o_table),
		*(const int32_t *)(uintptr_t)(code + o_first), 0,
	};
	unsigned slot = (unsigned)(code >> 4) & (TCACHE - 1);
	uint32_t gen = atomic_load_explicit(&table_gen, memory_order_relaxed), id;
	const struct code_entry *e;

	if (MT_UNLIKELY(tcache_gen != gen)) {
		memset(tcache, 0, sizeof tcache);
		tcache_gen = gen;
	}
	e = tcache[slot];
	if (e && same_code(e, &k))
		return e->id;
	e = NULL;
	id = code_id_slow(t, &k, &e);
	if (e)
		tcache[slot] = e;
	return id;
}

static uint32_t code_id_slow(struct mt_thread *t, const struct code_entry *kp, const struct code_entry **found)
{
	struct code_entry k = *kp;
	uint64_t h = k.code * 0x9e3779b97f4a7c15u;
	struct code_entry *mine = NULL;

	for (uint32_t i = (uint32_t)(h >> 40) & (CODE_SLOTS - 1);; i = (i + 1) & (CODE_SLOTS - 1)) {
		struct code_entry *e = atomic_load_explicit(&codes[i], memory_order_acquire);
		if (!e) {
			if (!mine) {
				uint32_t n;
				/* Full: checked first, so the counter cannot wrap. */
				if (atomic_load_explicit(&arena_used, memory_order_relaxed) >= CODE_MAX_USED ||
				    (n = atomic_fetch_add(&arena_used, 1)) >= CODE_MAX_USED)
					return 0;
				mine = &arena[n];
				*mine = k;
				mine->id = atomic_fetch_add(&next_code_id, 1);
			}
			if (atomic_compare_exchange_strong(&codes[i], &e, mine)) {
				write_code(t, mine);
				*found = mine;
				return mine->id;
			}
		}
		if (same_code(e, &k)) {
			*found = e;
			return e->id;
		}
	}
}

/* --- the walk ---------------------------------------------------------- */

static inline uint64_t pyframe(uint32_t id, int64_t off)
{
	if (off < 0)
		off = 0;
	if (off > 0xffffff)
		off = 0xffffff;
	return MT_PYFRAME_TAG | (uint64_t)id << 24 | (uint64_t)off;
}

/*
 * The calling thread's Python frames, innermost first, into py[] (at most
 * max); ends[g] is one past the last frame of the g-th C call of the
 * evaluation loop. Returns the number of frames.
 */
static int walk(struct mt_thread *t, uint64_t *py, int max, uint16_t *ends, int *ngroups)
{
	/* The layout in locals: nothing the loop stores can change them. */
	const unsigned o_back = L->frame_back, o_code = L->frame_code, o_instr = L->frame_instr,
		o_owner = L->frame_owner, o_entry = L->frame_is_entry, o_co_code = L->code_code,
		o_ftr = L->code_firsttraceable, o_file = L->code_filename,
		o_name = L->code_qualname != NO ? L->code_qualname : L->code_name,
		o_table = L->code_linetable, o_first = L->code_firstlineno, version = L->version;
	const uint64_t type = (uint64_t)(uintptr_t)code_type;
	uint64_t ts = (uint64_t)(uintptr_t)get_tstate(), f;
	int n = 0, g = 0, old = version < 0x030b, cstack = version >= 0x030c;

	*ngroups = 0;
	if (!ts)
		return 0;
	f = rd64(ts, L->tstate_frame);
	if (f && L->cframe_current != NO)
		f = rd64(f, L->cframe_current);
	for (int steps = 0; f && n < max && steps < WALK_MAX; steps++) {
		uint64_t code = rd64(f, o_code);
		int end = old;

		if (old) {
			if (rd64(code, 8) != type)
				break;
			int lasti = *(const int *)(uintptr_t)(f + o_instr);
			py[n++] = pyframe(code_id(t, code, o_file, o_name, o_table, o_first),
					  version == 0x0309 ? lasti / 2 : lasti);
		} else {
			unsigned owner = *(const uint8_t *)(uintptr_t)(f + o_owner);
			if (owner == OWNED_BY_CSTACK && cstack) {
				end = 1;
			} else if (code && rd64(code, 8) == type) {
				int64_t off = ((int64_t)rd64(f, o_instr) - (int64_t)(code + o_co_code)) / 2;
				if (owner == OWNED_BY_GENERATOR || off >= *(const int *)(uintptr_t)(code + o_ftr))
					py[n++] = pyframe(code_id(t, code, o_file, o_name, o_table, o_first), off);
				if (o_entry != NO && *(const uint8_t *)(uintptr_t)(f + o_entry))
					end = 1;
			} else if (version < 0x030d) {
				break;  /* not a code object: offsets or chain are wrong */
			}
		}
		if (end && n > (g ? ends[g - 1] : 0) && g < MT_MAX_DEPTH)
			ends[g++] = (uint16_t)n;
		f = rd64(f, o_back);
	}
	if (n > (g ? ends[g - 1] : 0) && g < MT_MAX_DEPTH)
		ends[g++] = (uint16_t)n;
	*ngroups = g;
	return n;
}

int mt_py_splice(struct mt_thread *t, const uint64_t *native, int nn, uint64_t *out, int depth)
{
	uint64_t py[MT_MAX_DEPTH];
	uint16_t ends[MT_MAX_DEPTH];
	int s = atomic_load_explicit(&state, memory_order_acquire), npy, ngroups, m = 0, k = 0, g = 0;

	if (MT_UNLIKELY(s == PY_UNKNOWN)) {
		static _Atomic int detecting;
		if (atomic_exchange(&detecting, 1))
			return 0;   /* another thread is looking: native frames */
		s = detect(t);
	}
	if (s != PY_ON)
		return 0;
	npy = walk(t, py, depth, ends, &ngroups);
	if (npy == 0)
		return 0;
	for (int i = 0; i < nn && m < depth; i++) {
		uint64_t ip = native[i];
		if (ip > eval_start && ip <= eval_end && g < ngroups) {
			while (k < ends[g] && m < depth)
				out[m++] = py[k++];
			k = ends[g++];
			if (m == depth)
				break;
		}
		out[m++] = ip;
	}
	while (k < npy && m < depth)
		out[m++] = py[k++];
	return m;
}

void mt_py_fork_child(void)
{
	if (!codes)
		return;
	mmap(codes, CODE_SLOTS * sizeof(void *), PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	atomic_store(&arena_used, 0);
	atomic_store(&next_code_id, 1);
	atomic_fetch_add(&table_gen, 1);
}
