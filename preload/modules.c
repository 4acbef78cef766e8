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
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "mt.h"

#define MAX_MODULES 8192

struct written { uint64_t start, end; };

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
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
	n_written = 0;
	atomic_store(&seen_adds, 0);
	atomic_store(&seen_subs, 0);
}
