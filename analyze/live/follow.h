/*
 * follow.h - the traces of a run that is still being written, followed as
 * they grow and fed to the analysis pass (model/analysis.h) in time order:
 * what `memtrace top` and the metrics of `memtrace run` show.
 *
 * A run is named by a trace (STEM.bin: its workers' STEM.*.bin beside it
 * with the same run id are followed as they appear) or by a folder (every
 * trace in it). Each poll reads only the bytes the files gained (pread, per
 * slab, from the end of the last complete record on), collects the new
 * state records and hands out those up to a watermark: the smallest "last
 * time seen" of the slabs still being written, so that a record read later
 * cannot go before one already fed. A slab stops holding the watermark back
 * when its thread went on to a later slab, when its process ended (its exit
 * record, or its pid is gone from this host), or when it was idle for
 * FOLLOW_GRACE_NS (a thread that waits writes nothing). A flush hands out
 * everything read.
 *
 * Functions return 0 / NULL / -1 with a message in err; they never print.
 */
#ifndef MEMTRACE_FOLLOW_H
#define MEMTRACE_FOLLOW_H

#include <stdint.h>

#include "model/analysis.h"
#include "model/shm.h"
#include "model/symbols.h"

#define FOLLOW_GRACE_NS 250000000ull

struct follow;

/* One followed process. */
struct follow_proc {
	const char *path;
	uint32_t pid;
	int32_t rank;               /* -1 when not known */
	int exited;                 /* its exit record was read */
	int gone;                   /* its pid is no longer on this host, without
	                               an exit record: killed */
	int damaged;                /* its trace is corrupt where `memtrace
	                               report` refuses it: nothing after the
	                               damage is fed (follow_warning) */
	int local;                  /* on this host: its pid can be looked at */
	uint64_t last_t;            /* run time of its last record fed */
	const char *cmdline;        /* first word of its command line, NUL-ended */
};

/*
 * Follows the run of trace path (dir NULL) or every trace in dir (path
 * NULL). A trace that does not exist yet is waited for by the polls. With
 * sym, stacks are resolved (follow_symbols) and a known caching
 * allocator's segments are told apart as the report does.
 */
struct follow *follow_open(const char *path, const char *dir, const struct sym_opts *sym,
			   char *err, size_t errlen);
void follow_close(struct follow *f);
/* Only traces with this MEMTRACE_RUN_ID (else: the named trace's, or the
   first one found). */
void follow_set_run_id(struct follow *f, uint64_t run_id);
/*
 * Reads what the traces gained and feeds the records up to the watermark
 * (all of them when flush) to the analysis. Returns the number of records
 * fed, or -1.
 */
long follow_poll(struct follow *f, int flush, char *err, size_t errlen);
/* The analysis of the records fed so far (NULL before the first process). */
struct analysis *follow_analysis(struct follow *f);
/* Symbols of its stacks (NULL when opened without sym). */
struct symbols *follow_symbols(struct follow *f);
int follow_nprocs(const struct follow *f);
const struct follow_proc *follow_proc(const struct follow *f, int i);
/* True when every process followed has ended and everything was fed. */
int follow_done(const struct follow *f);
/* Records fed so far; of them, those older than one fed before (late). */
void follow_counts(const struct follow *f, uint64_t *fed, uint64_t *late, uint64_t *bytes_read);
/* Traces of the run that the last poll could not open: no file descriptor
   left (RLIMIT_NOFILE, raised to its hard limit by follow_open). */
int follow_missed(const struct follow *f);
/*
 * The next warning about the traces not given yet, each once: the damage
 * `memtrace report` refuses a trace for (its records before it are fed,
 * none after), and the damage the reader loads with a warning (torn
 * records, a cut slab, slabs that repeat another), checked by the same
 * rules (trace-read.h) as the records are read. 0 with it in buf, -1 when
 * there is none.
 */
int follow_warning(struct follow *f, char *buf, size_t len);
/* The shared memory state of the records fed so far (shm.c). */
int follow_shm(struct follow *f, struct shm_result *out, char *err, size_t errlen);

#endif
