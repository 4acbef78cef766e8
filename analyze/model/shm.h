/*
 * shm.h - POSIX shared memory of a run: the /dev/shm segments its processes
 * made (shm_open), how big they grew, which were still there at the end,
 * computed from the MT_REC_SHM records of one or more traces.
 *
 * What a segment is, and the two PyTorch strategies it tells apart:
 * - created: a successful shm_open with O_CREAT of a name no traced process
 *   holds at that moment. An open of a name made elsewhere (no O_CREAT, not
 *   seen created) attaches to it and is counted apart ("attached").
 * - unlinked at once: its creator shm_unlinked it while the descriptor
 *   shm_open returned was still open (the file_descriptor strategy: create,
 *   size, map, unlink, keep the descriptor). Every other created segment is
 *   "named" (the file_system strategy: it lives under its name after its
 *   creator closed it, until someone unlinks it).
 * - present at exit: created and never unlinked by any traced process: the
 *   files left in /dev/shm.
 * - total size: the sum of the sizes (ftruncate length; fallocate end
 *   unless FALLOC_FL_KEEP_SIZE) of the segments that hold memory: those
 *   with a name, and unlinked ones still open or mapped by a traced process
 *   (a process's descriptors and mappings end with its last record). The
 *   peak is its highest value over the run, merged and per creating process.
 * Descriptors and mappings inherited over fork (no open or mmap in the
 * child's trace) are matched to their segment by name where a record needs
 * it, and hold no reference of their own.
 *
 * Functions return 0 / -1 (with a message in err, no newline); they never
 * print, except the renderers.
 */
#ifndef MEMTRACE_SHM_H
#define MEMTRACE_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace-read.h"

struct stream;

/* One MT_REC_SHM record, decoded (shm_op_from_rec). */
struct shm_op {
	int proc;                   /* index of its process, 0 .. nprocs-1 */
	uint64_t t;                 /* time; one clock for all processes */
	uint8_t op;                 /* enum mt_shm_op */
	int32_t fd, flags, err;
	uint64_t size, addr;
	uint32_t stack;
	const char *name;           /* not NUL-terminated; outlives the result */
	uint32_t name_len;
};

struct shm_seg {
	int proc;                   /* the process that created (or attached) it */
	uint32_t stack;             /* stack id of that shm_open in proc's trace */
	const char *name;
	uint32_t name_len;
	uint64_t size, max_size;    /* at the end, and the largest it had */
	uint64_t created_t;
	int attached;               /* made outside the traced processes */
	int unlinked, unlink_proc;
	uint64_t unlinked_t;
	int at_once;                /* unlinked by its creator while still open */
	/* private to shm.c */
	int fds, maps, creator_fd, creator_open, holds;
};

struct shm_totals {
	uint64_t created, named, at_once, attached;
	uint64_t present, present_bytes;    /* still in /dev/shm at the end */
	uint64_t peak, peak_t;              /* total size, and when (0: never) */
	uint64_t now;                       /* total size at the end */
};

struct shm_result {
	struct shm_seg *segs;       /* in creation order */
	uint32_t nsegs;
	int nprocs;
	uint32_t *pids;             /* [nprocs] */
	struct shm_totals all;
	struct shm_totals *per_proc;        /* [nprocs], by creating process */
	uint64_t ops;                       /* records analyzed */
	uint64_t failed[8];                 /* failed calls by enum mt_shm_op */
	uint64_t failed_nospc;              /* of them, ENOSPC (a full /dev/shm) */
	uint64_t unknown_unlinks;           /* unlink of a name never seen */
};

/* Decodes rec (an MT_REC_SHM record of trace_next) of process proc at time t. */
void shm_op_from_rec(const struct trace_rec *rec, int proc, uint64_t t, struct shm_op *out);

/*
 * Analyzes n records of nprocs processes (any order: they are sorted by
 * time, ties kept in the given order). pids[i] names process i; end[i] is
 * the time of its last record (its descriptors and mappings close then), or
 * NULL for "after its last shm record". ops is sorted in place.
 */
int shm_analyze(struct shm_result *out, struct shm_op *ops, size_t n, int nprocs,
		const uint32_t *pids, const uint64_t *end, char *err, size_t errlen);
/* The same over every MT_REC_SHM record of a stream (stream.h), run times. */
int shm_analyze_stream(struct shm_result *out, struct stream *s, char *err, size_t errlen);
void shm_result_free(struct shm_result *r);

/* Prints a stack of process proc, each line starting with indent; NULL
   prints "stack ID". */
typedef void (*shm_stack_fn)(void *ctx, FILE *f, int proc, uint32_t stack, const char *indent);

/* The report's section: nothing at all when no record was analyzed. */
void shm_render_text(FILE *f, const struct shm_result *r, shm_stack_fn stack, void *ctx);
/* A JSON object (no trailing newline), for the report's "shm" member. */
void shm_render_json(FILE *f, const struct shm_result *r);

#endif
