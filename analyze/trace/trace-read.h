/*
 * trace-read.h - the trace reader: opens one trace file written by
 * libmemtrace.so (include/memtrace/trace-format.h), checks it, and walks its
 * records in file order.
 *
 * trace_open() maps the file read-only and validates all of it before it
 * returns: the header, then every record of every slab, against the slab
 * bounds, the per-type minimum sizes and the string lengths (the second
 * half of the slabs on a second thread when the file has 2 MiB of them or
 * more: slabs decode on their own), and notes what a merge needs so that it
 * need not walk the file again (trace_slabs(), trace_long_records()). A file that
 * fails any check is refused with one message; a file that passes can be
 * walked with trace_next() any number of times, and every record it hands
 * out is safe to read through its struct (within rec->size bytes).
 *
 * Damage a killed process leaves is not an error: a torn record (a zero head
 * with bytes after it) ends its slab, and a file cut in the middle of a slab
 * loads what is before the cut. Both are counted and described by
 * trace_warning().
 *
 * Compact records (format 2) are handed out decoded, as the classic
 * record they stand for (an ALLOC, FREE, ALLOC_EX, FREE_EX or FW_EVENT
 * with its time_delta from the slab's time base cut to 32 bits: use
 * rec->time_ns): rec->p then points into the iterator that gave it, valid
 * until its next call, and moves with it: a copy of the iterator and the
 * record together makes the record's p valid again with trace_rec_rebind().
 *
 * Records come in file order: slab by slab, each slab in time order. Slabs
 * of different threads interleave, so a consumer that needs global time
 * order sorts by rec->time_ns.
 *
 * The file is mapped, not copied: it must not shrink while it is open (a
 * read past its new end would raise SIGBUS). Traces are read after their
 * process has exited, so this does not arise in practice. Once every slab
 * of a 1 MiB group has been left (by trace_next() or trace_slab_done()),
 * the reader lets go of the group's pages (they are read again from the
 * page cache when next touched), so resident memory follows the slabs
 * being read, not the trace's size. With more than 16 traces mapped at once
 * (a run of many ranks), each slab is let go of as soon as it is left, so
 * resident memory stays near one slab per trace.
 *
 * Functions return NULL / -1 on failure with a message in err (no
 * "memtrace: " prefix, no newline); they never print and never exit.
 */
#ifndef MEMTRACE_TRACE_READ_H
#define MEMTRACE_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/framework.h"
#include "memtrace/trace-format.h"

struct trace;

/* What trace_open() found while validating the file. */
struct trace_stats {
	uint64_t records;       /* valid records, unknown types included */
	uint64_t events;        /* ALLOC, FREE, ALLOC_EX and FREE_EX records */
	uint64_t fw_events;     /* FW_EVENT records (format 1.2) */
	uint64_t unknown;       /* records of a type this reader does not know */
	uint64_t slabs;         /* slabs with a valid slab header */
	uint64_t torn;          /* torn records skipped (at most one per slab) */
	int truncated;          /* the file length cuts a slab or the space
	                           before the first slab */
	uint64_t cut_bytes;     /* bytes of the cut slab that are present (or of
	                           the file, when it ends before slab 0) */
	uint64_t file_size;
	uint64_t shm;           /* SHM records */
	uint64_t overlapping;   /* slabs whose times overlap an earlier slab of
	                           the same thread (a thread fills one slab at
	                           a time: a slab copied twice, or spliced in) */
	uint32_t overlap_tid;   /* the first thread with such slabs */
	int64_t last_wall_ns;   /* the latest wall-clock time of a record (its
	                           time_ns + start_wall_ns - start_mono_ns, as
	                           a signed sum that wraps) or start_wall_ns,
	                           whichever is later */
};

/* One validated record. */
struct trace_rec {
	const void *p;          /* the record: cast to the struct of its type */
	uint32_t size;          /* whole record size in bytes (>= the struct) */
	uint8_t type;           /* enum mt_record_type, or an unknown type */
	uint32_t tid;           /* the thread that owns the slab */
	uint64_t time_ns;       /* absolute CLOCK_MONOTONIC ns: the slab's time
	                           base + time_delta; records without a time of
	                           their own (PROCESS, STACK, DRIVER, unknown)
	                           get the current time base; TIMEBASE its new
	                           base */
	uint64_t offset;        /* file offset of the record */
};

/*
 * One slab's records, decoded one at a time, resumable: for a reader that
 * follows a trace while it grows (memtrace top) as well as for the walk of
 * a whole file. The fields are private except slab_size and file_off,
 * which a caller that knows them sets after trace_slab_iter_init().
 */
struct trace_slab_iter {
	const unsigned char *slab;  /* the slab's first byte (its header) */
	size_t avail;               /* bytes of it readable now */
	size_t pos;                 /* offset of the next record; 0: the slab
	                               header is not read yet */
	size_t slab_size;           /* the slab's size when known: a record
	                               that runs past it is damage; 0: unknown,
	                               such a record is "not there yet" */
	uint64_t file_off;          /* file offset of the slab, for
	                               trace_rec.offset and messages (0) */
	uint32_t version;           /* the trace's major format version */
	uint32_t tid;
	uint64_t base;              /* current time base */
	int zero;                   /* the last 0 came from a zero head */
	int decoded;                /* the last record is in dec: a compact
	                               record decoded (format 2) */
	struct mt_compact_state c;  /* what compact records count from */
	union {
		struct mt_event_ex ev;
		struct mt_fw_event fw;
	} dec;
	char err[160];              /* after -1: what is wrong, without the
	                               file's name */
};

/* Walk position; initialize with trace_iter_init(), fields are private. */
struct trace_iter {
	const struct trace *t;
	uint64_t slab;          /* index of the next slab to enter */
	int in_slab;            /* si holds the slab before that one */
	struct trace_slab_iter si;
};

/*
 * What the reader's check of repeated slabs (trace_count_overlaps) knows of
 * one slab with records; trace_span_note() adds a record of it (first: its
 * slab's first).
 */
struct trace_span {
	uint32_t tid;               /* the slab header's */
	uint8_t fw;                 /* it holds FW_EVENT records: a framework's
	                               batch, of times before it was written */
	uint8_t handed;             /* an OWNER record handed its tail on */
	uint64_t min_t;             /* the earliest time of its records */
	uint64_t max_t;             /* the latest time of its first owner's
	                               records (the header's tid), before any
	                               OWNER; of all its records when fw */
	uint64_t sum;               /* trace_slab_sum() where
	                               trace_span_summed(), else 0 */
};
void trace_span_note(struct trace_span *s, const struct trace_rec *rec, int first);

/*
 * What trace_open() noted of each slab that has records, in file order, so
 * that a merge (stream.c) need not walk the file again to find where each
 * slab starts and which times it spans.
 */
struct trace_slab_info {
	struct trace_iter it;   /* positioned after first, as trace_next()
	                           leaves it */
	struct trace_rec first; /* the slab's first record (rebind it to it
	                           with trace_rec_rebind()) */
	uint64_t min_t, max_t;  /* the times of its records */
	uint64_t due_time;      /* its first record that orders state (an
	                           event, POOL, MEMINFO, SHM or FW_EVENT): its
	                           time, offset and type; due_offset UINT64_MAX
	                           when the slab has none */
	uint64_t due_offset;
	uint8_t due_type;
	struct trace_span span; /* for the check of repeated slabs */
};

/* A piece of a long record: not NUL-terminated, may hold any byte. */
struct trace_bytes {
	const char *p;
	size_t len;
};

/*
 * Opens and validates PATH. Returns NULL with a message in err on failure;
 * errno is then ENOENT or ENOTDIR when the file does not exist, EINVAL when
 * it is not a valid trace, or the error of open/fstat/mmap.
 */
struct trace *trace_open(const char *path, char *err, size_t errlen);
/*
 * The same on a trace already in memory (for tests and fuzzing): buf must be
 * 8-byte aligned and stay valid until trace_close(); name is used in
 * messages.
 */
struct trace *trace_open_buffer(const void *buf, size_t len, const char *name, char *err,
				size_t errlen);
void trace_close(struct trace *t);

const char *trace_path(const struct trace *t);
const struct mt_file_header *trace_header(const struct trace *t);
const struct trace_stats *trace_stats(const struct trace *t);
/* The first PROCESS record, or NULL when the trace has none. */
const struct mt_process *trace_process(const struct trace *t);

/* The slabs that have records, as trace_open() found them; *n their count. */
const struct trace_slab_info *trace_slabs(const struct trace *t, size_t *n);
/*
 * The MODULE, STACK or NOTE records of t in file order (other types: none);
 * *n their count. The last DRIVER record, or NULL.
 */
const void *const *trace_long_records(const struct trace *t, unsigned type, uint32_t *n);
const struct mt_driver *trace_driver(const struct trace *t);

/* How the trace's process ended: its EXIT record (format 1.1), if any. */
struct trace_exit {
	int recorded;           /* 1: the trace has an exit record (at most
	                           one: trace_open() refuses a second) */
	int promised;           /* 1: its writer writes one whenever the
	                           process ends by exit(), a return from main
	                           or _exit() (format minor >= 1), so with
	                           recorded 0 the process was killed (SIGKILL,
	                           a fatal signal, abort(), power loss) or
	                           exec()ed; 0: an older trace, nothing known */
	unsigned how;           /* enum mt_exit_how: MT_EXIT_EXIT (exit() or
	                           return from main), MT_EXIT__EXIT (_exit or
	                           _Exit), or a value this reader does not
	                           know; 0 when not recorded */
	int32_t status;         /* the value passed to exit()/_exit() or
	                           returned from main (the parent sees
	                           status & 0xff); 0 when not recorded */
	uint64_t time_ns;       /* absolute CLOCK_MONOTONIC ns, like
	                           trace_rec.time_ns; 0 when not recorded */
	uint32_t tid;           /* the thread that ended the process */
};
/* Fills e for t; never fails. */
void trace_exit(const struct trace *t, struct trace_exit *e);

/*
 * Warning number i (from 0) about damage the trace survived, e.g.
 * "'trace.bin': 1 torn record skipped (the process was killed while
 * writing)", "'trace.bin': holds no records: cut or never written". Each
 * says records are missing: `memtrace check` fails on any of them.
 * Returns 0 and fills buf, or -1 when there is no warning i.
 */
int trace_warning(const struct trace *t, unsigned i, char *buf, size_t len);

/*
 * The rules trace_open() checks across records and slabs, for a reader
 * that gets a trace piece by piece as it is written (the live follower,
 * analyze/live/follow.c), which must refuse and warn as trace_open() does.
 *
 * trace_stats_warning(): trace_warning() of the counts in s, of a trace
 * named path with that header and slab size.
 * trace_slab_torn(): the slab walker it stopped (0) at a zero head with
 * bytes after it: a record whose writer died before its head (torn).
 * trace_second_exit(), trace_second_fw_stack(): the message of a record
 * that makes the trace corrupt (a second EXIT; a second FW_STACK of an id),
 * at file offset off.
 * trace_slab_sum(): a checksum of a slab's bytes up to the end of its
 * records (of which avail can be read), for trace_count_overlaps().
 * trace_span_summed(): whether the check tells copies of the slab by its
 * bytes (its span's sum is to be set): a framework's batch, or a slab whose
 * first owner's records all have one time.
 * trace_count_overlaps(): of v[0..n), one per slab with records, how
 * many repeat an earlier slab of the same thread (sorts v; *tid: the
 * first such thread; see count_overlaps() in trace-read.c for the rule).
 */
int trace_stats_warning(const char *path, const struct trace_stats *s, uint32_t header_size,
			uint32_t slab_size, unsigned i, char *buf, size_t len);
int trace_slab_torn(const struct trace_slab_iter *si);
void trace_second_exit(char *err, size_t errlen, const char *path, uint64_t off);
void trace_second_fw_stack(char *err, size_t errlen, const char *path, uint64_t off, uint32_t id);
uint64_t trace_slab_sum(const void *slab, size_t avail, uint32_t version_major);
int trace_span_summed(const struct trace_span *s);
uint64_t trace_count_overlaps(struct trace_span *v, size_t n, uint32_t *tid);

void trace_iter_init(struct trace_iter *it, const struct trace *t);
/* Fills rec with the next record: returns 1, or 0 at the end. */
int trace_next(struct trace_iter *it, struct trace_rec *rec);
/*
 * The same, but returns 0 at the end of the slab of the record trace_next()
 * last gave it, without reading the next slab: for a cursor that owns one
 * slab (stream.c). Such a cursor, or a copy of it, may look ahead; the one
 * that is done with the slab says so with trace_slab_done() (rec: any
 * record of the slab), which lets it go as a walk of the file would.
 */
int trace_next_in_slab(struct trace_iter *it, struct trace_rec *rec);
void trace_slab_done(const struct trace *t, const struct trace_rec *rec);
/*
 * rec is the last record it gave, both copied elsewhere since (a cursor
 * that moved): points rec->p at its decoded copy inside it again, if the
 * record is one; records in the file are left as they are.
 */
void trace_rec_rebind(struct trace_rec *rec, const struct trace_iter *it);

/*
 * The slab walker. slab points at a slab's first byte (its struct
 * mt_slab_header), of which avail bytes can be read now; version_major is
 * the trace header's version. trace_slab_iter_next() fills rec (offset is
 * file_off + the record's offset in the slab) and returns 1; 0 when no
 * complete record is there now: the slab header or the next record's head
 * is not published (a zero head) or the record runs past avail, so it may
 * appear later (call again after trace_slab_iter_more() raised avail); -1
 * when the slab is damaged, with a message in it->err. Every record handed
 * out was checked as trace_open() checks it. Heads and the slab magic are
 * read with acquire loads, so a slab another process is writing (the
 * recorder's MAP_SHARED file) can be followed as it grows.
 */
void trace_slab_iter_init(struct trace_slab_iter *it, const void *slab, size_t avail,
			  uint32_t version_major);
int trace_slab_iter_next(struct trace_slab_iter *it, struct trace_rec *rec);
/* The same for a record trace_slab_iter_next() last gave it. */
void trace_slab_rec_rebind(struct trace_rec *rec, const struct trace_slab_iter *it);
void trace_slab_iter_more(struct trace_slab_iter *it, size_t avail);

/* The variable parts of long records handed out by trace_next(). */
void trace_process_strings(const struct mt_process *p, struct trace_bytes *hostname,
			   struct trace_bytes *cmdline, struct trace_bytes *exe);
void trace_module_strings(const struct mt_module *m, struct trace_bytes *build_id,
			  struct trace_bytes *path);
struct trace_bytes trace_note_text(const struct mt_note *n);
struct trace_bytes trace_shm_name(const struct mt_shm *s);
/* A code object's file name, qualified name (UTF-8) and raw line table. */
void trace_pycode_strings(const struct mt_pycode *c, struct trace_bytes *filename,
			  struct trace_bytes *name, struct trace_bytes *linetable);

/*
 * Framework records (format 1.2). trace_open() checked every FW_STACK (id
 * > 0, unique in the file, all nframes frames inside the record) and every
 * FW_INFO (its text inside the record).
 */
/* One frame of a framework stack: strings point into the trace, not
   NUL-terminated, may hold any byte. */
struct trace_fw_frame {
	const char *file;
	size_t file_len;
	const char *function;
	size_t function_len;
	uint32_t line;
};
/* The FW_STACK record with that id, or NULL (no such record, or id 0). */
const struct mt_fw_stack *trace_fw_stack(const struct trace *t, uint32_t id);
/*
 * Fills out[0..] with the frames of s, innermost first, at most max of
 * them; returns how many the stack has (s->nframes), which may be more
 * than max: call again with a larger out to get them all.
 */
uint32_t trace_fw_frames(const struct mt_fw_stack *s, struct trace_fw_frame *out, uint32_t max);
/* The same for the FW stack id of t; 0 when t has no such stack. */
uint32_t trace_fw_stack_frames(const struct trace *t, uint32_t id, struct trace_fw_frame *out,
			       uint32_t max);
/* How many FW_INFO records t has. */
uint32_t trace_fw_ninfo(const struct trace *t);
/* FW_INFO number i (file order, from 0): its "key=value\n" text and its
   absolute CLOCK_MONOTONIC time (time_ns may be NULL); 0, or -1 when there
   is no record i. */
int trace_fw_info(const struct trace *t, uint32_t i, struct trace_bytes *text, uint64_t *time_ns);
/* The value of the next "KEY=value" line (key includes the '=') of an
   FW_INFO text from byte *at on, and *at past that line; p NULL when no
   line further on has it. */
struct trace_bytes trace_note_value(struct trace_bytes text, const char *key, size_t *at);
/* The text of an FW_INFO record handed out by trace_next(). */
struct trace_bytes trace_fw_info_text(const struct mt_fw_info *r);
/* "alloc", "free_requested", ... for an FW_EVENT head.a (enum mt_fw_action
   of framework.h), or NULL if unknown. */
const char *trace_fw_action_name(unsigned action);

/* "cudaMalloc", or NULL for an id this memtrace does not know. */
const char *trace_api_name(unsigned api);
/* "device", "vmm_phys", ... for kind & MT_KIND_MASK, or NULL if unknown. */
const char *trace_kind_name(unsigned kind);
/* "exit", "_exit" for an MT_REC_EXIT head.a, or NULL if unknown. */
const char *trace_exit_how_name(unsigned how);
/* "open", "truncate", ... for an MT_REC_SHM head.a, or NULL if unknown. */
const char *trace_shm_op_name(unsigned op);
/* "alloc", "process", ... or NULL for an unknown record type. */
const char *trace_type_name(unsigned type);

#endif
