/*
 * symbols.c - turns recorded return addresses into functions, files and
 * lines, offline, with elfutils libdw.
 *
 * How it works: an address belongs to the module record of its process
 * whose [start, end) holds it; the offset ip - base (the load bias) is an
 * address in the file, so each distinct module file is opened once, alone
 * in its own Dwfl at bias 0, wherever it is found: under --debug-dir by
 * build id (DIR/.build-id/xx/rest.debug, then without .debug), under
 * --sysroot, then at its recorded path. A file whose build id differs from
 * the recorded one (rebuilt since) is not used: its frames print as
 * module+offset and are counted as unresolved. Lookups use ip - 1 (every
 * recorded ip is a return address, so ip itself may be the next line).
 * Inlined frames come from the DWARF scopes at the address (as
 * eu-addr2line -i does). Results are cached in memory per (file, offset)
 * and in the database's symbols table per (build id, offset).
 *
 * Trimming: frames of libmemtrace.so, of the CUDA driver and runtime
 * (libcuda.so*, libcudart.so*, and the simulated ones under simcuda/) and
 * libc's process start are hidden (counted); the first remaining frame
 * outside system library directories is marked as the user's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/pyframes.h"
#include "model/symbols.h"

#define MAX_SHOWN 32

struct modfile {
	char *path;
	unsigned char build_id[64];
	int blen;
	char key[160];              /* build id in hex, or the path */
	int state;                  /* 0 untried, 1 ok, -1 not found, -2 rebuilt */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int collapse, system, caching;
};

struct resolved {               /* frames of one (file, offset) */
	uint32_t mf;
	uint64_t offset;
	uint32_t first, n;          /* in sy->pool; n 0: unresolved */
	int used;
};

struct stackent {
	uint64_t key;               /* proc << 32 | stack, + 1 */
	struct sym_stack *st;       /* its own allocation: callers keep the
	                               pointer while the table grows */
	int caching;                /* -1 not computed */
	int done;
};

struct symbols {
	Dwfl_Callbacks cb;
	char *debugpath;
	char *sysroot, *debug_dir;
	sqlite3 *db;
	sqlite3_stmt *q_get, *q_put;
	struct modfile *mods;
	size_t nmods;
	int **proc_mod;             /* per process, per module record: mods index */
	int nproc_mod;
	struct resolved *res;
	size_t res_cap, res_n;
	struct sym_frame *pool;
	size_t pool_n, pool_cap;
	struct stackent *stacks;
	size_t st_cap, st_n;
	struct py_codes **py;       /* per process, loaded on first use */
	int npy;
	char **strs;
	size_t nstrs;
	uint64_t unresolved;
	char *(*demangle)(const char *, char *, size_t *, int *);
	int demangle_tried;
};

static const char *keep(struct symbols *sy, const char *s)
{
	char *d;
	void *n;

	if (!s)
		return NULL;
	n = realloc(sy->strs, (sy->nstrs + 1) * sizeof(char *));
	if (!n || !(d = strdup(s)))
		return NULL;
	sy->strs = n;
	sy->strs[sy->nstrs++] = d;
	return d;
}

static const char *keep_n(struct symbols *sy, const char *s, size_t n)
{
	char *d = strndup(s, n);
	const char *k = d ? keep(sy, d) : NULL;

	free(d);
	return k;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int sym_name_is_caching(const char *function, const char *module)
{
	if (module) {
		const char *b = base_name(module);

		if (!strncmp(b, "libc10_cuda", 11) || strstr(module, "cupy/cuda/memory"))
			return 1;
	}
	return function && (strstr(function, "CUDACachingAllocator") ||
			    strstr(function, "SingleDeviceMemoryPool"));
}

static int collapsed_module(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libmemtrace.so", 14) || !strncmp(b, "libcuda.so", 10) ||
	       !strncmp(b, "libcudart.so", 12) || strstr(path, "/simcuda/") != NULL;
}

static int system_module(const char *path)
{
	return !strncmp(path, "/lib/", 5) || !strncmp(path, "/lib64/", 7) ||
	       !strncmp(path, "/usr/lib/", 9) || !strncmp(path, "/usr/lib64/", 11) ||
	       !strncmp(path, "linux-vdso", 10) || !strncmp(path, "linux-gate", 10);
}

struct symbols *sym_open(const struct sym_opts *o, sqlite3 *db, char *err, size_t errlen)
{
	struct symbols *sy = calloc(1, sizeof(*sy));
	size_t n;

	if (!sy)
		goto nomem;
	if (o && o->sysroot && !(sy->sysroot = strdup(o->sysroot)))
		goto nomem;
	if (o && o->debug_dir && !(sy->debug_dir = strdup(o->debug_dir)))
		goto nomem;
	n = (sy->debug_dir ? strlen(sy->debug_dir) : 0) + 64;
	if (!(sy->debugpath = malloc(n)))
		goto nomem;
	snprintf(sy->debugpath, n, "%s%s.debug:/usr/lib/debug", sy->debug_dir ? sy->debug_dir : "",
		 sy->debug_dir ? ":" : "");
	sy->cb.find_elf = dwfl_build_id_find_elf;
	sy->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	sy->cb.section_address = dwfl_offline_section_address;
	sy->cb.debuginfo_path = &sy->debugpath;
	sy->db = db;
	if (db && (sqlite3_prepare_v2(db, "SELECT function, file, line, inlined FROM symbols "
				      "WHERE module = ?1 AND offset = ?2 ORDER BY level",
				      -1, &sy->q_get, NULL) != SQLITE_OK ||
		   sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO symbols(module, offset, level, "
				      "function, file, line, inlined) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
				      -1, &sy->q_put, NULL) != SQLITE_OK)) {
		snprintf(err, errlen, "cannot prepare the symbol cache: %s", sqlite3_errmsg(db));
		sym_close(sy);
		return NULL;
	}
	return sy;
nomem:
	snprintf(err, errlen, "out of memory");
	sym_close(sy);
	errno = ENOMEM;
	return NULL;
}

void sym_close(struct symbols *sy)
{
	if (!sy)
		return;
	for (size_t i = 0; i < sy->nmods; i++) {
		if (sy->mods[i].dwfl)
			dwfl_end(sy->mods[i].dwfl);
		free(sy->mods[i].path);
	}
	for (int i = 0; i < sy->nproc_mod; i++)
		free(sy->proc_mod[i]);
	for (int i = 0; i < sy->npy; i++)
		py_codes_free(sy->py[i]);
	free(sy->py);
	for (size_t i = 0; i < sy->nstrs; i++)
		free(sy->strs[i]);
	for (size_t i = 0; i < sy->st_cap; i++)
		if (sy->stacks && sy->stacks[i].st) {
			free(sy->stacks[i].st->frames);
			free(sy->stacks[i].st);
		}
	sqlite3_finalize(sy->q_get);
	sqlite3_finalize(sy->q_put);
	free(sy->strs);
	free(sy->proc_mod);
	free(sy->mods);
	free(sy->res);
	free(sy->pool);
	free(sy->stacks);
	free(sy->debugpath);
	free(sy->sysroot);
	free(sy->debug_dir);
	free(sy);
}

/* --- module files ------------------------------------------------------- */

static int modfile_of(struct symbols *sy, const struct mt_module *m)
{
	struct trace_bytes id, path;
	struct modfile *mf;
	void *n;

	trace_module_strings(m, &id, &path);
	for (size_t i = 0; i < sy->nmods; i++) {
		mf = &sy->mods[i];
		if ((size_t)mf->blen == id.len && !memcmp(mf->build_id, id.p, id.len) &&
		    strlen(mf->path) == path.len && !memcmp(mf->path, path.p, path.len))
			return (int)i;
	}
	n = realloc(sy->mods, (sy->nmods + 1) * sizeof(*sy->mods));
	if (!n)
		return -1;
	sy->mods = n;
	mf = &sy->mods[sy->nmods];
	memset(mf, 0, sizeof(*mf));
	if (!(mf->path = strndup(path.p, path.len)))
		return -1;
	mf->blen = id.len < sizeof(mf->build_id) ? (int)id.len : (int)sizeof(mf->build_id);
	memcpy(mf->build_id, id.p, (size_t)mf->blen);
	if (mf->blen) {
		for (int i = 0; i < mf->blen && i < 64; i++)
			snprintf(mf->key + 2 * i, 3, "%02x", mf->build_id[i]);
	} else {
		snprintf(mf->key, sizeof(mf->key), "%s", mf->path);
	}
	mf->collapse = collapsed_module(mf->path);
	mf->system = system_module(mf->path);
	mf->caching = sym_name_is_caching(NULL, mf->path);
	return (int)sy->nmods++;
}

static int try_file(struct symbols *sy, struct modfile *mf, const char *file, int *mismatch)
{
	Dwfl *d;
	Dwfl_Module *m;

	if (access(file, R_OK) != 0)
		return -1;
	d = dwfl_begin(&sy->cb);
	if (!d)
		return -1;
	dwfl_report_begin(d);
	m = dwfl_report_elf(d, base_name(mf->path), file, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	if (m && mf->blen) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(m, &bits, &vaddr);

		if (n != mf->blen || memcmp(bits, mf->build_id, (size_t)n)) {
			*mismatch = 1;
			m = NULL;
		}
	}
	if (!m) {
		dwfl_end(d);
		return -1;
	}
	mf->dwfl = d;
	mf->mod = m;
	return 0;
}

static void open_modfile(struct symbols *sy, struct modfile *mf)
{
	char buf[8192];
	int mismatch = 0;

	mf->state = -1;
	if (sy->debug_dir && mf->blen > 1) {
		snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s.debug", sy->debug_dir, mf->key,
			 mf->key + 2);
		if (!try_file(sy, mf, buf, &mismatch))
			goto ok;
		snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s", sy->debug_dir, mf->key, mf->key + 2);
		if (!try_file(sy, mf, buf, &mismatch))
			goto ok;
	}
	if (sy->sysroot) {
		snprintf(buf, sizeof(buf), "%s/%s", sy->sysroot, mf->path);
		if (!try_file(sy, mf, buf, &mismatch))
			goto ok;
	}
	if (mf->path[0] == '/' && !try_file(sy, mf, mf->path, &mismatch))
		goto ok;
	mf->state = mismatch ? -2 : -1;
	return;
ok:
	mf->state = 1;
}

/* The module file and record holding ip in process proc; -1 if none. */
static int find_module(struct symbols *sy, const struct stream *s, int proc, uint64_t ip,
		       const struct mt_module **mrec)
{
	const struct sproc *p = stream_proc(s, proc);

	if (proc >= sy->nproc_mod) {
		void *n = realloc(sy->proc_mod, (size_t)(proc + 1) * sizeof(int *));

		if (!n)
			return -1;
		sy->proc_mod = n;
		for (int i = sy->nproc_mod; i <= proc; i++)
			sy->proc_mod[i] = NULL;
		sy->nproc_mod = proc + 1;
	}
	/* [0] is how many module records it covers: a process followed
	   while it runs (memtrace top) gains modules */
	if (!sy->proc_mod[proc] || sy->proc_mod[proc][0] < (int)p->nmodules) {
		int old = sy->proc_mod[proc] ? sy->proc_mod[proc][0] : 0;
		int *n = realloc(sy->proc_mod[proc], (p->nmodules + 1) * sizeof(int));

		if (!n)
			return -1;
		for (uint32_t i = (uint32_t)old; i < p->nmodules; i++)
			n[i + 1] = -2;
		n[0] = (int)p->nmodules;
		sy->proc_mod[proc] = n;
	}
	for (uint32_t i = p->nmodules; i-- > 0;) {
		const struct mt_module *m = p->modules[i];

		if (ip >= m->start && ip < m->end) {
			if (sy->proc_mod[proc][i + 1] == -2)
				sy->proc_mod[proc][i + 1] = modfile_of(sy, m);
			*mrec = m;
			return sy->proc_mod[proc][i + 1];
		}
	}
	return -1;
}

/* --- resolving ---------------------------------------------------------- */

static const char *demangle(struct symbols *sy, const char *name)
{
	char *d;
	const char *k;
	int status = 0;

	if (!name || strncmp(name, "_Z", 2))
		return name;
	if (!sy->demangle_tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		sy->demangle_tried = 1;
		if (h)
			*(void **)&sy->demangle = dlsym(h, "__cxa_demangle");
	}
	if (!sy->demangle || !(d = sy->demangle(name, NULL, NULL, &status)) || status)
		return name;
	k = keep(sy, d);
	free(d);
	return k ? k : name;
}

static int push_frame(struct symbols *sy, const char *fn, const char *file, int line, int inl)
{
	struct sym_frame *f;

	if (sy->pool_n == sy->pool_cap) {
		size_t c = sy->pool_cap ? sy->pool_cap * 2 : 256;
		void *n = realloc(sy->pool, c * sizeof(*sy->pool));

		if (!n)
			return -1;
		sy->pool = n;
		sy->pool_cap = c;
	}
	f = &sy->pool[sy->pool_n++];
	memset(f, 0, sizeof(*f));
	f->function = keep(sy, fn);
	f->file = keep(sy, file);
	f->line = line;
	f->inlined = inl;
	return 0;
}

static const char *src_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* Frames of one address of a usable module into the pool (inline chain). */
static void resolve_dwarf(struct symbols *sy, struct modfile *mf, uint64_t addr)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mf->mod, addr, &off, &sym, NULL, NULL, NULL);
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mf->mod, addr, &bias);
	Dwfl_Line *l = dwfl_module_getsrc(mf->mod, addr);
	const char *file = NULL;
	int line = 0, done = 0;
	Dwarf_Die *scopes = NULL;
	int n = 0;

	char plain[1024];

	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	if (name && strchr(name, '@')) {       /* "fn@@GLIBC_2.34": drop the version */
		snprintf(plain, sizeof(plain), "%.*s", (int)(strchr(name, '@') - name), name);
		name = plain;
	}
	name = demangle(sy, name);
	if (cu)
		n = dwarf_getscopes(cu, addr - bias, &scopes);
	for (int i = 0; i < n && !done; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute at;
			Dwarf_Word w = 0;

			push_frame(sy, dwarf_diename(&scopes[i]), file, line, 1);
			file = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &at), &w) == 0 ?
			       src_file(cu, w) : NULL;
			line = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &at), &w) == 0 ?
			       (int)w : 0;
		} else if (tag == DW_TAG_subprogram) {
			push_frame(sy, name ? name : dwarf_diename(&scopes[i]), file, line, 0);
			done = 1;
		}
	}
	free(scopes);
	if (!done)
		push_frame(sy, name, file, line, 0);
}

static int db_get(struct symbols *sy, struct modfile *mf, uint64_t offset)
{
	int n = 0;

	if (!sy->q_get)
		return 0;
	sqlite3_bind_text(sy->q_get, 1, mf->key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(sy->q_get, 2, (sqlite3_int64)offset);
	while (sqlite3_step(sy->q_get) == SQLITE_ROW) {
		push_frame(sy, (const char *)sqlite3_column_text(sy->q_get, 0),
			   (const char *)sqlite3_column_text(sy->q_get, 1),
			   sqlite3_column_int(sy->q_get, 2), sqlite3_column_int(sy->q_get, 3));
		n++;
	}
	sqlite3_reset(sy->q_get);
	return n;
}

static void db_put(struct symbols *sy, struct modfile *mf, uint64_t offset, uint32_t first,
		   uint32_t n)
{
	if (!sy->q_put)
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct sym_frame *f = &sy->pool[first + i];

		sqlite3_bind_text(sy->q_put, 1, mf->key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(sy->q_put, 2, (sqlite3_int64)offset);
		sqlite3_bind_int(sy->q_put, 3, (int)i);
		sqlite3_bind_text(sy->q_put, 4, f->function, -1, SQLITE_STATIC);
		sqlite3_bind_text(sy->q_put, 5, f->file, -1, SQLITE_STATIC);
		sqlite3_bind_int(sy->q_put, 6, f->line);
		sqlite3_bind_int(sy->q_put, 7, f->inlined);
		sqlite3_step(sy->q_put);
		sqlite3_reset(sy->q_put);
	}
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x;
}

static int res_grow(struct symbols *sy)
{
	size_t cap = sy->res_cap ? sy->res_cap * 2 : 1024;
	struct resolved *n = calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < sy->res_cap; i++) {
		if (!sy->res[i].used)
			continue;
		size_t j = mix(sy->res[i].offset ^ ((uint64_t)sy->res[i].mf << 48)) & (cap - 1);

		while (n[j].used)
			j = (j + 1) & (cap - 1);
		n[j] = sy->res[i];
	}
	free(sy->res);
	sy->res = n;
	sy->res_cap = cap;
	return 0;
}

/* The frames of (file mf, offset); NULL when out of memory. */
static const struct resolved *resolve(struct symbols *sy, int mfi, uint64_t offset)
{
	struct modfile *mf = &sy->mods[mfi];
	struct resolved *r;
	size_t j;

	if ((sy->res_n + 1) * 2 > sy->res_cap && res_grow(sy))
		return NULL;
	for (j = mix(offset ^ ((uint64_t)mfi << 48)) & (sy->res_cap - 1); sy->res[j].used;
	     j = (j + 1) & (sy->res_cap - 1))
		if (sy->res[j].mf == (uint32_t)mfi && sy->res[j].offset == offset)
			return &sy->res[j];
	r = &sy->res[j];
	r->used = 1;
	r->mf = (uint32_t)mfi;
	r->offset = offset;
	r->first = (uint32_t)sy->pool_n;
	sy->res_n++;
	r->n = (uint32_t)db_get(sy, mf, offset);
	if (r->n)
		return r;
	if (!mf->state)
		open_modfile(sy, mf);
	if (mf->state == 1) {
		resolve_dwarf(sy, mf, offset ? offset - 1 : 0);
		r->n = (uint32_t)(sy->pool_n - r->first);
		if (r->n == 1 && !sy->pool[r->first].function && !sy->pool[r->first].file) {
			sy->pool_n = r->first;
			r->n = 0;
		}
		if (r->n)
			db_put(sy, mf, offset, r->first, r->n);
	}
	if (!r->n)
		sy->unresolved++;
	return r;
}

static struct stackent *stack_ent(struct symbols *sy, int proc, uint32_t stack)
{
	uint64_t key = ((uint64_t)proc << 32 | stack) + 1;
	size_t j;

	if ((sy->st_n + 1) * 2 > sy->st_cap) {
		size_t cap = sy->st_cap ? sy->st_cap * 2 : 256;
		struct stackent *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < sy->st_cap; i++) {
			if (!sy->stacks[i].key)
				continue;
			size_t k = mix(sy->stacks[i].key) & (cap - 1);

			while (n[k].key)
				k = (k + 1) & (cap - 1);
			n[k] = sy->stacks[i];
		}
		free(sy->stacks);
		sy->stacks = n;
		sy->st_cap = cap;
	}
	for (j = mix(key) & (sy->st_cap - 1); sy->stacks[j].key; j = (j + 1) & (sy->st_cap - 1))
		if (sy->stacks[j].key == key)
			return &sy->stacks[j];
	sy->stacks[j].key = key;
	sy->stacks[j].caching = -1;
	sy->st_n++;
	return &sy->stacks[j];
}

static int start_frame(const char *fn)
{
	return fn && (!strcmp(fn, "__libc_start_call_main") || !strcmp(fn, "__libc_start_main") ||
		      !strcmp(fn, "__libc_start_main_impl") || !strcmp(fn, "_start"));
}

/* The Python code records of a process, loaded on first use. */
static struct py_codes *py_codes_of(struct symbols *sy, const struct stream *s, int proc)
{
	if (proc >= sy->npy) {
		struct py_codes **n = realloc(sy->py, (size_t)(proc + 1) * sizeof(*n));

		if (!n)
			return NULL;
		memset(n + sy->npy, 0, (size_t)(proc + 1 - sy->npy) * sizeof(*n));
		sy->py = n;
		sy->npy = proc + 1;
	}
	/* a followed process has no trace object: its Python frames show as
	   py:ID */
	if (!sy->py[proc] && stream_proc(s, proc)->t)
		sy->py[proc] = py_codes_load(stream_proc(s, proc)->t);
	return sy->py[proc];
}

/* A Python frame as shown; unknown code ids show as "py:ID". */
static struct sym_frame python_frame(struct symbols *sy, const struct py_codes *pc, uint64_t ip)
{
	struct sym_frame f;
	struct py_frame pf;
	char buf[32];

	memset(&f, 0, sizeof(f));
	f.python = 1;
	f.module = "python";
	f.ip = ip;
	f.offset = MT_PYFRAME_OFFSET(ip);
	if (pc && py_codes_frame(pc, ip, &pf) == 0) {
		f.function = keep_n(sy, pf.name, pf.name_len);
		f.file = keep_n(sy, pf.file, pf.file_len);
		f.line = pf.line > 0 ? pf.line : 0;
		f.user = py_file_is_user(pf.file, pf.file_len);
	} else {
		snprintf(buf, sizeof buf, "py:%u", MT_PYFRAME_CODE(ip));
		f.function = keep(sy, buf);
		sy->unresolved++;
	}
	return f;
}

/* The interpreter's own native frames, hidden when Python frames show. */
static int interpreter_module(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libpython", 9) || !strncmp(b, "python", 6);
}

const struct sym_stack *sym_stack(struct symbols *sy, const struct stream *s, int proc,
				  uint32_t stack)
{
	struct stackent *e = stack_ent(sy, proc, stack);
	const struct mt_stack *st = stream_stack(s, proc, stack);
	const struct py_codes *pc = NULL;
	int user_done = 0, has_python = 0;

	if (!e)
		return NULL;
	if (e->done)
		return e->st;
	if (!(e->st = calloc(1, sizeof(*e->st))))
		return NULL;
	e->done = 1;
	if (!st)
		return e->st;
	e->st->frames = calloc(MAX_SHOWN, sizeof(struct sym_frame));
	if (!e->st->frames)
		return NULL;
	for (uint32_t i = 0; i < st->depth && !has_python; i++)
		has_python = py_is_frame(st->ips[i]);
	if (has_python)
		pc = py_codes_of(sy, s, proc);
	for (uint32_t i = 0; i < st->depth; i++) {
		if (py_is_frame(st->ips[i])) {
			struct sym_frame f = python_frame(sy, pc, st->ips[i]);

			/* the highlight goes to the first Python frame of the
			   user's own code; other Python frames are never it */
			if (f.user && user_done)
				f.user = 0;
			if (f.user)
				user_done = 1;
			if (e->st->nframes < MAX_SHOWN)
				e->st->frames[e->st->nframes++] = f;
			else
				e->st->hidden++;
			continue;
		}
		const struct mt_module *m = NULL;
		int mfi = find_module(sy, s, proc, st->ips[i], &m);
		const struct resolved *r = NULL;
		struct modfile *mf = mfi >= 0 ? &sy->mods[mfi] : NULL;
		uint64_t offset = m ? st->ips[i] - m->base : st->ips[i];
		uint32_t n = 1;

		if (mf && (mf->collapse || (has_python && interpreter_module(mf->path)))) {
			e->st->hidden++;
			continue;
		}
		if (mf && !(r = resolve(sy, mfi, offset)))
			return NULL;
		if (!mf)
			sy->unresolved++;
		if (r && r->n)
			n = r->n;
		for (uint32_t k = 0; k < n; k++) {
			struct sym_frame f;

			memset(&f, 0, sizeof(f));
			if (r && r->n)
				f = sy->pool[r->first + k];
			f.module = mf ? mf->path : "";
			f.offset = offset;
			f.ip = st->ips[i];
			if (start_frame(f.function)) {
				e->st->hidden++;
				continue;
			}
			if (!user_done && !has_python && !(mf && mf->system)) {
				f.user = 1;
				user_done = 1;
			}
			if (e->st->nframes < MAX_SHOWN)
				e->st->frames[e->st->nframes++] = f;
			else
				e->st->hidden++;
		}
	}
	return e->st;
}

int sym_is_caching(struct symbols *sy, const struct stream *s, int proc, uint32_t stack)
{
	struct stackent *e = stack_ent(sy, proc, stack);
	const struct mt_stack *st = stream_stack(s, proc, stack);

	if (!e || !st)
		return 0;
	if (e->caching >= 0)
		return e->caching;
	e->caching = 0;
	for (uint32_t i = 0; i < st->depth && !e->caching; i++) {
		const struct mt_module *m = NULL;
		int mfi = find_module(sy, s, proc, st->ips[i], &m);
		struct modfile *mf;
		const char *name;

		if (mfi < 0)
			continue;
		mf = &sy->mods[mfi];
		if (mf->caching) {
			e->caching = 1;
			break;
		}
		if (mf->collapse || mf->system)
			continue;
		if (!mf->state)
			open_modfile(sy, mf);
		if (mf->state != 1)
			continue;
		name = dwfl_module_addrname(mf->mod, st->ips[i] - m->base - 1);
		e->caching = sym_name_is_caching(name, NULL);
	}
	for (uint32_t i = 0; i < st->depth && !e->caching; i++) {
		const struct sym_stack *ss;

		if (!(st->ips[i] & MT_PYFRAME_TAG))
			continue;
		/* a caching allocator written in Python: its frames' names */
		ss = sym_stack(sy, s, proc, stack);
		for (int k = 0; ss && k < ss->nframes && !e->caching; k++)
			e->caching = ss->frames[k].python &&
				     sym_name_is_caching(ss->frames[k].function, NULL);
		break;
	}
	return e->caching;
}

uint64_t sym_unresolved(const struct symbols *sy)
{
	return sy->unresolved;
}

int sym_problem(const struct symbols *sy, unsigned i, const char **path, const char **why)
{
	for (size_t k = 0; k < sy->nmods; k++) {
		const struct modfile *mf = &sy->mods[k];

		if (mf->state >= 0 || mf->collapse || system_module(mf->path))
			continue;
		if (i-- == 0) {
			*path = mf->path;
			*why = mf->state == -2 ? "build id mismatch (rebuilt since the run)" :
			       "not found";
			return 0;
		}
	}
	return -1;
}
