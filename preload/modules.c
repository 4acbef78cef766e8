/*
 * modules.c - the module map: one MT_REC_MODULE per loaded ELF object (path,
 * address range, load bias, GNU build id), so the analyzer can symbolize
 * offline, on another machine.
 *
 * Written when the trace file is opened and again whenever a new stack is
 * interned after the set of loaded objects changed (dlopen). dlopen itself
 * is deliberately not wrapped: glibc uses dlopen's return address to find
 * the caller's RUNPATH and $ORIGIN, and a wrapper would change it and break
 * library loading (PyTorch finds its CUDA libraries that way). New stacks are
 * where new code shows up, and dl_iterate_phdr's dlpi_adds counter says
 * cheaply whether anything was loaded since the last scan.
 *
 * Redirection: a module loaded with dlopen(RTLD_DEEPBIND) and linked with
 * -lcuda binds cuMemAlloc_v2 & co. to libcuda, its own dependency, before
 * the global scope where libmemtrace is. So each new module's imports of
 * wrapped functions (JUMP_SLOT and GLOB_DAT relocations of undefined
 * symbols) are checked, from dlsym (a program reaches a plugin's entry
 * points through it) and whenever new stacks show the module set changed:
 * a GOT entry that holds the driver's own function, or a lazy PLT entry not
 * bound yet, is pointed at memtrace's wrapper, which calls that same
 * function. Entries holding anything else (another interposer's function, a
 * copy of libcuda in another namespace) are left alone; a lazy entry of a
 * module in another namespace (dlmopen) would be redirected to this
 * namespace's driver, a case not handled. RELRO pages are
 * made writable for the store and read-only again. A module found bound to
 * the driver gets a NOTE record naming it. What a plugin's constructor
 * allocates, inside dlopen, is not seen.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "mt.h"

#define MAX_MODULES 8192

struct written { uint64_t start, end; };

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t redirect_lock = PTHREAD_MUTEX_INITIALIZER;  /* mt_modules_redirect */
static struct written written[MAX_MODULES];
static int n_written;
static _Atomic unsigned long long seen_adds, seen_subs;

struct scan { struct mt_thread *t; unsigned long long adds, subs; };

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	s->adds = info->dlpi_adds;
	s->subs = info->dlpi_subs;
	return 1;   /* the first object is enough */
}

int mt_modules_maybe_changed(void)
{
	struct scan s = { 0 };
	dl_iterate_phdr(read_counters, &s);
	return s.adds != atomic_load_explicit(&seen_adds, memory_order_relaxed) ||
	       s.subs != atomic_load_explicit(&seen_subs, memory_order_relaxed);
}

static size_t build_id(struct dl_phdr_info *info, const uint8_t **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *n;
			const char *desc = name + ((n->n_namesz + 3) & ~3u);
			const char *next = desc + ((n->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
				*id = (const uint8_t *)desc;
				return n->n_descsz;
			}
			p = next;
		}
	}
	return 0;
}

static int write_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	uint64_t start = UINT64_MAX, end = 0;
	char exe[4096];
	const char *path = info->dlpi_name;
	const uint8_t *id = NULL;
	size_t id_len, path_len;

	s->adds = info->dlpi_adds;
	s->subs = info->dlpi_subs;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < start)
			start = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > end)
			end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (end == 0)
		return 0;
	for (int i = 0; i < n_written; i++)
		if (written[i].start == start && written[i].end == end)
			return 0;
	if (!path || !*path) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	id_len = build_id(info, &id);
	path_len = strlen(path);
	if (id_len > 64)
		id_len = 64;
	if (path_len > 4096)
		path_len = 4096;

	size_t rec = (sizeof(struct mt_module) + id_len + path_len + 7) & ~(size_t)7;
	uint32_t delta;
	struct mt_module *m = mt_writer_reserve(s->t, rec, mt_now(), &delta);
	if (!m)
		return 1;
	memset(m, 0, rec);
	m->lh.size = (uint32_t)rec;
	m->base = info->dlpi_addr;
	m->start = start;
	m->end = end;
	m->time_delta = delta;
	m->build_id_len = (uint16_t)id_len;
	m->path_len = (uint16_t)path_len;
	memcpy((char *)(m + 1), id, id_len);
	memcpy((char *)(m + 1) + id_len, path, path_len);
	mt_writer_commit(m, (struct mt_head){ MT_REC_MODULE, 0, 0, 0 });
	if (n_written < MAX_MODULES)
		written[n_written++] = (struct written){ start, end };
	return 0;
}

void mt_modules_write(struct mt_thread *t, int force_scan)
{
	struct scan s = { t, 0, 0 };

	if (!force_scan && !mt_modules_maybe_changed())
		return;
	if (!mt_writer_ready(t, mt_now()))
		return;
	pthread_mutex_lock(&modules_lock);
	dl_iterate_phdr(write_module, &s);
	atomic_store(&seen_adds, s.adds);
	atomic_store(&seen_subs, s.subs);
	pthread_mutex_unlock(&modules_lock);
}

void mt_modules_atfork_prepare(void) { pthread_mutex_lock(&modules_lock); }
void mt_modules_atfork_parent(void) { pthread_mutex_unlock(&modules_lock); }

void mt_modules_fork_child(void)
{
	pthread_mutex_init(&modules_lock, NULL);
	pthread_mutex_init(&redirect_lock, NULL);
	n_written = 0;
	atomic_store(&seen_adds, 0);
	atomic_store(&seen_subs, 0);
}

/* --- redirection of direct imports ---------------------------------------- */

#define MAX_NEW 256

struct candidate {
	uintptr_t base, start, end, dynamic, relro, relro_end;
	char path[512];
};

static uintptr_t checked[MAX_MODULES];    /* dynamic sections seen */
static int n_checked;
static _Atomic unsigned long long redirect_adds;
static struct candidate cands[MAX_NEW];
static int n_cands;

static int is_checked(uintptr_t dynamic)
{
	for (int i = 0; i < n_checked; i++)
		if (checked[i] == dynamic)
			return 1;
	return 0;
}

/* Under the loader's lock: note the new modules only (dlopen must not be
   called here). */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct candidate c = { .base = info->dlpi_addr, .start = UINTPTR_MAX };

	*(unsigned long long *)arg = info->dlpi_adds;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_DYNAMIC)
			c.dynamic = lo;
		else if (ph->p_type == PT_GNU_RELRO) {
			c.relro = lo;
			c.relro_end = lo + ph->p_memsz;
		} else if (ph->p_type == PT_LOAD) {
			if (lo < c.start)
				c.start = lo;
			if (lo + ph->p_memsz > c.end)
				c.end = lo + ph->p_memsz;
		}
	}
	if (!c.dynamic || mt_is_own((void *)c.dynamic) || is_checked(c.dynamic) || n_cands == MAX_NEW)
		return 0;
	if (info->dlpi_name && strncmp(info->dlpi_name, "linux-vdso", 10) == 0)
		return 0;
	snprintf(c.path, sizeof c.path, "%s", info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "(the program)");
	cands[n_cands++] = c;
	if (n_checked < MAX_MODULES)
		checked[n_checked++] = c.dynamic;
	return 0;
}

/* A pointer of the dynamic section: glibc relocates most in place. */
static uintptr_t dyn_ptr(const struct candidate *c, uintptr_t v)
{
	return v && v < c->base ? v + c->base : v;
}

static int store(const struct candidate *c, void **got, void *fn)
{
	uintptr_t a = (uintptr_t)got;
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = a & ~(uintptr_t)(page - 1);
	/* as the loader protects it: up to the last whole page of RELRO (the
	   page it ends in stays writable, and must stay so) */
	int ro = a >= c->relro && a < (c->relro_end & ~(uintptr_t)(page - 1));

	if (ro && mprotect((void *)lo, (size_t)page, PROT_READ | PROT_WRITE) != 0)
		return -1;
	__atomic_store_n(got, fn, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)lo, (size_t)page, PROT_READ);
	return 0;
}

/* Points the module's direct imports at the wrappers; returns how many
   were bound to the driver itself, in *lazy the unbound ones redirected,
   in *failed those that could not be written. */
static int redirect_module(const struct candidate *c, int *lazy, int *failed)
{
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *tabs[2] = { NULL, NULL };
	size_t sizes[2] = { 0, 0 };
	int direct = 0;

	for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)c->dynamic; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(c, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)dyn_ptr(c, d->d_un.d_ptr); break;
		case DT_JMPREL: tabs[0] = (const ElfW(Rela) *)dyn_ptr(c, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
		case DT_RELA: tabs[1] = (const ElfW(Rela) *)dyn_ptr(c, d->d_un.d_ptr); break;
		case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
		case DT_PLTREL: if (d->d_un.d_val != DT_RELA) return 0; break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; tabs[k] && i < sizes[k] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &tabs[k][i];
#if defined(__x86_64__)
			unsigned type = ELF64_R_TYPE(r->r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
#elif defined(__aarch64__)
			unsigned type = ELF64_R_TYPE(r->r_info);
			if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT)
				continue;
#else
			continue;
#endif
			const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(r->r_info)];
			const char *name = strtab + sym->st_name;
			void *real, *wrapper, **got = (void **)(c->base + r->r_offset);
			if (sym->st_shndx != SHN_UNDEF || name[0] != 'c' || name[1] != 'u')
				continue;
			if (!(wrapper = mt_import_wrapper(name, &real)))
				continue;
			void *cur = __atomic_load_n(got, __ATOMIC_ACQUIRE);
			int bound = cur == real;
			if (!bound && !((uintptr_t)cur >= c->start && (uintptr_t)cur < c->end))
				continue;   /* memtrace's already, or someone else's */
			if (store(c, got, wrapper) != 0) {
				(*failed)++;
				continue;
			}
			if (bound)
				direct++;
			else
				(*lazy)++;
		}
	}
	return direct;
}

void mt_modules_redirect(void)
{
	unsigned long long adds = 0;
	struct scan s = { 0 };
	static int warned;

	dl_iterate_phdr(read_counters, &s);
	if (s.adds == atomic_load_explicit(&redirect_adds, memory_order_relaxed))
		return;
	/* Never waits: a thread in dlopen (the loader's lock held) may run a
	   constructor that calls dlsym while this one, holding redirect_lock,
	   asks the loader for libcuda. The thread holding it sees every module
	   loaded up to its scan; a later one is seen by the next call. */
	if (pthread_mutex_trylock(&redirect_lock) != 0)
		return;
	n_cands = 0;
	dl_iterate_phdr(collect, &adds);
	atomic_store(&redirect_adds, adds);
	for (int i = 0; i < n_cands; i++) {
		int lazy = 0, failed = 0, direct = redirect_module(&cands[i], &lazy, &failed);
		struct mt_thread *t;
		char text[700];
		if (failed)
			mt_warn_once(&warned, "%s binds to libcuda directly (RTLD_DEEPBIND) and its GOT "
				     "could not be written: %d of its calls are not traced", cands[i].path, failed);
		if (!direct || !(t = mt_thread()) || !mt_writer_ready(t, mt_now()))
			continue;
		snprintf(text, sizeof text, "deepbind module=%s imports=%d: bound to libcuda directly, "
			 "redirected to memtrace", cands[i].path, direct + lazy);
		mt_note(t, text);
	}
	pthread_mutex_unlock(&redirect_lock);
}
