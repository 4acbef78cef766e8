/*
 * framework.c - the entry points of include/memtrace/framework.h: a
 * framework's own allocator (PyTorch's caching allocator, drained by
 * memtrace's Python side through ctypes) writes its events, stacks and
 * notes into the process's trace as MT_REC_FW_* records.
 *
 * Design. FW events arrive in batches long after they happened, so they
 * cannot go into the calling thread's slab, which already holds later
 * records: they go into slabs of their own, owned by a pseudo-thread
 * (fw_thread) whose slab header carries the tid of the thread that handed
 * the batch over. Within such a slab events are in time order, as the
 * reader's merge needs; a batch that starts earlier than the last event
 * written (a caller that broke the framework.h contract, or a second
 * drain) starts a new slab rather than break that order. Stacks and notes
 * are side records: they go into the calling thread's own slab, written
 * (and committed) before the call returns, so every id an event names is
 * already in the file.
 *
 * Threading: one mutex (fw_lock) serializes the pseudo-thread's slab and
 * the stack table; it is taken before the writer's lock, never after. The
 * entry points are called from ordinary Python code, never from a CUDA
 * hook or the framework's allocator, so they may block briefly; none of
 * this runs on the hooks' hot paths. Crash safety is the writer's: each
 * record's head is stored last, so a SIGKILL after a call returned keeps
 * everything it wrote.
 *
 * The stack table interns by the exact bytes (and frame count) given:
 * open addressing over entries in an mmap'd table, the bytes in an mmap'd
 * arena (reserved, not committed: no malloc). When it is full, new stacks
 * are still written, each under a fresh id (no longer shared). A stack
 * whose record would pass MT_MAX_RECORD keeps its innermost frames that
 * fit; a note is cut to fit. After fork the child's table starts empty:
 * ids belong to a file.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "memtrace/framework.h"
#include "mt.h"

#define TABLE_SLOTS (1u << 16)
#define TABLE_MAX_USED (TABLE_SLOTS / 4 * 3)
#define ARENA_BYTES (64u << 20)         /* reserved, not committed */

struct fw_entry {
	uint64_t hash;
	uint64_t off;                   /* of the bytes in the arena */
	uint32_t len;
	uint32_t nframes;
	uint32_t id;                    /* 0: empty slot */
	uint32_t pad;
};

static pthread_mutex_t fw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mt_thread fw_thread = { .own_slabs = 1 };   /* the FW events' own slabs */
static uint64_t fw_last;                /* time of the last event written */
static uint32_t fw_epoch;               /* writer epoch of the state below */
static struct fw_entry *table;
static char *arena;
static size_t arena_used;
static uint32_t used_slots;
static uint32_t next_id = 1;
static int info_written;                /* a note went into this trace */

/* A new writer epoch (fork) or the first call: the child's file has none
   of the parent's stacks, and its events start a slab of their own. */
static void sync_epoch(void)
{
	uint32_t e = mt_writer_epoch();

	if (fw_epoch == e)
		return;
	fw_epoch = e;
	fw_last = 0;
	next_id = 1;
	used_slots = 0;
	arena_used = 0;
	if (table)
		memset(table, 0, TABLE_SLOTS * sizeof *table);
}

static int table_init(void)
{
	if (table)
		return 0;
	if (arena == MAP_FAILED)
		return -1;
	void *t = mmap(NULL, TABLE_SLOTS * sizeof *table, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED || a == MAP_FAILED) {
		if (t != MAP_FAILED)
			munmap(t, TABLE_SLOTS * sizeof *table);
		if (a != MAP_FAILED)
			munmap(a, ARENA_BYTES);
		arena = MAP_FAILED;     /* do not try again */
		return -1;
	}
	table = t;
	arena = a;
	return 0;
}

/* FNV-1a over the frame count and the bytes. */
static uint64_t hash_bytes(const unsigned char *p, size_t len, uint32_t nframes)
{
	uint64_t h = 0xcbf29ce484222325ull ^ nframes;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

/*
 * The bytes the first keep frames of a packed stack take, keep being as
 * many as fit in room bytes (all nframes when they do). -1 when the frames
 * do not end exactly at len: the caller's packing is wrong.
 */
static long frames_fit(const unsigned char *p, size_t len, uint32_t nframes, size_t room,
		       uint32_t *keep)
{
	size_t off = 0, fit = 0;

	*keep = 0;
	for (uint32_t i = 0; i < nframes; i++) {
		struct mt_fw_frame f;

		if (len - off < sizeof f)
			return -1;
		memcpy(&f, p + off, sizeof f);
		if (len - off - sizeof f < (size_t)f.file_len + f.func_len)
			return -1;
		off += sizeof f + f.file_len + f.func_len;
		if (off <= room && *keep == i) {
			*keep = i + 1;
			fit = off;
		}
	}
	return off == len ? (long)fit : -1;
}

/* Writes the FW_STACK record in t's slab; 0, or -1 when it cannot. */
static int write_stack(struct mt_thread *t, uint32_t id, const void *frames, size_t len,
		       uint32_t nframes)
{
	size_t size = (sizeof(struct mt_fw_stack) + len + 7) & ~(size_t)7;
	uint32_t delta;
	struct mt_fw_stack *s = mt_writer_reserve(t, size, mt_now(), &delta);

	if (!s)
		return -1;
	memset((char *)s + size - 8, 0, 8);     /* the padding */
	s->lh.size = (uint32_t)size;
	s->id = id;
	s->nframes = nframes;
	memcpy(s + 1, frames, len);
	mt_writer_commit(s, (struct mt_head){ MT_REC_FW_STACK, 0, 0, 0 });
	return 0;
}

MT_EXPORT uint32_t memtrace_fw_stack(const void *frames, size_t len, uint32_t nframes)
{
	struct mt_thread *self = mt_thread();
	const size_t room = MT_MAX_RECORD - sizeof(struct mt_fw_stack);
	uint32_t keep, id = 0;
	long fit;

	if (!self || (!frames && len) || len > UINT32_MAX || !mt_writer_ready(self, mt_now()))
		return 0;
	fit = frames_fit(frames, len, nframes, room, &keep);
	if (fit < 0)
		return 0;
	pthread_mutex_lock(&fw_lock);
	sync_epoch();
	uint64_t h = hash_bytes(frames, len, nframes);
	struct fw_entry *slot = NULL;
	if (table_init() == 0) {
		for (uint32_t i = (uint32_t)h & (TABLE_SLOTS - 1);; i = (i + 1) & (TABLE_SLOTS - 1)) {
			struct fw_entry *e = &table[i];

			if (!e->id) {
				slot = e;
				break;
			}
			if (e->hash == h && e->len == len && e->nframes == nframes &&
			    !memcmp(arena + e->off, frames, len)) {
				id = e->id;
				goto out;
			}
		}
	}
	if (write_stack(self, next_id, frames, (size_t)fit, keep) < 0)
		goto out;
	id = next_id++;
	/* Remembered only once written: a failed write is tried again. */
	if (slot && used_slots < TABLE_MAX_USED && ARENA_BYTES - arena_used >= len) {
		memcpy(arena + arena_used, frames, len);
		*slot = (struct fw_entry){ h, arena_used, (uint32_t)len, nframes, id, 0 };
		arena_used += (len + 7) & ~(size_t)7;
		used_slots++;
	}
out:
	pthread_mutex_unlock(&fw_lock);
	return id;
}

MT_EXPORT int memtrace_fw_events(const struct mt_fw_input *ev, size_t n)
{
	struct mt_thread *self = mt_thread();
	int written = 0;

	/* The file is opened (process record first) from the caller's own
	   state, never from the pseudo-thread's, whose slab must hold events
	   only. */
	if (!self || !mt_writer_ready(self, mt_now()))
		return -1;
	if (!n)
		return 0;
	if (!ev)
		return -1;
	pthread_mutex_lock(&fw_lock);
	sync_epoch();
	for (size_t i = 0; i < n && written < INT32_MAX; i++) {
		const struct mt_fw_input *in = &ev[i];

		if (in->action == 0 || in->action > UINT8_MAX)
			continue;       /* not an action a record can carry */
		if (fw_thread.slab_pos && in->time_ns < fw_last)
			fw_thread.slab_pos = fw_thread.slab_end = NULL;
		fw_thread.tid = self->tid;      /* for a slab claimed now */
		int8_t dev = in->device >= INT8_MIN && in->device <= INT8_MAX ? (int8_t)in->device : -1;
		uint64_t x[2] = { in->stream, in->x };
		char *before = fw_thread.slab_pos;

		mt_write_event(&fw_thread, MT_CT_FW, (int)in->action, dev, 0, in->time_ns, in->addr,
			       in->size, in->stack_id, 0, x[0] || x[1] ? x : NULL);
		if (fw_thread.slab_pos == before)
			break;      /* nothing written: tracing stopped */
		fw_last = in->time_ns;
		written++;
	}
	pthread_mutex_unlock(&fw_lock);
	return written;
}

MT_EXPORT int memtrace_fw_info(const char *text, size_t len)
{
	struct mt_thread *self = mt_thread();
	uint64_t now = mt_now();
	uint32_t delta;

	if (!self || (!text && len) || !mt_writer_ready(self, now))
		return -1;
	if (len > MT_MAX_RECORD - sizeof(struct mt_fw_info))
		len = MT_MAX_RECORD - sizeof(struct mt_fw_info);
	size_t size = (sizeof(struct mt_fw_info) + len + 7) & ~(size_t)7;
	struct mt_fw_info *r = mt_writer_reserve(self, size, now, &delta);
	if (!r)
		return -1;
	memset((char *)r + size - 8, 0, 8);
	r->lh.size = (uint32_t)size;
	r->time_delta = delta;
	r->len = (uint32_t)len;
	memcpy(r + 1, text, len);
	mt_writer_commit(r, (struct mt_head){ MT_REC_FW_INFO, 0, 0, 0 });
	info_written = 1;
	return 0;
}

/*
 * memtrace's Python side writes a note as soon as it arms. A Python
 * process that recorded CUDA events without one, while the capture was
 * asked for, may have run with -I, -E or -S: then the interpreter ignored
 * PYTHONPATH or skipped site, and the bootstrap never ran. The flags are
 * the interpreter's own exported globals (deprecated from 3.12, still
 * there), read at exit; a process without them is not Python. Nothing is
 * written when no trace was opened.
 */
void mt_fw_python_check(void)
{
	static const char *const flag[] = { "Py_IsolatedFlag", "Py_IgnoreEnvironmentFlag",
					     "Py_NoSiteFlag" };
	static const char *const option[] = { "-I", "-E", "-S" };
	char text[200];

	if (!mt_config.torch || info_written || !mt_real_dlsym ||
	    atomic_load(&mt_writer_state) != W_OPEN)
		return;
	for (int i = 0; i < 3; i++) {
		const int *f = mt_real_dlsym(RTLD_DEFAULT, flag[i]);

		if (f && *f) {
			snprintf(text, sizeof(text), "framework=torch\ntorch=off\nreason=python %s: "
				 "PYTHONPATH or site ignored, so memtrace's bootstrap did not run\n",
				 option[i]);
			memtrace_fw_info(text, strlen(text));
			return;
		}
	}
}

/* The child of fork: the lock may have been held by a thread that is not
   here; the state is reset by sync_epoch() on the first call. */
void mt_fw_fork_child(void)
{
	pthread_mutex_init(&fw_lock, NULL);
}
