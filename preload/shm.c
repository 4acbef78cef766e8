/*
 * shm.c - POSIX shared memory: shm_open, ftruncate / fallocate of its
 * descriptors, mmap of them, munmap of those mappings, shm_unlink and
 * close, recorded as MT_REC_SHM records. PyTorch's DataLoader and
 * torch.multiprocessing keep tensors in /dev/shm segments made this way;
 * a worker killed before it unlinks leaves them behind, and a container's
 * 64 MB /dev/shm fills.
 *
 * Cost. close, mmap, munmap and ftruncate are hot libc functions of every
 * traced process, and most of their calls have nothing to do with shared
 * memory. The common path is one load of a global count (no descriptor
 * tracked: forward) and one bit of a per-descriptor bitmap; only a
 * descriptor that shm_open returned, and a mapping of one, go further.
 *
 * The real functions are looked up with dlsym(RTLD_NEXT) in this file's
 * constructor. Until then (other libraries' constructors, malloc inside
 * dlsym itself) the wrappers make the system call directly, so nothing
 * recurses. libmemtrace's own calls (the writer maps, grows and closes the
 * trace file; stacks.c maps its table) bind to these wrappers too and pass
 * through: their descriptors are never tracked.
 *
 * Tracking. shm_open's descriptor gets its bit, and a slot holding the
 * segment name and the file's device and inode; every record about the
 * descriptor carries the name, so a record is understood without the open
 * that made it (a forked worker closing an inherited descriptor). Before a
 * tracked descriptor's operation is recorded, fstat checks that the number
 * still names the same file: a descriptor closed behind our back (the
 * close_range system call, dup2 onto it) is forgotten, not misreported.
 * Descriptors from MT_SHM_MAX_FD up are not tracked. Mappings of tracked
 * descriptors go into a small table so that munmap can name them; only an
 * munmap of a mapping's exact start address is seen (a partial unmap, or
 * MAP_FIXED over one, is not).
 *
 * What is not seen: segments made by open("/dev/shm/...") directly, and
 * descriptors received from another process (SCM_RIGHTS). glibc's shm_open
 * opens the file internally, not through open(), and so do CPython's
 * _posixshmem (multiprocessing.shared_memory) and PyTorch, which call
 * shm_open: wrapping open/openat would put a path comparison on every open
 * of the program for no segment those make.
 *
 * fork: the bitmap, the slots and the mapping table are inherited with the
 * descriptors and mappings they describe, so a worker's operations on its
 * parent's segments are recorded under its own pid. exec: glibc's shm_open
 * always sets O_CLOEXEC, so no tracked descriptor survives into a new image.
 *
 * Times follow recorder.c's hook ordering: open and mmap take the time
 * after the call, close, unlink and munmap before it, so in time order a
 * name or number is released before it can be seen reused.
 *
 * Records are written only when the process is traced (mt_thread()), never
 * under this file's lock. A tracked descriptor closed from a signal handler
 * that interrupted the same thread's record would tear that record; shared
 * memory is not closed from signal handlers in practice.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mt.h"

#define MT_SHM_MAX_FD (1 << 20)         /* descriptors tracked: 0 .. this-1 */
#define CHUNK_FDS 1024                  /* slots mapped together */
#define MAX_NAME 255                    /* NAME_MAX: longer names are cut */
#define MAP_SLOTS 4096                  /* tracked mappings at most */

/* What is known about a tracked descriptor or mapping. */
struct shm_slot {
	uint64_t dev, ino;                  /* descriptors: the file */
	uint64_t addr, len;                 /* mappings: 0 addr is a free slot */
	uint16_t name_len;
	char name[MAX_NAME + 1];
};

static _Atomic uint32_t n_tracked;      /* descriptors with their bit set */
static _Atomic uint64_t fd_bits[MT_SHM_MAX_FD / 64];
static struct shm_slot *_Atomic fd_chunks[MT_SHM_MAX_FD / CHUNK_FDS];

static _Atomic uint32_t n_maps;         /* live entries of maps[] */
static struct shm_slot *maps;           /* MAP_SLOTS, open addressing */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int maps_full_warned;

static int (*real_shm_open)(const char *, int, mode_t);
static int (*real_shm_unlink)(const char *);
static int (*real_close)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_fallocate64)(int, int, off64_t, off64_t);
static int (*real_posix_fallocate)(int, off_t, off_t);
static int (*real_posix_fallocate64)(int, off64_t, off64_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_munmap)(void *, size_t);

/* --- the real functions, or the system call before they are known -------- */

static int call_close(int fd)
{
	return MT_LIKELY(real_close) ? real_close(fd) : (int)syscall(SYS_close, fd);
}

static void *call_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (MT_LIKELY(real_mmap))
		return real_mmap(addr, len, prot, flags, fd, off);
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int call_munmap(void *addr, size_t len)
{
	return MT_LIKELY(real_munmap) ? real_munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

static int call_ftruncate(int fd, off_t len)
{
	return MT_LIKELY(real_ftruncate) ? real_ftruncate(fd, len) : (int)syscall(SYS_ftruncate, fd, len);
}

static int call_fallocate(int fd, int mode, off_t off, off_t len)
{
	if (MT_LIKELY(real_fallocate))
		return real_fallocate(fd, mode, off, len);
	return (int)syscall(SYS_fallocate, fd, mode, off, len);
}

/* posix_fallocate returns the error instead of setting errno. */
static int call_posix_fallocate(int fd, off_t off, off_t len)
{
	if (MT_LIKELY(real_posix_fallocate))
		return real_posix_fallocate(fd, off, len);
	return syscall(SYS_fallocate, fd, 0, off, len) == 0 ? 0 : errno;
}

/* "/dev/shm/NAME" as glibc builds it; -1 with errno bad_name (what glibc
   reports for such a name: EINVAL from shm_open, ENOENT from shm_unlink)
   or ENAMETOOLONG. */
static int shm_path(const char *name, char path[sizeof "/dev/shm/" + MAX_NAME], int bad_name)
{
	size_t n;

	while (*name == '/')
		name++;
	n = strlen(name);
	if (n == 0 || n > MAX_NAME || strchr(name, '/')) {
		errno = n > MAX_NAME ? ENAMETOOLONG : bad_name;
		return -1;
	}
	memcpy(path, "/dev/shm/", 9);
	memcpy(path + 9, name, n + 1);
	return 0;
}

/* What glibc's shm_open does, for a call before the constructor. */
static int raw_shm_open(const char *name, int oflag, mode_t mode)
{
	char path[sizeof "/dev/shm/" + MAX_NAME];

	if (shm_path(name, path, EINVAL) != 0)
		return -1;
	return (int)syscall(SYS_openat, AT_FDCWD, path, oflag | O_NOFOLLOW | O_CLOEXEC, mode);
}

static int raw_shm_unlink(const char *name)
{
	char path[sizeof "/dev/shm/" + MAX_NAME];

	if (shm_path(name, path, ENOENT) != 0)
		return -1;
	return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

static void atfork_prepare(void) { pthread_mutex_lock(&maps_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&maps_lock); }
static void atfork_child(void) { pthread_mutex_init(&maps_lock, NULL); }

#define RESOLVE(name) (real_##name = (__typeof__(real_##name))mt_real_dlsym(RTLD_NEXT, #name))

__attribute__((constructor)) static void shm_init(void)
{
	mt_real_init();
	if (!mt_real_dlsym)
		return;
	RESOLVE(shm_open);
	RESOLVE(shm_unlink);
	RESOLVE(ftruncate);
	RESOLVE(ftruncate64);
	RESOLVE(fallocate);
	RESOLVE(fallocate64);
	RESOLVE(posix_fallocate);
	RESOLVE(posix_fallocate64);
	RESOLVE(mmap64);
	RESOLVE(munmap);
	/* close and mmap last: malloc inside dlsym may still need them raw */
	RESOLVE(mmap);
	RESOLVE(close);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* --- tracked descriptors ----------------------------------------------------- */

static inline int is_tracked(int fd)
{
	if (MT_LIKELY(!atomic_load_explicit(&n_tracked, memory_order_relaxed)))
		return 0;
	return (unsigned)fd < MT_SHM_MAX_FD &&
	       (atomic_load_explicit(&fd_bits[fd >> 6], memory_order_acquire) >> (fd & 63)) & 1;
}

/* The slot of a descriptor; its chunk is mapped on first use (NULL: no memory). */
static struct shm_slot *fd_slot(int fd, int create)
{
	struct shm_slot *c = atomic_load_explicit(&fd_chunks[fd / CHUNK_FDS], memory_order_acquire);

	if (!c && create) {
		void *p = call_mmap(NULL, CHUNK_FDS * sizeof *c, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct shm_slot *expected = NULL;

		if (p == MAP_FAILED)
			return NULL;
		if (atomic_compare_exchange_strong(&fd_chunks[fd / CHUNK_FDS], &expected, p)) {
			c = p;
		} else {
			call_munmap(p, CHUNK_FDS * sizeof *c);
			c = expected;
		}
	}
	return c ? &c[fd % CHUNK_FDS] : NULL;
}

static void track(int fd, const char *name, size_t name_len)
{
	struct shm_slot *s;
	struct stat st;

	if ((unsigned)fd >= MT_SHM_MAX_FD || fstat(fd, &st) != 0 || !(s = fd_slot(fd, 1)))
		return;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->name_len = (uint16_t)name_len;
	memcpy(s->name, name, name_len);
	uint64_t bit = 1ull << (fd & 63);
	if (!(atomic_fetch_or_explicit(&fd_bits[fd >> 6], bit, memory_order_release) & bit))
		atomic_fetch_add(&n_tracked, 1);
}

static void untrack(int fd)
{
	uint64_t bit = 1ull << (fd & 63);
	if (atomic_fetch_and_explicit(&fd_bits[fd >> 6], ~bit, memory_order_relaxed) & bit)
		atomic_fetch_sub(&n_tracked, 1);
}

/*
 * The slot of a tracked descriptor that still names the file shm_open
 * returned, copied into *out; 0. A number reused behind our back: forgotten,
 * -1.
 */
static int still_tracked(int fd, struct shm_slot *out)
{
	struct shm_slot *s = fd_slot(fd, 0);
	struct stat st;

	if (s && fstat(fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino) {
		out->name_len = s->name_len;
		memcpy(out->name, s->name, s->name_len);
		return 0;
	}
	untrack(fd);
	return -1;
}

/* --- tracked mappings -------------------------------------------------------- */

static uint32_t map_hash(uint64_t addr)
{
	return (uint32_t)((addr >> 12) * 0x9e3779b97f4a7c15u >> 40) & (MAP_SLOTS - 1);
}

/* Remember a mapping of a tracked descriptor. */
static void map_add(uint64_t addr, uint64_t len, const struct shm_slot *from)
{
	pthread_mutex_lock(&maps_lock);
	if (!maps) {
		void *p = call_mmap(NULL, MAP_SLOTS * sizeof *maps, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		maps = p == MAP_FAILED ? NULL : p;
	}
	if (maps && atomic_load(&n_maps) < MAP_SLOTS * 3 / 4) {
		uint32_t i = map_hash(addr);
		while (maps[i].addr && maps[i].addr != addr)
			i = (i + 1) & (MAP_SLOTS - 1);
		if (!maps[i].addr)
			atomic_fetch_add(&n_maps, 1);
		maps[i].addr = addr;
		maps[i].len = len;
		maps[i].name_len = from->name_len;
		memcpy(maps[i].name, from->name, from->name_len);
	} else if (maps) {
		pthread_mutex_unlock(&maps_lock);
		mt_warn_once(&maps_full_warned, "more than %d shared memory mappings: "
			     "munmap of the others is not recorded", MAP_SLOTS * 3 / 4);
		return;
	}
	pthread_mutex_unlock(&maps_lock);
}

/* Forget the mapping that starts at addr, copied into *out; 0, or -1 if none. */
static int map_take(uint64_t addr, struct shm_slot *out)
{
	int found = -1;

	pthread_mutex_lock(&maps_lock);
	if (maps) {
		uint32_t i = map_hash(addr);
		while (maps[i].addr && maps[i].addr != addr)
			i = (i + 1) & (MAP_SLOTS - 1);
		if (maps[i].addr) {
			*out = maps[i];
			found = 0;
			/* Backward-shift deletion keeps every probe chain whole. */
			uint32_t j = i;
			for (;;) {
				maps[i].addr = 0;
				for (;;) {
					j = (j + 1) & (MAP_SLOTS - 1);
					if (!maps[j].addr)
						goto done;
					uint32_t h = map_hash(maps[j].addr);
					if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
						break;
				}
				maps[i] = maps[j];
				i = j;
			}
done:
			atomic_fetch_sub(&n_maps, 1);
		}
	}
	pthread_mutex_unlock(&maps_lock);
	return found;
}

/* --- records ----------------------------------------------------------------- */

static void record(struct mt_thread *t, int op, uint64_t time, int fd, int flags, int err,
		   uint64_t size, uint64_t addr, const char *name, size_t name_len)
{
	uint32_t delta;

	if (!mt_writer_ready(t, time))
		return;
	uint32_t stack = mt_stack_capture(t);
	size_t bytes = (sizeof(struct mt_shm) + name_len + 7) & ~(size_t)7;
	struct mt_shm *r = mt_writer_reserve(t, bytes, time, &delta);
	if (!r)
		return;
	memset((char *)r + bytes - 8, 0, 8);    /* the name's padding */
	r->lh.size = (uint32_t)bytes;
	r->time_delta = delta;
	r->stack_id = stack;
	r->fd = fd;
	r->flags = flags;
	r->err = err;
	r->name_len = (uint32_t)name_len;
	r->size = size;
	r->addr = addr;
	memcpy(r + 1, name, name_len);
	mt_writer_commit(r, (struct mt_head){ MT_REC_SHM, 0, (uint8_t)op, 0 });
}

static size_t name_length(const char *name)
{
	return name ? strnlen(name, MAX_NAME) : 0;
}

/* --- the wrappers -------------------------------------------------------------- */

MT_EXPORT int shm_open(const char *name, int oflag, mode_t mode)
{
	int fd = real_shm_open ? real_shm_open(name, oflag, mode) : raw_shm_open(name, oflag, mode);
	int e = errno;
	struct mt_thread *t = mt_thread();

	if (t) {
		size_t n = name_length(name);
		if (fd >= 0)
			track(fd, name, n);
		record(t, MT_SHM_OPEN, mt_now(), fd, oflag, fd < 0 ? e : 0, 0, 0, name, n);
	}
	errno = e;
	return fd;
}

MT_EXPORT int shm_unlink(const char *name)
{
	struct mt_thread *t = mt_thread();
	uint64_t t0 = t ? mt_now() : 0;
	int r = real_shm_unlink ? real_shm_unlink(name) : raw_shm_unlink(name);
	int e = errno;

	if (t) {
		record(t, MT_SHM_UNLINK, t0, -1, 0, r < 0 ? e : 0, 0, 0, name, name_length(name));
		errno = e;
	}
	return r;
}

static int close_tracked(int fd)
{
	struct mt_thread *t = mt_thread();
	struct shm_slot s;

	if (!t || still_tracked(fd, &s) < 0) {
		untrack(fd);
		return call_close(fd);
	}
	uint64_t t0 = mt_now();
	untrack(fd);    /* before the close: the number may be reused at once */
	int r = call_close(fd);
	int e = errno;
	record(t, MT_SHM_CLOSE, t0, fd, 0, r < 0 ? e : 0, 0, 0, s.name, s.name_len);
	errno = e;
	return r;
}

MT_EXPORT int close(int fd)
{
	if (MT_LIKELY(!is_tracked(fd)))
		return call_close(fd);
	return close_tracked(fd);
}

/* The size an operation gave: ftruncate's length, fallocate's end. */
static void size_event(int fd, int op, int mode, int err, uint64_t size)
{
	struct mt_thread *t = mt_thread();
	struct shm_slot s;

	if (t && still_tracked(fd, &s) == 0)
		record(t, op, mt_now(), fd, mode, err, size, 0, s.name, s.name_len);
}

MT_EXPORT int ftruncate(int fd, off_t len)
{
	int r = call_ftruncate(fd, len);
	if (MT_LIKELY(!is_tracked(fd)))
		return r;
	int e = errno;
	size_event(fd, MT_SHM_TRUNCATE, 0, r < 0 ? e : 0, (uint64_t)len);
	errno = e;
	return r;
}

MT_EXPORT int ftruncate64(int fd, off64_t len)
{
	int r = real_ftruncate64 ? real_ftruncate64(fd, len) : (int)syscall(SYS_ftruncate, fd, len);
	if (MT_LIKELY(!is_tracked(fd)))
		return r;
	int e = errno;
	size_event(fd, MT_SHM_TRUNCATE, 0, r < 0 ? e : 0, (uint64_t)len);
	errno = e;
	return r;
}

MT_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	int r = call_fallocate(fd, mode, off, len);
	if (MT_LIKELY(!is_tracked(fd)))
		return r;
	int e = errno;
	size_event(fd, MT_SHM_FALLOCATE, mode, r < 0 ? e : 0, (uint64_t)off + (uint64_t)len);
	errno = e;
	return r;
}

MT_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	int r = real_fallocate64 ? real_fallocate64(fd, mode, off, len) : call_fallocate(fd, mode, off, len);
	if (MT_LIKELY(!is_tracked(fd)))
		return r;
	int e = errno;
	size_event(fd, MT_SHM_FALLOCATE, mode, r < 0 ? e : 0, (uint64_t)off + (uint64_t)len);
	errno = e;
	return r;
}

MT_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	int r = call_posix_fallocate(fd, off, len);
	if (MT_LIKELY(!is_tracked(fd)))
		return r;
	int e = errno;
	size_event(fd, MT_SHM_FALLOCATE, 0, r, (uint64_t)off + (uint64_t)len);
	errno = e;
	return r;
}

MT_EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len)
{
	int r = real_posix_fallocate64 ? real_posix_fallocate64(fd, off, len) : call_posix_fallocate(fd, off, len);
	if (MT_LIKELY(!is_tracked(fd)))
		return r;
	int e = errno;
	size_event(fd, MT_SHM_FALLOCATE, 0, r, (uint64_t)off + (uint64_t)len);
	errno = e;
	return r;
}

static void mmap_event(int fd, void *p, size_t len, int prot, int err)
{
	struct mt_thread *t = mt_thread();
	struct shm_slot s;

	if (!t || still_tracked(fd, &s) < 0)
		return;
	if (p != MAP_FAILED)
		map_add((uint64_t)(uintptr_t)p, len, &s);
	record(t, MT_SHM_MMAP, mt_now(), fd, prot, err,
	       len, p == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)p, s.name, s.name_len);
}

MT_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = call_mmap(addr, len, prot, flags, fd, off);
	if (MT_LIKELY(!is_tracked(fd)) || (flags & MAP_ANONYMOUS))
		return p;
	int e = errno;
	mmap_event(fd, p, len, prot, p == MAP_FAILED ? e : 0);
	errno = e;
	return p;
}

MT_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	void *p = real_mmap64 ? real_mmap64(addr, len, prot, flags, fd, off)
			      : call_mmap(addr, len, prot, flags, fd, off);
	if (MT_LIKELY(!is_tracked(fd)) || (flags & MAP_ANONYMOUS))
		return p;
	int e = errno;
	mmap_event(fd, p, len, prot, p == MAP_FAILED ? e : 0);
	errno = e;
	return p;
}

MT_EXPORT int munmap(void *addr, size_t len)
{
	struct mt_thread *t;
	struct shm_slot s;

	if (MT_LIKELY(!atomic_load_explicit(&n_maps, memory_order_relaxed)) ||
	    map_take((uint64_t)(uintptr_t)addr, &s) < 0)
		return call_munmap(addr, len);
	t = mt_thread();
	uint64_t t0 = t ? mt_now() : 0;
	int r = call_munmap(addr, len);
	int e = errno;
	if (t) {
		record(t, MT_SHM_MUNMAP, t0, -1, 0, r < 0 ? e : 0, len, (uint64_t)(uintptr_t)addr,
		       s.name, s.name_len);
		errno = e;
	}
	return r;
}
