/*
 * sites.h - the sites of a run as every view shows them: the allocations
 * whose stacks resolve to the same frames, on one device (or in pinned host
 * memory), split by whether a caching allocator made them.
 *
 * The pass (account.c) counts per stack of one process on one device
 * (struct an_site); a site groups those that read the same, across
 * processes and across stacks that differ only in frames the report hides.
 * Its id is the report's merge key: the database's sites table, the JSON's
 * "site" fields and the text report all use it.
 */
#ifndef MEMTRACE_SITES_H
#define MEMTRACE_SITES_H

#include <stdint.h>

#include "model/analysis.h"
#include "model/symbols.h"

struct site {
	uint32_t id;                /* from 1, in the order of the run's first
	                               allocation at the site: stable for a trace */
	int dev;                    /* device index, -1 pinned host memory */
	int caching;                /* a known caching allocator's segments */
	int proc;                   /* the process and stack of its first */
	uint32_t stack;             /*   allocation: whose frames it shows */
	const struct sym_stack *st;
	char *key;                  /* the resolved frames: what groups it */
	int nprocs;                 /* processes that allocated there */
	uint64_t allocs, bytes;     /* over the run */
	uint64_t exit_bytes, exit_count;    /* left live, each process at its exit */
	int growing;                /* a stack of it passes the growth test */
	int interrupted;            /* some of exit_bytes belong to a process
	                               that did not exit cleanly */
	int name_frames;            /* frames of its name (rep_site_name): at
	                               least SITE_NAME_FRAMES, more when another
	                               site's read the same that far */
};

#define SITE_NAME_FRAMES 3          /* frames a site's name shows at least */
#define SITE_NAME_MAX 12            /* and at most */

struct sites {
	struct site *v;             /* v[id - 1] */
	uint32_t n;
	uint32_t *of;               /* per a->sites index: index into v */
};

/*
 * Groups every stack of the analysis into sites, resolving every stack.
 * Returns -1 with a message in err when out of memory.
 */
int sites_build(struct sites *out, const struct analysis *a, struct symbols *sy, char *err,
		size_t errlen);
void sites_free(struct sites *s);

/* The site of an_site index i. */
static inline const struct site *site_of(const struct sites *s, uint32_t i)
{
	return &s->v[s->of[i]];
}

#endif
