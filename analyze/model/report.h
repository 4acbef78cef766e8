/*
 * report.h - the content of a report, shared by the text (report-text.c)
 * and JSON (report-json.c) forms: sites grouped by their resolved frames,
 * the lists of leak candidates, the POSIX shared memory of the run (shm.h),
 * and the formatting helpers both use.
 */
#ifndef MEMTRACE_REPORT_H
#define MEMTRACE_REPORT_H

#include <stdio.h>

#include "model/analysis.h"
#include "model/shm.h"
#include "model/symbols.h"

#define REP_FORMAT_VERSION 1
#define REP_TOP 10                  /* entries per list */

/* Allocations grouped by the frames of their stack. */
struct rep_entry {
	uint64_t bytes, count;
	int dev;                        /* device index, -1 pinned host */
	int proc;                       /* one of the processes (for the frames) */
	uint32_t stack;
	int nprocs;                     /* processes in the group */
	int caching;
	const struct sym_stack *st;
};

struct rep_list {
	struct rep_entry *v;
	int n;
	int total;                      /* groups before cutting to REP_TOP */
};

struct report {
	const struct analysis *a;
	struct symbols *sy;
	int *gdevs;                     /* gdev indexes in a->devs, by host, device */
	int ngdevs;
	struct rep_list *dev_sites;     /* per a->devs index: top sites at its peak */
	struct rep_list leaks_exit, leaks_growing, cache_exit;
	int caching_seen;
	const char *db_path;            /* NULL: none */
	struct shm_result shm;          /* /dev/shm segments (pipeline_run fills
	                                   it; all zero when not run) */
};

int report_build(struct report *r, const struct analysis *a, struct symbols *sy, char *err,
		 size_t errlen);
void report_free(struct report *r);

int report_text(const struct report *r, FILE *f);
int report_json(const struct report *r, FILE *f);

/* --- helpers ------------------------------------------------------------ */
/* "64.0 MiB", "3000 B" */
const char *rep_size(char *buf, size_t len, uint64_t bytes);
/* "+1.234 s", "+2.9 ms" */
const char *rep_time(char *buf, size_t len, uint64_t ns);
/* "1.234 s", "2.9 ms": a length of time */
const char *rep_duration(char *buf, size_t len, uint64_t ns);
/* "CUDA_ERROR_OUT_OF_MEMORY" / "cudaErrorMemoryAllocation", or NULL */
const char *rep_error_name(unsigned code, int runtime);
/* a JSON string, quoted; bytes that are not valid UTF-8 become \u00XX */
void rep_json_str(FILE *f, const char *s, size_t len);
/* text for a person: controls and invalid UTF-8 as \xNN */
void rep_text_str(FILE *f, const char *s, size_t len);
/* the device's name: "device 0", or "host:0" when the run spans hosts */
const char *rep_dev_name(const struct report *r, const struct an_dev *d, char *buf, size_t len);
/* the process's pid and command (arguments joined with spaces) */
uint32_t rep_pid(const struct analysis *a, int proc);
struct trace_bytes rep_command_arg(const struct analysis *a, int proc, int *argi);
/* the frame a person would look at first: the user's, else the first */
const struct sym_frame *rep_main_frame(const struct sym_stack *st);

#endif
