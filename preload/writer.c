/*
 * writer.c - the crash-safe trace file (format: include/memtrace/trace-format.h).
 *
 * How it works. The file is mapped MAP_SHARED in windows of
 * MT_WINDOW_SLABS slabs; a store into the mapping is in the page cache at
 * once, so it survives a SIGKILL of the process without a system call per
 * event. Each thread owns a slab (its struct mt_thread points into it) and
 * appends records there; a record's head is stored last (mt_writer_commit),
 * so a reader sees either a whole record or a zero head. Claiming a slab is
 * one atomic increment; only the first slab of a new window takes the lock,
 * to extend the file (posix_fallocate, so a full disk is an error here
 * rather than a SIGBUS later) and map the window.
 *
 * Failure never reaches the program: if the file cannot be created or
 * extended (ENOSPC, EACCES, RLIMIT_FSIZE, a descriptor the program closed
 * or replaced), tracing stops with one warning on stderr; what was written
 * stays readable.
 *
 * Format 2: events are compact records (byte granular, varints, deltas
 * from the slab's previous event: mt_write_event); classic records are
 * padded to 8 bytes first (mt_writer_reserve). A thread that ends gives
 * the unused tail of its slab back (a pthread key's destructor), and the
 * next thread that needs a slab takes the tail over with an MT_REC_OWNER
 * record instead of claiming a fresh 64 KiB: a program that makes
 * thousands of short threads writes a trace in proportion to its events.
 * A tail is only taken for records at or after the time its thread ended,
 * so each slab stays in time order across its owners.
 *
 * Young threads share slabs. A thread's first YOUNG_BYTES of compact
 * events and short records (mt_writer_put: memory samples), while it has
 * no slab of its own, go into one of YOUNG_SLABS "young" slabs,
 * under writer_lock: an owner record when the previous event there was
 * another thread's, then the event, both committed before the lock is
 * let go (so a SIGKILL tears at most the record in flight, as in a slab
 * of one's own). A record older than the young slab's last one, one
 * made by mt_writer_reserve (a new stack, say), a thread past YOUNG_BYTES or one that holds
 * the lock already (a signal handler) takes a slab of its own as above.
 * So 64 threads alive at once, each with an alloc and a free, share a
 * few slabs instead of claiming 64, and a long-lived thread pays the lock for
 * a handful of events. A full young slab's tail is left to tail takers.
 *
 * The file is created lazily by the first record, 0600, O_EXCL|O_NOFOLLOW,
 * under the name docs/environment.md gives. fork(): the child drops the
 * parent's mappings and descriptor and bumps the epoch, so every thread
 * state of the parent's file is stale; the child creates its own file on its
 * first record.
 *
 * A file cut under the mapping (log rotation's copytruncate, `: > trace.bin`,
 * `truncate -s`): the next store into a page past the new end raises SIGBUS.
 * sigbus.c's handler asks mt_writer_fault() whether the address is in one of
 * our windows; if so, every window is replaced by anonymous memory
 * (MAP_FIXED), so the store, and any record other threads are finishing,
 * completes harmlessly, and the trace is dead: no new record, no exit
 * record, no cut of the tail at the end (which would grow the file back).
 * What was written before the cut stays where the cutter left it; the file
 * is made to say what happened (cut_note): its header written back when it
 * lost it, else one slab with a note after what is left. Outside `memtrace
 * run` one warning on stderr; under it the launcher says it, once.
 *
 * The end: mt_writer_close() stops every thread from starting a record,
 * writes the exit record (the last one, so no other thread's record can
 * follow it in time), and cuts the unused tail of the file. It is reached
 * from the last exit handler and from _exit(), maybe inside a signal handler
 * that interrupted this very thread in the writer: so it gives up rather
 * than wait for the lock this thread holds, and puts the exit record in a
 * fresh slab when the thread's own slab has a record in flight. A vfork()
 * child shares the parent's memory and this file, but not its pid: it
 * writes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23      /* Linux 5.14 */
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "mt.h"

#define MT_WINDOW_SLABS 16
#define MT_WINDOW_BYTES ((uint64_t)MT_WINDOW_SLABS * MT_SLAB_SIZE)
#define MT_MAX_WINDOWS (1u << 18)    /* 4 TiB of trace at most */


static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int lock_owner;               /* tid holding writer_lock, 0 */
static int file_pid;                         /* the process the file is of */
_Atomic int mt_writer_state = W_CLOSED;
_Atomic uint32_t mt_writer_epoch_now = 1;
static int fd = -1;
static dev_t file_dev;
static ino_t file_ino;
static char path[sizeof mt_config.output + 64];
static _Atomic uint64_t next_slab;
static uint64_t mapped_windows;              /* under writer_lock */
static char *_Atomic windows[MT_MAX_WINDOWS];
static int warned;
static struct mt_file_header file_header;   /* as written at offset 0 */
static _Atomic int cut;                      /* the file was cut under us */

/* Slab tails of threads that ended, free to take over. Under writer_lock;
   ntails is read without it to skip the lock when there are none. */
#define MAX_TAILS 1024
#define MIN_TAIL 512                         /* smaller tails are dropped */
struct tail { char *pos, *end; uint64_t time; uint32_t epoch; };
static struct tail tails[MAX_TAILS];
static _Atomic int ntails;
static pthread_key_t gone_key;

/* The slabs young threads share (see above), under writer_lock; pos
   NULL: none yet, or it was of another epoch. young_at: the one that
   young_begin() chose, until young_end(). */
#define YOUNG_BYTES 256
#define YOUNG_SLABS 8
struct young {
	char *pos, *end;
	uint64_t time;                           /* of its last record */
	uint64_t base;                           /* its current run's time base */
	uint32_t epoch, tid;                     /* tid: of its current run */
	struct mt_compact_state c;               /* that run's compact state */
};
static struct young young_slabs[YOUNG_SLABS], *young_at;
static pthread_once_t gone_once = PTHREAD_ONCE_INIT;
static int gone_key_ok;

void mt_on_file_open(struct mt_thread *t);   /* recorder.c */
static int slab_settled(const struct mt_thread *t);

int mt_writer_active(void)
{
	int s = atomic_load_explicit(&mt_writer_state, memory_order_relaxed);
	return s == W_OPEN || s == W_CLOSED;
}

static void lock(void)
{
	pthread_mutex_lock(&writer_lock);
	atomic_store_explicit(&lock_owner, (int)syscall(SYS_gettid), memory_order_relaxed);
}

static void unlock(void)
{
	atomic_store_explicit(&lock_owner, 0, memory_order_relaxed);
	pthread_mutex_unlock(&writer_lock);
}

/* For the pytest plugin (python/memtrace_pytest.py), which reads the trace
   so far: the path of this process's trace file into buf (NUL-ended); its
   length, or -1 when this process has no file open (none yet, tracing
   stopped, or a buf too small). */
MT_EXPORT int memtrace_trace_path(char *buf, size_t len)
{
	int s = atomic_load(&mt_writer_state);
	size_t n = strlen(path);

	if (s != W_OPEN || !n || !buf || n >= len || file_pid != getpid())
		return -1;
	memcpy(buf, path, n + 1);
	return (int)n;
}

uint32_t mt_writer_epoch(void)
{
	return atomic_load_explicit(&mt_writer_epoch_now, memory_order_relaxed);
}

static void disable(const char *what, int err)
{
	atomic_store(&mt_writer_state, W_DISABLED);
	mt_warn_once(&warned, "cannot %s trace '%s': %s; tracing stopped, the program goes on",
		     what, path[0] ? path : mt_config.output, strerror(err));
}

/* STEM of the output: its path without a ".bin" suffix. */
static size_t output_stem(void)
{
	size_t n = strlen(mt_config.output);
	return n > 4 && strcmp(mt_config.output + n - 4, ".bin") == 0 ? n - 4 : n;
}

/* Create the file under the first free name; -1 with errno on failure. */
static int create_file(void)
{
	int pid = getpid(), stem = (int)output_stem();
	int is_root = !mt_config.root_pid || mt_config.root_pid == pid;

	for (int n = is_root ? -1 : 0; n < 1000; n++) {
		if (n < 0)
			snprintf(path, sizeof path, "%s", mt_config.output);
		else if (n == 0)
			snprintf(path, sizeof path, "%.*s.%d.bin", stem, mt_config.output, pid);
		else
			snprintf(path, sizeof path, "%.*s.%d.%d.bin", stem, mt_config.output, pid, n);
		int f = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f >= 0)
			return f;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* Our descriptor still names our file (the program may have closed it and
   opened something else under the same number); else reopen by path. */
static int file_ok(void)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino)
		return 1;
	int f = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (f < 0)
		return 0;
	if (fstat(f, &st) != 0 || st.st_dev != file_dev || st.st_ino != file_ino) {
		close(f);
		errno = ESTALE;
		return 0;
	}
	fd = f;     /* the old number belongs to the program now: leave it */
	return 1;
}

/* Extend the file and map window w. Under writer_lock. */
static int map_window(uint64_t w)
{
	uint64_t off = MT_SLAB_SIZE + w * MT_WINDOW_BYTES;
	struct rlimit rl;
	int err;

	if (w >= MT_MAX_WINDOWS) {
		disable("grow", EFBIG);
		return -1;
	}
	if (!file_ok()) {
		disable("write", errno ? errno : EBADF);
		return -1;
	}
	/* Past RLIMIT_FSIZE the kernel would send SIGXFSZ: stop before. */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    off + MT_WINDOW_BYTES > rl.rlim_cur) {
		disable("grow", EFBIG);
		return -1;
	}
	err = posix_fallocate(fd, (off_t)off, (off_t)MT_WINDOW_BYTES);
	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)(off + MT_WINDOW_BYTES)) ? errno : 0;
	if (err) {
		disable("grow", err);
		return -1;
	}
	void *p = mmap(NULL, MT_WINDOW_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED) {
		disable("map", errno);
		return -1;
	}
	/* One batched write fault for the whole window instead of one fault
	   per page on the event path, where threads would queue on the page
	   table lock. Older kernels refuse it: then pages fault in as used. */
	(void)madvise(p, MT_WINDOW_BYTES, MADV_POPULATE_WRITE);
	atomic_store_explicit(&windows[w], p, memory_order_release);
	__atomic_store_n(&mapped_windows, w + 1, __ATOMIC_RELEASE);
	mt_sigbus_recheck();
	return 0;
}

/* The header's start is the first record's time (taken before the file
   existed), with the wall clock moved back by the same amount. */
static int open_file(uint64_t first_time)
{
	struct mt_file_header h;
	struct timespec wall, mono;
	struct stat st;

	fd = create_file();
	if (fd < 0) {
		disable("create", errno);
		return -1;
	}
	if (fstat(fd, &st) == 0) {
		file_dev = st.st_dev;
		file_ino = st.st_ino;
	}
	memset(&h, 0, sizeof h);
	memcpy(h.magic, MT_MAGIC, 8);
	h.version = MT_FORMAT_VERSION;
	h.version_minor = MT_FORMAT_MINOR;
	h.header_size = MT_SLAB_SIZE;
	h.slab_size = MT_SLAB_SIZE;
	file_pid = getpid();
	h.pid = (uint32_t)file_pid;
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t mono_now = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	h.start_mono_ns = first_time < mono_now ? first_time : mono_now;
	h.start_wall_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec - (mono_now - h.start_mono_ns);
	h.run_id = mt_config.run_id;
	if (pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
		disable("write", errno ? errno : EIO);
		return -1;
	}
	file_header = h;
	mt_sigbus_install();
	atomic_store(&next_slab, 0);
	mapped_windows = 0;
	return map_window(0);
}

/* The address of slab k of the current window layout. */
static char *slab_at(char *window, uint64_t k)
{
	return window + (k % MT_WINDOW_SLABS) * MT_SLAB_SIZE;
}

/* Writes the header of the slab at s for tid, from time on; its first
   record's address. */
static char *start_slab(char *s, uint32_t tid, uint64_t time)
{
	struct mt_slab_header *h = (struct mt_slab_header *)s;

	h->tid = tid;
	h->time_base = time;
	__atomic_store_n(&h->magic, MT_SLAB_MAGIC, __ATOMIC_RELEASE);
	return (char *)(h + 1);
}

/* Make the slab at s t's slab, starting at time. */
static void own_slab(struct mt_thread *t, char *s, uint64_t time)
{
	t->slab_pos = start_slab(s, t->tid, time);
	t->slab_end = s + MT_SLAB_SIZE;
	t->time_base = time;
	mt_compact_reset(&t->c, time);
}

/* Pads a slab with 0x80 bytes from *pos up to the next 8-byte offset
   (slabs are page aligned, so the address says it). */
static void align8(char **pos)
{
	while ((uintptr_t)*pos & 7)
		*(*pos)++ = (char)MT_COMPACT;
}

/* Writes an owner record at *pos (aligned first): from time on, the rest
   of the slab is tid's. */
static void put_owner(char **pos, uint32_t tid, uint64_t time)
{
	struct mt_owner *o;

	align8(pos);
	o = (struct mt_owner *)*pos;
	o->tid = tid;
	o->time_base = time;
	*pos += sizeof *o;
	mt_writer_commit(o, (struct mt_head){ MT_REC_OWNER, sizeof *o / 8, 0, 0 });
}

/* [pos, end) of a slab nobody writes into any more, from time on, for a
   later thread to take. Under writer_lock. */
static void give_tail(char *pos, char *end, uint64_t time, uint32_t epoch)
{
	int n = atomic_load(&ntails);

	if (end - pos < MIN_TAIL || n >= MAX_TAILS)
		return;
	tails[n] = (struct tail){ pos, end, time, epoch };
	atomic_fetch_add(&ntails, 1);
}

/* A tail with room for need bytes after an owner record, for records at
   time or later, out of the list into *x; 0, or -1 when there is none.
   Under writer_lock. */
static int pop_tail(struct tail *x, uint64_t time, size_t need, uint32_t e)
{
	int i;

	for (i = atomic_load(&ntails) - 1; i >= 0; i--)
		if (tails[i].epoch == e && tails[i].time <= time &&
		    (size_t)(tails[i].end - tails[i].pos) >= need + 8 + sizeof(struct mt_owner))
			break;
	if (i < 0)
		return -1;
	*x = tails[i];
	tails[i] = tails[atomic_load(&ntails) - 1];
	atomic_fetch_sub(&ntails, 1);
	return 0;
}

/* Takes over the tail of an ended thread's slab, for records at time or
   later; 0 on success. */
static int take_tail(struct mt_thread *t, uint64_t time, size_t need)
{
	uint32_t e = atomic_load_explicit(&mt_writer_epoch_now, memory_order_relaxed);
	struct tail x;
	int i;

	if (t->own_slabs || !atomic_load_explicit(&ntails, memory_order_relaxed) ||
	    atomic_load_explicit(&lock_owner, memory_order_relaxed) == (int)t->tid)
		return -1;
	lock();
	i = pop_tail(&x, time, need, e);
	unlock();
	if (i < 0)
		return -1;
	t->slab_pos = x.pos;
	t->slab_end = x.end;
	put_owner(&t->slab_pos, t->tid, time);
	t->time_base = time;
	mt_compact_reset(&t->c, time);
	return 0;
}

/* A fresh slab, claimed, its window mapped (locked: the caller holds
   writer_lock); NULL when the trace stopped or cannot grow. */
static char *claim_slab(int locked)
{
	uint64_t k = atomic_fetch_add(&next_slab, 1), w = k / MT_WINDOW_SLABS;
	char *base;

	/* Checked after the claim: see mt_writer_close. */
	if (atomic_load(&mt_writer_state) != W_OPEN)
		return NULL;
	base = atomic_load_explicit(&windows[w], memory_order_acquire);
	if (!base) {
		/* A signal handler in a thread that holds the lock: the
		   record is dropped rather than the thread deadlocked. */
		if (!locked && atomic_load_explicit(&lock_owner, memory_order_relaxed) == (int)syscall(SYS_gettid))
			return NULL;
		if (!locked)
			lock();
		while (atomic_load(&mt_writer_state) == W_OPEN && mapped_windows <= w)
			map_window(mapped_windows);
		if (!locked)
			unlock();
		base = atomic_load_explicit(&windows[w], memory_order_acquire);
		if (!base)
			return NULL;
	}
	return slab_at(base, k);
}

/* Give t a slab (a tail of one, or a fresh one) starting at time with
   room for need bytes; 0 on success. */
static int new_slab(struct mt_thread *t, uint64_t time, size_t need)
{
	char *s;

	if (take_tail(t, time, need) == 0)
		return 0;
	if (!(s = claim_slab(0)))
		return -1;
	own_slab(t, s, time);
	return 0;
}

int mt_writer_ready_slow(struct mt_thread *t, uint64_t time)
{
	uint32_t e = atomic_load_explicit(&mt_writer_epoch_now, memory_order_relaxed);

	if (t->epoch != e) {
		t->epoch = e;
		t->tid = (uint32_t)syscall(SYS_gettid);
		t->slab_pos = t->slab_end = NULL;
	}
	int s = atomic_load_explicit(&mt_writer_state, memory_order_relaxed);
	if (s == W_OPEN)
		return 1;
	if (s == W_DISABLED)
		return 0;   /* for good: no lock per event */
	int opened = 0;
	lock();
	if (atomic_load(&mt_writer_state) == W_CLOSED && open_file(time) == 0) {
		/* Slab 0 is the opener's: the process record comes first. */
		own_slab(t, slab_at(atomic_load(&windows[0]), atomic_fetch_add(&next_slab, 1)), time);
		atomic_store(&mt_writer_state, W_OPEN);
		opened = 1;
	}
	unlock();
	if (opened)
		mt_on_file_open(t);
	return atomic_load(&mt_writer_state) == W_OPEN;
}

void *mt_writer_reserve(struct mt_thread *t, size_t size, uint64_t time, uint32_t *delta)
{
	if (MT_UNLIKELY(!mt_writer_ready(t, time)))
		return NULL;
	/* Room for the padding, the record and a possible time base record. */
	if (MT_UNLIKELY(!t->slab_pos || (size_t)(t->slab_end - t->slab_pos) <
			(size_t)(-(uintptr_t)t->slab_pos & 7) + size + sizeof(struct mt_timebase))) {
		if (new_slab(t, time, size + sizeof(struct mt_timebase)) != 0)
			return NULL;
	}
	align8(&t->slab_pos);
	if (MT_UNLIKELY(time < t->time_base || time - t->time_base > UINT32_MAX)) {
		struct mt_timebase *tb = (struct mt_timebase *)t->slab_pos;
		tb->pad = 0;
		tb->time_base = time;
		t->slab_pos += sizeof *tb;
		t->time_base = time;
		mt_writer_commit(tb, (struct mt_head){ MT_REC_TIMEBASE, sizeof *tb / 8, 0, 0 });
	}
	*delta = (uint32_t)(time - t->time_base);
	void *r = t->slab_pos;
	t->slab_pos += size;
	return r;
}

/* A thread ends: the unused tail of its slab goes to the next taker. */
static void thread_gone(void *p)
{
	struct mt_thread *t = p;
	uint64_t now = mt_now();

	t->keyed = 0;
	if (!t->slab_pos || t->epoch != mt_writer_epoch() ||
	    atomic_load(&mt_writer_state) != W_OPEN || getpid() != file_pid)
		goto out;
	if ((size_t)(t->slab_end - t->slab_pos) >= MIN_TAIL && slab_settled(t) &&
	    atomic_load_explicit(&lock_owner, memory_order_relaxed) != (int)t->tid) {
		lock();
		give_tail(t->slab_pos, t->slab_end, now, t->epoch);
		unlock();
	}
out:
	t->slab_pos = t->slab_end = NULL;
}

static void gone_key_create(void)
{
	gone_key_ok = pthread_key_create(&gone_key, thread_gone) == 0;
}

/* t is the calling thread's own state: give its slab back when it ends. */
static void keep_track(struct mt_thread *t)
{
	pthread_once(&gone_once, gone_key_create);
	if (gone_key_ok && pthread_setspecific(gone_key, t) == 0)
		t->keyed = 1;
}

static unsigned char *put_u(unsigned char *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*q++ = (unsigned char)v;
	return q;
}

/* zigzag(a - b): small differences either way give small numbers. */
static unsigned char *put_zz(unsigned char *q, uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(a - b);

	return put_u(q, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
}

/* The event as a compact record at r, counted from c (updated); committed.
   Where it ends. Inlined: it is the event path. */
static inline __attribute__((always_inline)) char *
encode_event(struct mt_compact_state *c, unsigned char *r, int cls, int kind, int device, int api, uint64_t time,
	     uint64_t addr, uint64_t bytes, uint32_t stack, int result, const uint64_t *x)
{
	uint32_t kda = (uint8_t)kind | (uint32_t)(uint8_t)device << 8 | (uint32_t)(uint16_t)api << 16;
	unsigned tag = (unsigned)cls;
	unsigned char *q;

	q = put_zz(r + 2, time, c->time);
	q = put_zz(q, addr, c->addr);
	c->time = time;
	c->addr = addr;
	if (kda == c->kda[cls]) {
		tag |= MT_CT_SAME_KDA;
	} else {
		*q++ = (uint8_t)kind;
		*q++ = (uint8_t)device;
		q = put_u(q, (uint16_t)api);
		c->kda[cls] = kda;
	}
	if (bytes)
		q = put_u(q, bytes);
	else
		tag |= MT_CT_BYTES0;
	if (stack == c->stack[cls]) {
		tag |= MT_CT_SAME_STACK;
	} else {
		q = put_u(q, stack);
		c->stack[cls] = stack;
	}
	if ((uint16_t)result) {
		tag |= MT_CT_RESULT;
		q = put_u(q, (uint16_t)result);
	}
	if (x) {
		tag |= MT_CT_EX;
		if (x[0] == c->x1 && x[1] == c->x2) {
			tag |= MT_CT_SAME_X;
		} else {
			q = put_u(q, x[0]);
			q = put_u(q, x[1]);
			c->x1 = x[0];
			c->x2 = x[1];
		}
	}
	r[1] = (unsigned char)tag;
	__atomic_store_n(r, (unsigned char)(MT_COMPACT | (unsigned)(q - r - 1)), __ATOMIC_RELEASE);
	return (char *)q;
}

/* The young slab for size bytes of t's at time: of those whose last record
   is not later (the slab stays in time order) and with room, the one whose
   last record is the latest, so older slabs stay open for records that
   come late (a free's time is taken before the call); else one to start
   afresh (one not started, or full); NULL when every one holds a later
   record. Under writer_lock. */
static struct young *young_pick(uint64_t time, size_t size, uint32_t e)
{
	struct young *fit = NULL, *fresh = NULL;

	for (int i = 0; i < YOUNG_SLABS; i++) {
		struct young *y = &young_slabs[i];

		if (!y->pos || y->epoch != e) {
			y->pos = NULL;
			fresh = fresh ? fresh : y;
		} else if (time >= y->time) {
			if ((size_t)(y->end - y->pos) < 8 + sizeof(struct mt_owner) + size)
				fresh = fresh ? fresh : y;
			else if (!fit || y->time > fit->time)
				fit = y;
		}
	}
	return fit ? fit : fresh;
}

/* Room for size bytes of t's at time in a young slab (see the header):
   their place, in a run of t's (after an owner record where the slab's
   last run was another thread's, or t's own too long ago for a time
   delta), with writer_lock held until young_end(); NULL when t is to write
   into a slab of its own. */
static char *young_begin(struct mt_thread *t, uint64_t time, size_t size)
{
	uint32_t e = atomic_load_explicit(&mt_writer_epoch_now, memory_order_relaxed);
	struct young *y;

	if (t->own_slabs || t->young >= YOUNG_BYTES ||
	    atomic_load_explicit(&lock_owner, memory_order_relaxed) == (int)t->tid)
		return NULL;
	lock();
	/* Closed meanwhile: nothing after the exit record. */
	if (atomic_load(&mt_writer_state) != W_OPEN || !(y = young_pick(time, size, e))) {
		unlock();
		return NULL;
	}
	if (!y->pos || (size_t)(y->end - y->pos) < 8 + sizeof(struct mt_owner) + size) {
		/* A new young slab: an ended thread's tail, or a fresh one. */
		struct tail x;
		char *s;

		if (y->pos)
			give_tail(y->pos, y->end, y->time, e);
		y->pos = NULL;
		if (pop_tail(&x, time, size, e) == 0) {
			y->pos = x.pos;
			y->end = x.end;
			put_owner(&y->pos, t->tid, time);
		} else if ((s = claim_slab(1))) {
			y->pos = start_slab(s, t->tid, time);
			y->end = s + MT_SLAB_SIZE;
		} else {
			unlock();
			return NULL;
		}
		y->epoch = e;
	} else if (y->tid != t->tid || time - y->base > UINT32_MAX) {
		put_owner(&y->pos, t->tid, time);
	} else {
		young_at = y;
		return y->pos;
	}
	y->tid = t->tid;
	y->base = time;
	mt_compact_reset(&y->c, time);
	young_at = y;
	return y->pos;
}

/* t's records in the young slab young_begin() chose end at q, the last at
   time. */
static void young_end(struct mt_thread *t, char *q, uint64_t time)
{
	struct young *y = young_at;

	t->young = (uint16_t)(t->young + (q - y->pos));
	y->pos = q;
	y->time = time;
	unlock();
}

int mt_writer_put(struct mt_thread *t, void *rec, size_t size, uint64_t time)
{
	struct mt_head h;
	uint32_t delta;
	char *p;

	memcpy(&h, rec, sizeof h);
	if (MT_UNLIKELY(!mt_writer_ready(t, time)))
		return -1;
	if (!t->slab_pos && (p = young_begin(t, time, size + 8))) {
		align8(&p);
		delta = (uint32_t)(time - young_at->base);
		memcpy(p + 8, (char *)rec + 8, size - 8);
		memcpy(p + 4, &delta, 4);
		mt_writer_commit(p, h);
		young_end(t, p + size, time);
		return 0;
	}
	if (!(p = mt_writer_reserve(t, size, time, &delta)))
		return -1;
	memcpy(p + 8, (char *)rec + 8, size - 8);
	memcpy(p + 4, &delta, 4);
	mt_writer_commit(p, h);
	return 0;
}

void mt_write_event(struct mt_thread *t, int cls, int kind, int device, int api, uint64_t time,
		    uint64_t addr, uint64_t bytes, uint32_t stack, int result, const uint64_t *x)
{
	if (MT_UNLIKELY(!mt_writer_ready(t, time)))
		return;
	if (MT_UNLIKELY(!t->keyed) && cls != MT_CT_FW)
		keep_track(t);
	if (MT_UNLIKELY(!t->slab_pos || t->slab_end - t->slab_pos < MT_COMPACT_MAX)) {
		char *r;

		if (!t->slab_pos && (r = young_begin(t, time, MT_COMPACT_MAX))) {
			young_end(t, encode_event(&young_at->c, (unsigned char *)r, cls, kind, device, api, time,
						  addr, bytes, stack, result, x), time);
			return;
		}
		if (new_slab(t, time, MT_COMPACT_MAX) != 0)
			return;
	}
	t->slab_pos = encode_event(&t->c, (unsigned char *)t->slab_pos, cls, kind, device, api, time, addr,
				   bytes, stack, result, x);
}

/* The child of fork: none of the parent's file is ours. */
void mt_writer_fork_child(void)
{
	pthread_mutex_init(&writer_lock, NULL);
	atomic_store(&lock_owner, 0);
	for (uint64_t w = 0; w < mapped_windows; w++) {
		char *p = atomic_load(&windows[w]);
		if (p)
			munmap(p, MT_WINDOW_BYTES);
		atomic_store(&windows[w], NULL);
	}
	mapped_windows = 0;
	atomic_store(&cut, 0);
	if (fd >= 0)
		close(fd);
	fd = -1;
	path[0] = 0;
	atomic_store(&next_slab, 0);
	atomic_store(&ntails, 0);
	atomic_fetch_add(&mt_writer_epoch_now, 1);
	if (atomic_load(&mt_writer_state) != W_DISABLED)
		atomic_store(&mt_writer_state, W_CLOSED);
}

void mt_writer_atfork_prepare(void) { lock(); }
void mt_writer_atfork_parent(void) { unlock(); }

/*
 * The records of t's slab up to its write position are all published: no
 * zero head before it. One is not when a signal handler that ends the
 * process interrupted t between reserving a record and committing it; a
 * record written after that one would be lost behind its zero head.
 */
static int slab_settled(const struct mt_thread *t)
{
	const char *p = t->slab_end - MT_SLAB_SIZE + sizeof(struct mt_slab_header);

	if (t->slab_pos < p || t->slab_pos > t->slab_end)
		return 0;   /* interrupted while moving to a new slab */
	while (p < t->slab_pos) {
		const struct mt_head *h = (const struct mt_head *)p;
		uint32_t size;

		if (h->type & MT_COMPACT) {
			p += 1 + (h->type & 0x7f);
			continue;
		}
		if (h->type == 0 || ((uintptr_t)p & 7))
			return 0;
		size = h->size8 ? h->size8 * 8u : ((const struct mt_long_head *)p)->size;
		if (size == 0 || size > (uint64_t)(t->slab_pos - p))
			return 0;
		p += size;
	}
	return p == t->slab_pos;
}

/* --- a file cut under the mapping ------------------------------------------ */

/* What the note of a cut trace says; the launcher (cmd-run.c) looks for it. */
#define CUT_NOTE "trace cut by another process while it was written (log rotation with " \
	"copytruncate, or ': >'?): the records after the cut are lost and tracing stopped; " \
	"the program went on"

static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = 0;
	return at;
}

/*
 * The file says it was cut: its header written back when the cut took it
 * (a header alone: the reader says the trace holds no records, and `check`
 * fails on it), else a slab with a note after what the cut left. Then one
 * warning, unless `memtrace run` is there to say it. System calls only: it
 * runs in the SIGBUS handler.
 */
static void cut_note(void)
{
	static union { struct mt_slab_header s; char b[sizeof(struct mt_slab_header) +
							   sizeof(struct mt_note) + 256]; } slab;
	struct stat st;
	static char msg[sizeof path + 160];
	size_t n;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino) {
		if ((uint64_t)st.st_size < sizeof file_header) {
			(void)!pwrite(fd, &file_header, sizeof file_header, 0);
		} else {
			uint64_t k = ((uint64_t)st.st_size - MT_SLAB_SIZE + MT_SLAB_SIZE - 1) / MT_SLAB_SIZE;
			uint64_t off = (uint64_t)st.st_size <= MT_SLAB_SIZE ? MT_SLAB_SIZE :
				       MT_SLAB_SIZE + k * MT_SLAB_SIZE;
			struct mt_note *note = (struct mt_note *)(&slab.s + 1);
			size_t len = sizeof CUT_NOTE - 1, size = (sizeof *note + len + 7) & ~(size_t)7;

			slab.s.magic = MT_SLAB_MAGIC;
			slab.s.tid = (uint32_t)syscall(SYS_gettid);
			slab.s.time_base = mt_now();
			note->lh.h = (struct mt_head){ MT_REC_NOTE, 0, 0, 0 };
			note->lh.size = (uint32_t)size;
			note->time_delta = 0;
			note->len = (uint32_t)len;
			memcpy(note + 1, CUT_NOTE, len);
			/* the rest of the slab zero, the file a whole number of slabs */
			if (ftruncate(fd, (off_t)(off + MT_SLAB_SIZE)) == 0)
				(void)!pwrite(fd, slab.b, sizeof slab.s + size, (off_t)off);
		}
	}
	if (mt_config.root_pid)
		return;     /* memtrace run says it */
	n = put_str(msg, 0, sizeof msg, "memtrace: warning: trace '");
	n = put_str(msg, n, sizeof msg, path);
	n = put_str(msg, n, sizeof msg, "' was cut by another process while it was written "
		    "(log rotation?); tracing stopped, the program goes on\n");
	(void)!write(2, msg, n);
}

/*
 * From the SIGBUS handler (sigbus.c): 1 when addr is in one of the trace's
 * windows, which are then all anonymous memory, the trace dead and noted;
 * 0 when the fault is not ours.
 */
int mt_writer_fault(const void *addr)
{
	uint64_t n = __atomic_load_n(&mapped_windows, __ATOMIC_ACQUIRE), w;
	uintptr_t a = (uintptr_t)addr;

	for (w = 0; w < n; w++) {
		uintptr_t p = (uintptr_t)atomic_load_explicit(&windows[w], memory_order_acquire);
		if (p && a >= p && a - p < MT_WINDOW_BYTES)
			break;
	}
	if (w == n)
		return 0;
	atomic_store(&mt_writer_state, W_DISABLED);
	for (w = 0; w < n; w++) {
		char *p = atomic_load_explicit(&windows[w], memory_order_acquire);
		if (p)
			(void)syscall(SYS_mmap, p, MT_WINDOW_BYTES, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	}
	if (!atomic_exchange(&cut, 1))
		cut_note();
	return 1;
}

/* The exit record, in t's slab or a fresh one. Under writer_lock, with the
   state W_CLOSING: no other thread starts a record now. */
static void write_exit(struct mt_thread *t, int how, int status)
{
	uint32_t e = atomic_load(&mt_writer_epoch_now);
	uint64_t now = mt_now();
	struct mt_exit *x;

	if (t->epoch != e) {
		t->epoch = e;
		t->tid = (uint32_t)syscall(SYS_gettid);
		t->slab_pos = t->slab_end = NULL;
	}
	if (!t->slab_pos || !slab_settled(t) || (size_t)(t->slab_end - t->slab_pos) < sizeof *x + 8 ||
	    now < t->time_base || now - t->time_base > UINT32_MAX) {
		uint64_t k = atomic_fetch_add(&next_slab, 1), w = k / MT_WINDOW_SLABS;

		while (mapped_windows <= w)
			if (map_window(mapped_windows) < 0)
				return;
		own_slab(t, slab_at(atomic_load(&windows[w]), k), now);
	}
	align8(&t->slab_pos);
	x = (struct mt_exit *)t->slab_pos;
	x->time_delta = (uint32_t)(now - t->time_base);
	x->status = status;
	x->pad = 0;
	t->slab_pos += sizeof *x;
	mt_writer_commit(x, (struct mt_head){ MT_REC_EXIT, sizeof *x / 8, (uint8_t)how, 0 });
}

/*
 * The end of the process: no new records from now on, the exit record
 * (how > 0: enum mt_exit_how) last, then the file cut after the last
 * claimed slab. A thread that claims a slab after the state changed sees
 * W_CLOSING right after its claim and writes nothing, so every claimed slab
 * below the count read here stays inside the file. Mappings stay: a thread
 * may still be finishing a record it began before.
 */
void mt_writer_close(struct mt_thread *t, int how, int status)
{
	int expected = W_OPEN;

	if (atomic_load(&mt_writer_state) != W_OPEN || getpid() != file_pid)
		return;     /* no file, already closed, or a vfork child */
	if (atomic_load_explicit(&lock_owner, memory_order_relaxed) == (int)syscall(SYS_gettid))
		return;     /* a signal handler interrupted this thread in the writer */
	lock();
	if (atomic_compare_exchange_strong(&mt_writer_state, &expected, W_CLOSING)) {
		if (how > 0)
			write_exit(t, how, status);
		uint64_t used = atomic_load(&next_slab);
		struct stat st;

		/* cut since the last record (no store faulted): say so, and
		   do not grow it back */
		if (!atomic_load(&cut) && file_ok() && fstat(fd, &st) == 0 &&
		    (uint64_t)st.st_size < MT_SLAB_SIZE + used * MT_SLAB_SIZE &&
		    !atomic_exchange(&cut, 1))
			cut_note();
		if (!atomic_load(&cut) && file_ok())
			(void)!ftruncate(fd, (off_t)(MT_SLAB_SIZE + used * MT_SLAB_SIZE));
	}
	unlock();
}
